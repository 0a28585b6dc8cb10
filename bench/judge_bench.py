"""Benchmark: texts per second of the `judge` metric with the packaged SmolLM2-135M-Instruct on CPU, side by side
with a plain transformers loop over the same texts.

    .venv/bin/python bench/judge_bench.py                  # 64 texts, sentiment task, batch sizes 1 and 8
    .venv/bin/python bench/judge_bench.py --n 256 --threads 2 --orders 2 --rounds 3

Scores short BOLD-like continuations with ``-p judge.model=smollm2-135m`` (one forward pass per text and
option order, ``label_scoring=first``) after a warm-up batch. The plain loop runs the same model object (the
weights biaskit loaded) on the same texts with transformers only: the sentiment instruction filled with
``str.replace``, ``apply_chat_template``, left padding, one forward pass per batch, the log-softmax of the last
position at the labels' first tokens. The two alternate ``--rounds`` times (the best round of each is kept, so
load from other jobs touches both alike) and the table gives texts/s of each and their ratio (judge / plain:
what the metric's bookkeeping costs), with the largest difference of their label probabilities. The model load
(GGUF dequantised once, then cached) is timed apart.
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


LABELS = ["positive", "neutral", "negative"]


def plain_loop(model, tok, instruction: str, texts: list[str], batch_size: int, orders: list[list[str]]) -> list[list[float]]:
    """The label probabilities (averaged over ``orders``) with transformers only: no biaskit code."""
    import torch

    first = [tok(lab, add_special_tokens=False)["input_ids"][0] for lab in LABELS]
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    out: list[list[float]] = []
    for start in range(0, len(texts), batch_size):
        chunk = texts[start : start + batch_size]
        acc = torch.zeros((len(chunk), len(LABELS)), dtype=torch.float64)
        for order in orders:
            prompts = [
                tok.apply_chat_template(
                    [{"role": "user", "content": instruction.replace("{labels}", ", ".join(order)).replace("{text}", t)}],
                    tokenize=False,
                    add_generation_prompt=True,
                )
                for t in chunk
            ]
            ids = [tok(p, add_special_tokens=False)["input_ids"] for p in prompts]
            width = max(len(x) for x in ids)
            inp = torch.tensor([[pad] * (width - len(x)) + x for x in ids])
            att = torch.tensor([[0] * (width - len(x)) + [1] * len(x) for x in ids])
            pos = (att.cumsum(-1) - 1).clamp(min=0)
            with torch.inference_mode():
                last = model(input_ids=inp, attention_mask=att, position_ids=pos).logits[:, -1, :].double()
            acc += torch.softmax(torch.log_softmax(last, -1)[:, first], -1)
        out.extend((acc / len(orders)).tolist())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--orders", type=int, default=1)
    ap.add_argument("--batch-sizes", default="1,8")
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds of the judge and the plain loop (best kept)")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    import yaml

    from biaskit.evaluate.metrics import make_metric

    torch.set_num_threads(args.threads)
    texts = [SEEDS[i % len(SEEDS)] + f" ({i})" for i in range(args.n)]
    instruction = yaml.safe_load((ROOT / "src" / "biaskit" / "data" / "judge" / "sentiment.yaml").read_text())["instruction"]
    rows = []
    for bs in [int(x) for x in args.batch_sizes.split(",")]:
        m = make_metric("judge", "text", {"model": "smollm2-135m", "batch_size": bs, "orders": args.orders, "device": "cpu"})
        t0 = time.perf_counter()
        m.setup()
        load_s = time.perf_counter() - t0
        lm = m.judge.lm  # the loaded model and tokenizer, run by the plain loop too
        orders = [list(o) for o in m.orders]
        m.score({"text": texts[:bs]})  # warm-up
        plain_loop(lm.model, lm.tokenizer, instruction, texts[:bs], bs, orders)
        judge_s, plain_s = [], []
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            out = m.score({"text": texts})
            judge_s.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            ref = plain_loop(lm.model, lm.tokenizer, instruction, texts, bs, orders)
            plain_s.append(time.perf_counter() - t0)
        errs = sum(e is not None for e in out["judge_error"])
        got = [[out[f"judge_p_{lab}"][i] for lab in LABELS] for i in range(len(texts))]
        diff = max(abs(a - b) for g, r in zip(got, ref) for a, b in zip(g, r))
        tin = sum(x or 0 for x in out["judge_tokens_in"]) / len(texts)
        js, ps = min(judge_s), min(plain_s)
        rows.append((bs, args.orders, len(texts), len(texts) / js, len(texts) / ps, ps / js, diff, tin, load_s, errs))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"torch threads: {args.threads}; CPU: {os.cpu_count()} logical cores; load average at the end: {load:.1f}")
    print(
        "| batch size | orders | texts | judge texts/s | plain loop texts/s | ratio judge/plain | max p difference | tokens in per text | model load s | errors |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for bs, o, n, jt, pt, ratio, diff, tin, load_s, errs in rows:
        print(f"| {bs} | {o} | {n} | {jt:.1f} | {pt:.1f} | {ratio:.2f} | {diff:.1e} | {tin:.0f} | {load_s:.1f} | {errs} |")


if __name__ == "__main__":
    main()
