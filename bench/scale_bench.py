"""Benchmark: the local engine vs ``--engine ray`` with 1 and 2 actors on this machine, same table.

Work: ``biaskit.evaluate.runners.likelihood`` (SmolLM2-135M, the offline asset, CPU) over HolisticBias-style
sentences. Each Ray run starts its own local Ray (no ``--ray-address``), as a user without a cluster would, so
its wall time holds Ray's fixed cost: starting Ray, one remote call that describes the model, and each actor
importing torch and loading the model. That fixed cost is measured with a 2-row run of the same engine and
taken off to give the steady rows/s. All runs happen side by side in one invocation; compare ratios, not
absolute numbers, on a shared machine.

Run: ``HF_HUB_OFFLINE=1 python bench/scale_bench.py [--rows 192] [--batch-size 16]``
Prints one Markdown table (copied into docs/scale.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
# a Ray started here binds the loopback address only (read when ray is imported)
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

DESCRIPTORS = [
    "deaf",
    "blind",
    "tall",
    "short",
    "old",
    "young",
    "Buddhist",
    "Catholic",
    "Jewish",
    "Muslim",
    "queer",
    "straight",
    "working-class",
    "wealthy",
    "Latina",
    "Asian",
]
NOUNS = ["woman", "man", "person"]
TEMPLATES = ["I'm a {} {}.", "Hi! I am a {} {}.", "I love being a {} {}.", "What do you think about {} {}s?"]


def sentences(n: int):
    import pyarrow as pa

    base = [t.format(d, nn) for t in TEMPLATES for d in DESCRIPTORS for nn in NOUNS]
    texts = [base[i % len(base)] for i in range(n)]
    return pa.table({"prompt_id": [f"s{i}" for i in range(n)], "text": texts, "source": ["bench"] * n, "language": ["en"] * n})


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--rows", type=int, default=192)
    ap.add_argument("--batch-size", type=int, default=16, help="model batch size and Ray batch size")
    args = ap.parse_args()

    import torch

    from biaskit.evaluate.runners import likelihood
    from biaskit.pool import EngineSpec

    table, tiny = sentences(args.rows), sentences(2)
    run = lambda t, eng: likelihood(t, model=args.model, batch_size=args.batch_size, device="cpu", progress=False, engine=eng)  # noqa: E731
    engines = [
        ("local", "local", None),
        ("ray, 1 actor", EngineSpec(name="ray", actors=1, batch_size=args.batch_size), 1),
        ("ray, 2 actors", EngineSpec(name="ray", actors=2, batch_size=args.batch_size), 2),
    ]
    rows = []
    ref = None
    from biaskit.evaluate.runners import hf

    for label, eng, _ in engines:
        # every run loads the model afresh (the local engine would otherwise reuse this process's copy)
        hf._CACHE.clear()
        fixed, _ = timed(lambda: run(tiny, eng))
        hf._CACHE.clear()
        wall, out = timed(lambda: run(table, eng))
        nll = out.column("nll_mean").to_pylist()
        ref = ref or nll
        diff = max(abs(a - b) for a, b in zip(ref, nll))
        steady = args.rows / max(wall - fixed, 1e-9)
        rows.append((label, wall, fixed, args.rows / wall, steady, diff))
        print(f"# {label}: {wall:.1f}s for {args.rows} rows (2-row run {fixed:.1f}s)", file=sys.stderr, flush=True)
    base = {r[0]: r for r in rows}
    print(
        f"\nlikelihood, {args.model}, {args.rows} sentences, batch {args.batch_size}, {os.cpu_count()} CPUs, "
        f"torch threads in this process {torch.get_num_threads()} (a Ray actor with 1 CPU gets 1), machine shared/loaded\n"
    )
    print("| engine | wall s | fixed s (2-row run) | rows/s (wall) | rows/s (after fixed) | vs local (after fixed) | max nll diff vs local |")
    print("|---|---|---|---|---|---|---|")
    for label, wall, fixed, rps, steady, diff in rows:
        print(f"| {label} | {wall:.1f} | {fixed:.1f} | {rps:.1f} | {steady:.1f} | {steady / base['local'][4]:.2f}x | {diff:.1e} |")
    r1, r2 = base["ray, 1 actor"][4], base["ray, 2 actors"][4]
    print(
        f"\nscaling 1 -> 2 actors (after fixed cost): {r2 / r1:.2f}x; Ray fixed cost over local: "
        f"{base['ray, 1 actor'][2] - base['local'][2]:.1f}s (1 actor), {base['ray, 2 actors'][2] - base['local'][2]:.1f}s (2 actors)"
    )


if __name__ == "__main__":
    main()
