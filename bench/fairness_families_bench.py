"""Power and family-wise false gaps of the report's metric-fairness families (primary: accuracy; secondary: the other
rates), by simulation through the report's own code (``annotate.groupvalidity.group_rows`` then
``report.sections.fairness.fairness_findings``).

7 groups x 40 items, binary labels, the metric right with probability 0.9 (one group at 0.6 in the planted rounds):

    python bench/fairness_families_bench.py [ROUNDS] [SEED]
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from biaskit.annotate.groupvalidity import GroupedItems, RowKey, group_rows
from biaskit.bootstrap import BootSpec
from biaskit.evaluate.report.sections.fairness import fairness_findings

GROUPS = [f"g{i}" for i in range(7)]
LABELS = np.array(["negative", "positive"])


def one_round(rng, planted: bool, n: int = 40) -> list[dict]:
    """The significant findings of one simulated round."""
    yt, yp, gr = [], [], []
    for g in GROUPS:
        acc = 0.6 if planted and g == "g0" else 0.9
        t = rng.integers(0, 2, n)
        p = np.where(rng.random(n) < acc, t, 1 - t)
        yt += list(LABELS[t])
        yp += list(LABELS[p])
        gr += [g] * n
    rows = group_rows(GroupedItems(yt, yp, gr), list(LABELS), key=RowKey("r", "sentiment", "m", "group"), boot=BootSpec(n_boot=0, seed=0))
    return [f for f in fairness_findings(pd.DataFrame(rows), 0.05) if f["significant"]]


def main(rounds: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    t0 = time.time()
    hit = sum(any(f["rate"] == "accuracy" and "g0" in (f["group"], f["group_b"]) for f in one_round(rng, True)) for _ in range(rounds))
    false_any = sum(bool(one_round(rng, False)) for _ in range(rounds))
    print(f"rounds {rounds}: power (planted 30-point accuracy gap, primary family) {hit / rounds:.3f}; ")
    print(f"family-wise false gaps over both families {false_any / rounds:.3f}; {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300, int(sys.argv[2]) if len(sys.argv) > 2 else 1)
