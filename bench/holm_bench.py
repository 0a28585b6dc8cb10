"""Benchmark: Holm's correction, biaskit's ``holm`` vs statsmodels' ``multipletests(p, method="holm")``.

Both give the same values to the bit (tests/evaluate/stats/test_significance.py). statsmodels' holm branch runs
``gc.collect()`` on every call, whose cost grows with the objects the process holds: a report (hundreds of
corrections) built in a process that has a model loaded spent most of its time there. The benchmark fills the
heap with ``--objects`` small containers (a stand-in for a loaded model and its tokenizer), then times
``--calls`` corrections of 12 p-values each way, side by side in one run.

Usage: python bench/holm_bench.py [--objects 2000000] [--calls 200]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=2_000_000)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    from statsmodels.stats.multitest import multipletests

    from biaskit.evaluate.stats.significance import holm

    heap = [{"i": i} for i in range(args.objects)]  # tracked containers: what gc.collect() walks
    p = np.random.default_rng(0).random(12)
    rows = []
    for name, fn in (("statsmodels multipletests", lambda: multipletests(p, method="holm")[1]), ("biaskit holm", lambda: holm(p))):
        t0 = time.perf_counter()
        for _ in range(args.calls):
            fn()
        rows.append((name, time.perf_counter() - t0))
    assert holm(p).tolist() == multipletests(p, method="holm")[1].tolist()
    print(f"{args.calls} Holm corrections of 12 p-values, {len(heap):,} objects on the heap")
    for name, secs in rows:
        print(f"  {name:<28} {secs:8.3f} s  ({1000 * secs / args.calls:.2f} ms per call)")


if __name__ == "__main__":
    main()
