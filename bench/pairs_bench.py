"""Benchmark: ``biaskit stats pairs`` (vectorised :func:`biaskit.evaluate.stats.pairs.pair_stats`) on a million pairs
vs a naive pandas loop (``groupby("pair_id")`` and a Python comparison per pair), time and peak memory.

The table is synthetic: ``--pairs`` pairs (two rows each, variant more/less, the 'less' row first in every third
pair), 9 bias types, a normal score per row and 1% ties. Both ways must give the same counts per bias type. Peak
memory is ``tracemalloc``'s peak of Python allocations (numpy and pandas report theirs to it) during a second call
(tracemalloc slows the call it watches, so the time is the first call's). The naive loop is about 1000x slower, so
it runs on ``--naive-pairs`` (default 100,000) pairs; its time grows linearly with the pairs.

Usage: python bench/pairs_bench.py [--pairs 1000000] [--naive-pairs 100000]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
import pyarrow as pa

TYPES = ("race-color", "gender", "socioeconomic", "nationality", "religion", "age", "sexual-orientation", "physical-appearance", "disability")


def make_table(n_pairs: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    more = rng.normal(size=n_pairs)
    less = np.where(rng.random(n_pairs) < 0.01, more, rng.normal(size=n_pairs))  # 1% ties
    bt = np.asarray(TYPES, dtype=object)[rng.integers(0, len(TYPES), n_pairs)]
    ids = np.char.add("p", np.arange(n_pairs).astype(str)).astype(object)
    flip = np.arange(n_pairs) % 3 == 0  # the 'less' row first in the table for these pairs
    first_var = np.where(flip, "less", "more").astype(object)
    second_var = np.where(flip, "more", "less").astype(object)
    s1, s2 = np.where(flip, less, more), np.where(flip, more, less)
    inter = lambda a, b: np.stack([a, b], axis=1).reshape(-1)  # noqa: E731
    return pa.table({"pair_id": inter(ids, ids), "variant": inter(first_var, second_var), "score": inter(s1, s2), "bias_type": inter(bt, bt)})


def naive(table: pa.Table):
    """The loop a user would write: one groupby over pairs, a Python comparison per pair, counts per bias type."""
    import pandas as pd

    df = table.to_pandas()
    rows = []
    for _, g in df.groupby("pair_id", sort=False):
        m = g.loc[g.variant == "more", "score"].iloc[0]
        ls = g.loc[g.variant == "less", "score"].iloc[0]
        rows.append((g.bias_type.iloc[0], m > ls, m == ls))
    res = pd.DataFrame(rows, columns=["bias_type", "higher", "tie"])
    return res.groupby("bias_type").agg(n_pairs=("higher", "size"), n_higher=("higher", "sum"), n_ties=("tie", "sum"))


def measured(fn, *args):
    """(result, seconds, peak bytes): timed in one call, the peak measured in a second (tracemalloc slows a call)."""
    t0 = time.perf_counter()
    out = fn(*args)
    secs = time.perf_counter() - t0
    tracemalloc.start()
    fn(*args)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, secs, peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1_000_000)
    ap.add_argument("--naive-pairs", type=int, default=100_000, help="pairs for the naive loop (0: skip it; it is about 1000x slower)")
    args = ap.parse_args()
    from biaskit.evaluate.stats.pairs import pair_stats

    table = make_table(args.pairs)
    res, secs, peak = measured(pair_stats, table, "score")
    print(f"stats pairs on {args.pairs:,} pairs ({table.num_rows:,} rows): {secs:.2f} s, peak {peak / 2**20:.0f} MiB")
    if args.naive_pairs:
        small = table.slice(0, 2 * args.naive_pairs)
        ref, nsecs, npeak = measured(naive, small)
        print(f"naive pandas groupby loop on {args.naive_pairs:,} pairs: {nsecs:.2f} s, peak {npeak / 2**20:.0f} MiB")
        mine = pair_stats(small, "score").set_index("bias_type").drop(index="all")
        for col in ("n_pairs", "n_higher", "n_ties"):
            assert mine[col].sort_index().tolist() == ref[col].sort_index().astype(int).tolist(), col
        print("  same n_pairs, n_higher and n_ties per bias type")
    print(res.to_string(index=False))


if __name__ == "__main__":
    main()
