"""Completion validity statistics (the West Slavic study's first research question).

From a table scored with the ``validity`` metric (``validity_valid``): the share of fill-ins that are real
words per model, language and subject category, with Wilson score intervals, and a chi-square test of
homogeneity of valid / not valid across the subject categories, one test per model and language (Holm
correction over those tests).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from biaskit.evaluate.stats._common import as_list, check_ci, column_counts, fill_keys, groups_of, require_columns, to_frame
from biaskit.evaluate.stats.aggregate import proportion_ci
from biaskit.evaluate.stats.columns import corrected_p
from biaskit.evaluate.stats.significance import chi2_by, correct_pvalues

VALIDITY_BY = ("model", "language", "subject_category")
_HINT = "score the fill-ins with the validity metric first: biaskit score FILLINS --metrics validity --text-column token"


def validity_summary(table: Any, by: str | Sequence[str] = VALIDITY_BY, *, column: str = "validity_valid", ci: float = 0.95, method: str = "wilson"):
    """Share of valid fill-ins per group: ``n`` rows, ``n_scored`` (with a validity value), ``n_null``,
    ``n_error``, ``valid`` (count), ``share_valid`` = valid / n_scored, ``ci_low``/``ci_high`` (Wilson by
    default, ``method="clopper-pearson"``). Grouping columns the table lacks are left out; rows are never dropped."""
    import pandas as pd

    df = to_frame(table)
    check_ci(ci)
    require_columns(df, [column], "validity statistics", _HINT)
    by = [c for c in as_list(by) if c in df.columns]
    df = fill_keys(df, by)
    err = "validity_error" if "validity_error" in df.columns and column != "validity_error" else None
    rows = []
    for key, g in groups_of(df, by):
        vals = g[column]
        scored = vals.notna()
        n_scored = int(scored.sum())
        valid = int(vals[scored].astype(bool).sum())
        lo, hi = proportion_ci(valid, n_scored, ci=ci, method=method)
        rows.append(
            {
                **dict(zip(by, key)),
                **column_counts(g, ~scored, err, valid="n_scored"),
                "valid": valid,
                "share_valid": valid / n_scored if n_scored else float("nan"),
                "ci_low": lo,
                "ci_high": hi,
            }
        )
    return pd.DataFrame(rows, columns=[*by, "n", "n_scored", "n_null", "n_error", "valid", "share_valid", "ci_low", "ci_high"])


def validity_tests(
    table: Any,
    category: str = "subject_category",
    within: str | Sequence[str] = ("model", "language"),
    *,
    column: str = "validity_valid",
    correction: str = "holm",
):
    """Chi-square test of homogeneity (no continuity correction) of valid / not valid across ``category``,
    one test per value of ``within`` (columns the table lacks are left out): ``groups``, ``n``, ``chi2``,
    ``dof``, ``p_value``, ``cramers_v``, ``p_holm`` / ``p_bh`` (``correction`` over the tests; none: no corrected p).
    A test is undefined (nan) with fewer than two categories or when every fill-in is valid (or none is)."""
    df = to_frame(table)
    require_columns(df, [column, category], "validity test", _HINT)
    within = [c for c in as_list(within) if c in df.columns]
    res = chi2_by(df, category, column, within=within)
    res = res.drop(columns=["labels"])
    col = corrected_p(correction)
    if col is not None:
        res[col] = correct_pvalues(res["p_value"].tolist(), correction)
    return res
