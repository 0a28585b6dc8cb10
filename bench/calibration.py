"""Calibration of the inference layer: false-claim rate under the null and coverage, over a grid of designs.

Group-gap part. Two groups with the same true share of a label (no gap), each of ``texts`` texts spread evenly
over ``pages`` pages; each page has its own rate from a Beta distribution with mean ``base`` and intra-class
correlation ``icc`` (a + b = (1 - icc) / icc; icc 0: every page at ``base``). Each simulated set goes through the
layer's own code, :func:`biaskit.evaluate.stats.significance.pairwise_proportion_tests` with ``cluster="page_id"``,
which picks the method (CR1, CR2 with Bell-McCaffrey df, or nan with a reason). Per cell: the false-claim rate
(p < 0.05; a nan p is no claim), the coverage of the true gap 0 by the 95% interval among the sets that got one,
the share of sets with no test ("not enough data") and the method used most.

PPI part. One group of 1,000 texts with a true share ``base``; the metric finds 70% of the label with 5% false
alarms; ``labelled`` texts get a human label (a uniform sample). Each set goes through
:func:`biaskit.evaluate.stats.ppi.ppi_shares`. Per cell: coverage of ``base`` by the share_ppi interval among the sets
that got one, and the share of sets with nan ("not enough data").

Usage: python bench/calibration.py [--sims 200] [--seed 0] [--grid full|docs|small]
(``docs``: the grid of the table in docs/statistics.md; ``small``: that of the slow test,
tests/evaluate/stats/test_calibration.py)
"""

from __future__ import annotations

import argparse
import itertools
import math
from collections import Counter

import numpy as np
import pandas as pd

from biaskit.evaluate.report.tables import markdown_table
from biaskit.evaluate.stats.ppi import ppi_shares
from biaskit.evaluate.stats.significance import pairwise_proportion_tests

GRID = {"texts": (5, 20, 50, 200), "pages": (2, 4, 10, 50), "icc": (0.0, 0.1, 0.3), "base": (0.01, 0.1, 0.5)}
PPI_GRID = {"base": (0.01, 0.1, 0.5), "labelled": (10, 50, 200, 500)}
#: the grid of the table in docs/statistics.md (the full GRID takes hours of CPU on a shared machine)
DOCS = {"texts": (20, 200), "pages": (2, 4, 50), "icc": (0.3,), "base": (0.1, 0.5)}
SMALL = {"texts": (20, 200), "pages": (4,), "icc": (0.1,), "base": (0.1, 0.5)}
SMALL_PPI = {"base": (0.03, 0.3), "labelled": (20, 200)}


def _page_rates(rng, pages: int, base: float, icc: float) -> np.ndarray:
    if icc <= 0:
        return np.full(pages, base)
    s = (1.0 - icc) / icc
    return rng.beta(base * s, (1.0 - base) * s, size=pages)


def gap_cell(rng, texts: int, pages: int, icc: float, base: float, sims: int) -> dict:
    """One cell of the group-gap grid (see the module docstring)."""
    per = np.full(pages, texts // pages)
    per[: texts % pages] += 1
    page = np.concatenate([np.repeat(np.arange(pages), per), pages + np.repeat(np.arange(pages), per)])
    group = np.where(page < pages, "a", "b")
    claims = covered = with_ci = untested = 0
    methods: Counter = Counter()
    for _ in range(sims):
        rates = np.concatenate([_page_rates(rng, pages, base, icc), _page_rates(rng, pages, base, icc)])
        y = rng.random(page.size) < rates[page]
        df = pd.DataFrame({"group": group, "page_id": page, "vader_label": np.where(y, "positive", "negative")})
        row = pairwise_proportion_tests(df, "group", "vader_label", "positive", cluster="page_id").iloc[0]
        methods[row["method"]] += 1
        p = row["p_value"]
        if p == p:
            claims += p < 0.05
        else:
            untested += 1
        if row["ci_low"] == row["ci_low"]:
            with_ci += 1
            covered += row["ci_low"] <= 0.0 <= row["ci_high"]
    return {
        "texts": texts,
        "pages": pages,
        "icc": icc,
        "base": base,
        "false_claims": claims / sims,
        "coverage": covered / with_ci if with_ci else math.nan,
        "not_enough_data": untested / sims,
        "method": methods.most_common(1)[0][0] if methods else "none",
    }


def ppi_cell(rng, base: float, labelled: int, sims: int, rows: int = 1000) -> dict:
    """One cell of the PPI grid (see the module docstring)."""
    covered = defined = 0
    for _ in range(sims):
        y = (rng.random(rows) < base).astype(float)
        yhat = np.where(rng.random(rows) < np.where(y == 1, 0.3, 0.05), 1 - y, y)
        t = ppi_shares({"g": (y[:labelled], yhat[:labelled], yhat[labelled:])})
        r = t[t["measure"] == "share_ppi"].iloc[0]
        if r["ci_low"] == r["ci_low"]:
            defined += 1
            covered += r["ci_low"] <= base <= r["ci_high"]
    return {"base": base, "labelled": labelled, "coverage": covered / defined if defined else math.nan, "not_enough_data": 1 - defined / sims}


def _print_row(row: dict, header: bool) -> None:
    if header:
        print("| " + " | ".join(row) + " |\n|" + "---|" * len(row), flush=True)
    print(markdown_table(pd.DataFrame([row])).splitlines()[-1], flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--grid", choices=("full", "docs", "small"), default="full")
    a = ap.parse_args()
    grid = {"full": GRID, "docs": DOCS, "small": SMALL}[a.grid]
    ppi_grid = SMALL_PPI if a.grid == "small" else PPI_GRID
    rng = np.random.default_rng(a.seed)
    cells = [c for c in itertools.product(grid["texts"], grid["pages"], grid["icc"], grid["base"]) if c[0] >= c[1]]  # >= 1 text per page
    for k, (t, p, i, b) in enumerate(cells):  # each row as soon as it is done: the full grid takes long
        _print_row(gap_cell(rng, t, p, i, b, a.sims), k == 0)
    print()
    for k, (b, n) in enumerate(itertools.product(ppi_grid["base"], ppi_grid["labelled"])):
        _print_row(ppi_cell(rng, b, n, a.sims), k == 0)


if __name__ == "__main__":
    main()
