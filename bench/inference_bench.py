"""Benchmark: what the inference layer's intervals and families hold, by simulation (docs/report.md, "Inference").

1. Coverage of 95% Wilson intervals of a share (per group) and of Newcombe's hybrid score interval of a
   difference of two shares, next to the percentile bootstrap the report used before (which gives [1, 1] for an
   all-correct group), over a grid of group sizes and true shares (``--draws`` datasets per cell).
2. The family-wise false-positive rate of the metric-fairness families (7 groups x 100 items, binary labels, the
   metric right 90% of the time everywhere: 21 pairs x 5 rates, Fisher exact tests, Holm within the primary family,
   accuracy, and the secondary one, the other rates; a round counts when either has a finding) over ``--rounds`` A/A
   rounds, and the power to find one group planted at 60%; beside it, the permutation test with 1,000
   resamples that the section used before (its floor 1/1001, times the family size, is above alpha).

Usage: python bench/inference_bench.py [--draws 20000] [--rounds 1000]
"""

from __future__ import annotations

import argparse
import math

import numpy as np


def _coverage(draws: int, rng) -> list[tuple]:
    from biaskit.evaluate.stats import inference as inf

    rows = []
    for n in (8, 20, 50, 200):
        for p in (0.5, 0.9, 0.98):
            x = rng.binomial(n, p, draws)
            lo, hi = inf.proportion_intervals(x, np.full_like(x, n))
            wil = ((lo <= p) & (p <= hi)).mean()
            # the percentile bootstrap of a share: Binomial(n, x/n) resamples, 1,000 of them (a subsample of draws)
            k = min(draws, 2000)
            boot = rng.binomial(n, (x[:k] / n)[:, None], size=(k, 1000)) / n
            blo, bhi = np.quantile(boot, [0.025, 0.975], axis=1)
            pb = ((blo <= p) & (p <= bhi)).mean()
            x2 = rng.binomial(n, max(0.0, p - 0.1), draws)
            dlo, dhi = inf.newcombe_interval(x, np.full_like(x, n), x2, np.full_like(x2, n))
            d = p - max(0.0, p - 0.1)
            new = ((dlo <= d) & (d <= dhi)).mean()
            rows.append((n, p, wil, pb, new))
    return rows


def _fairness_round(acc, n, rng):
    from biaskit.annotate.groupvalidity import GroupedItems, RowKey, group_rows
    from biaskit.bootstrap import BootSpec

    yt = rng.choice(["negative", "positive"], size=(len(acc), n))
    right = rng.random((len(acc), n)) < np.array(acc)[:, None]
    yp = np.where(right, yt, np.where(yt == "negative", "positive", "negative"))
    grp = np.repeat([f"g{i}" for i in range(len(acc))], n)
    rows = group_rows(
        GroupedItems(list(yt.ravel()), list(yp.ravel()), list(grp)), ["negative", "positive"], key=RowKey("r", "t", "m", "g"), boot=BootSpec(n_boot=0)
    )
    return [r for r in rows if r["measure"].startswith("diff_") and r["p_holm"] is not None]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=1000)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print("| n per group | true share | Wilson coverage | percentile bootstrap coverage | Newcombe coverage (gap 0.1) |")
    print("|---|---|---|---|---|")
    for n, p, w, b, c in _coverage(args.draws, rng):
        print(f"| {n} | {p:.2f} | {w:.3f} | {b:.3f} | {c:.3f} |")
    fp = power = 0
    fam = 0
    for _ in range(args.rounds):
        d = _fairness_round([0.9] * 7, 100, rng)
        fam = len(d)
        fp += any(r["p_holm"] < 0.05 for r in d)
        d = _fairness_round([0.6] + [0.9] * 6, 100, rng)
        power += any(r["p_holm"] < 0.05 and "g0" in (r["group_a"], r["group_b"]) for r in d)
    se = math.sqrt(0.05 * 0.95 / args.rounds)
    print()
    print(f"metric-fairness families, {fam} tests (7 groups x 100 items, 21 pairs x 5 rates), Fisher exact + Holm per family, {args.rounds} rounds:")
    print(f"  family-wise false-positive rate (A/A, all at 90%): {fp / args.rounds:.3f} (alpha 0.05, Monte Carlo SE {se:.3f})")
    print(f"  power to flag the group planted at 60%: {power / args.rounds:.3f}")
    print(f"  the old permutation test, 1,000 resamples: smallest Holm p = {fam} / 1001 = {fam / 1001:.3f} (> 0.05: it could never flag)")


if __name__ == "__main__":
    main()
