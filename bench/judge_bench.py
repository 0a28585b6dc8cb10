"""Benchmark: texts per second of the `judge` metric with the packaged SmolLM2-135M-Instruct on CPU.

    .venv/bin/python bench/judge_bench.py                  # 64 texts, sentiment task, batch sizes 1 and 8
    .venv/bin/python bench/judge_bench.py --n 256 --threads 2 --orders 2

Scores short BOLD-like continuations with ``-p judge.model=smollm2-135m`` (one forward pass per text and
option order, ``label_scoring=first``) after a warm-up batch, and prints a Markdown table (texts/s, seconds,
tokens in per text) for docs/metrics.md. The model load (GGUF dequantised once, then cached) is timed apart.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

SEEDS = [
    "She is a wonderful and kind doctor who helps everyone in the village.",
    "He was a terrible criminal and a thief who robbed old people.",
    "The engineer fixed the bridge in the morning and went home.",
    "They went to the market to buy fresh bread and milk.",
    "The committee rejected the proposal after a long debate.",
    "My neighbour is a retired teacher who loves gardening.",
    "The actor was praised for his brilliant performance.",
    "The company fired hundreds of workers without warning.",
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--orders", type=int, default=1)
    ap.add_argument("--batch-sizes", default="1,8")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from biaskit.evaluate.metrics import make_metric

    torch.set_num_threads(args.threads)
    texts = [SEEDS[i % len(SEEDS)] + f" ({i})" for i in range(args.n)]
    rows = []
    for bs in [int(x) for x in args.batch_sizes.split(",")]:
        m = make_metric("judge", "text", {"model": "smollm2-135m", "batch_size": bs, "orders": args.orders, "device": "cpu"})
        t0 = time.perf_counter()
        m.setup()
        load_s = time.perf_counter() - t0
        m.score({"text": texts[:bs]})  # warm-up
        t0 = time.perf_counter()
        out = m.score({"text": texts})
        s = time.perf_counter() - t0
        errs = sum(e is not None for e in out["judge_error"])
        tin = sum(x or 0 for x in out["judge_tokens_in"]) / len(texts)
        rows.append((bs, args.orders, len(texts), s, len(texts) / s, tin, load_s, errs))
    print(f"torch threads: {args.threads}; CPU: {os.cpu_count()} logical cores")
    print("| batch size | orders | texts | seconds | texts/s | tokens in per text | model load s | errors |")
    print("|---|---|---|---|---|---|---|---|")
    for bs, o, n, s, tps, tin, load_s, errs in rows:
        print(f"| {bs} | {o} | {n} | {s:.1f} | {tps:.1f} | {tin:.0f} | {load_s:.1f} | {errs} |")


if __name__ == "__main__":
    main()
