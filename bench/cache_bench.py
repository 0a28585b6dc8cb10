"""Benchmark: a cached re-run against the first run (``--cache DIR``), side by side in one process.

Same model (SmolLM2-135M, the offline asset, fp32 on the CPU), same prompts:

* generate: a run without the cache, the first run with an empty cache (every unit a miss: model calls plus
  the cache writes), then the same run again (every unit a hit); tables compared;
* likelihood: the same three runs on HolisticBias-style sentences.

The model is loaded once before the timed runs (the process keeps it), so the times are the run's own: for the
cached re-run that is reading the prompts, hashing the keys, one SQLite lookup per batch and writing the table.
The first cached run also pays for hashing the weight files once (540 MB; remembered afterwards).

Run: ``HF_HUB_OFFLINE=1 python bench/cache_bench.py [--prompts 24] [--max-new-tokens 20] [--sentences 96]``
Numbers for this machine are in docs/runners.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runners_bench import DESCRIPTORS, PROFESSIONS, STEMS  # noqa: E402


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--prompts", type=int, default=24)
    ap.add_argument("--max-new-tokens", type=int, default=20)
    ap.add_argument("--sentences", type=int, default=96)
    args = ap.parse_args()

    import pyarrow as pa

    from biaskit.evaluate.runners import generate, likelihood
    from biaskit.evaluate.runners.hf import load

    prompts = [s.format(p) for s in STEMS for p in PROFESSIONS][: args.prompts]
    sents = [f"I am a {d} {p}." for d in DESCRIPTORS for p in PROFESSIONS][: args.sentences]
    ptab = pa.table({"prompt_id": [f"g{i}" for i in range(len(prompts))], "text": prompts})
    stab = pa.table({"prompt_id": [f"s{i}" for i in range(len(sents))], "text": sents})
    load(args.model, task="causal", device="cpu")  # once, outside the timings
    rows = []
    with tempfile.TemporaryDirectory() as d:
        cache = os.path.join(d, "cache")
        for kind, fn, tab, unit in (
            (
                "generate",
                lambda **k: generate(ptab, model=args.model, max_new_tokens=args.max_new_tokens, device="cpu", progress=False, **k),
                ptab,
                "prompts",
            ),
            ("likelihood", lambda **k: likelihood(stab, model=args.model, device="cpu", progress=False, **k), stab, "sentences"),
        ):
            plain, t_plain = _timed(lambda: fn())
            first, t_first = _timed(lambda: fn(cache=cache))
            second, t_second = _timed(lambda: fn(cache=cache))
            facts = [json.loads(t.schema.metadata[b"biaskit_manifest"])["cache"] for t in (first, second)]
            same = second.replace_schema_metadata(None).equals(first.replace_schema_metadata(None))
            same_plain = plain.replace_schema_metadata(None).equals(first.replace_schema_metadata(None))
            n = tab.num_rows
            rows.append((kind, "no cache", t_plain, n / t_plain, unit, "-", "-"))
            rows.append(
                (
                    kind,
                    "first run, empty cache",
                    t_first,
                    n / t_first,
                    unit,
                    f"{facts[0]['hits']}/{facts[0]['misses']}",
                    f"equal to no cache: {same_plain}",
                )
            )
            rows.append(
                (kind, "re-run from the cache", t_second, n / t_second, unit, f"{facts[1]['hits']}/{facts[1]['misses']}", f"equal to first: {same}")
            )
    print(f"load average at the end: {os.getloadavg()}")
    print("| run | | time | throughput | hits/misses | table |")
    print("|---|---|---|---|---|---|")
    for kind, what, t, rate, unit, hm, eq in rows:
        print(f"| {kind} | {what} | {t:.2f} s | {rate:.1f} {unit}/s | {hm} | {eq} |")


if __name__ == "__main__":
    main()
