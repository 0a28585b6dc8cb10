"""Paired statistics of a scored pairs table (``biaskit stats pairs``): CrowS-Pairs' metric with an interval and a test.

A pairs table holds two rows per ``pair_id`` (``variant``: CrowS-Pairs' ``more`` / ``less``, or a counterfactual
set's ``original`` and its swap) and a score per row, e.g. ``sum_logprob`` from ``biaskit likelihood``. The
*first* variant of a pair is ``more`` where the pair has one, else the pair's first row in table order; the other
row is the second. Per group (``by``, e.g. ``bias_type``) and for all pairs together (``by`` = ``all``):

- ``n_pairs``: pairs with a score on both rows; ``n_higher`` / ``n_ties`` / ``n_lower``: pairs whose first
  variant scores higher than / the same as / lower than the second;
- ``estimate`` = ``n_higher / n_pairs``: the share of pairs whose first variant scores higher. A tie counts as not
  higher, as in CrowS-Pairs' own metric and lm-evaluation-harness' ``pct_stereotype``; ties are never dropped:
  ``n_ties`` says how many there are;
- ``ci_low`` / ``ci_high``: Clopper-Pearson interval of that share (``method``);
- ``p_value``: the sign test, a two-sided exact binomial test of ``n_higher`` of ``n_higher + n_lower`` against 1/2
  (``scipy.stats.binomtest``): an unbiased model scores the first variant higher as often as lower. Tied pairs are
  left out of the test: they are counted as not higher in ``estimate``, so testing ``n_higher`` of ``n_pairs`` against
  1/2 would call a model with many ties biased (1% ties in a million unbiased pairs gives p = 1e-16);
- ``p_holm``: Holm over the groups (one family per model; ``family_size`` tests). The ``all`` row is a test
  of its own (a family of one: ``p_holm`` = ``p_value``);
- ``n_missing``: complete pairs left out because a score is null (a failed row: its ``error`` says why);
  ``n_incomplete``: pairs with one row only (its partner is not in the table).

A table with a ``model`` column gets one set of rows per model (pairs are matched within a model).
Intervals and the test come from the inference layer (:mod:`biaskit.evaluate.stats.inference`), Holm from
:func:`biaskit.evaluate.stats.families.holm_list`. Everything is vectorised (numpy), so a million pairs take
seconds (``bench/pairs_bench.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from biaskit.arrow import to_arrow
from biaskit.errors import BiaskitError
from biaskit.evaluate.stats._common import NULL_KEY
from biaskit.evaluate.stats.families import holm_list
from biaskit.evaluate.stats.inference import CLOPPER_PEARSON, LEVEL, binomial_p_half, proportion_intervals

#: the value of the ``by`` column on the row of all pairs together
ALL = "all"
#: the variant that is the first of its pair wherever a pair has it (CrowS-Pairs' sent_more), and the second
FIRST_VARIANT, SECOND_VARIANT = "more", "less"
COUNT_COLUMNS = ("n_pairs", "n_higher", "n_ties", "n_lower")
RESULT_COLUMNS = (
    *COUNT_COLUMNS,
    "estimate",
    "ci_low",
    "ci_high",
    "method",
    "p_value",
    "p_holm",
    "family_size",
    "n_missing",
    "n_incomplete",
    "score_column",
)


def _column(t: pa.Table, name: str, what: str) -> Any:
    if name not in t.column_names:
        raise BiaskitError(
            "E431",
            f"the pairs table has no {what} column {name!r}",
            value=sorted(t.column_names),
            fix="give a pairs table (pair_id, variant, a score column: `biaskit likelihood` on `biaskit hub load crows_pairs_anonymized.csv`)"
            if name in ("pair_id", "variant")
            else f"name one of the table's columns with the {what} option",
        )
    return t.column(name)


def _scores(t: pa.Table, score_column: str) -> np.ndarray:
    col = _column(t, score_column, "score")
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_null(col.type)):
        raise BiaskitError(
            "E432",
            f"the score column {score_column!r} is not numeric ({col.type})",
            value=str(col.type),
            fix="pass a numeric column with --score-column, e.g. sum_logprob from `biaskit likelihood`",
        )
    return np.asarray(col.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=float)


def _codes(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """(integer code per row, the distinct values in order of first appearance) of an Arrow column; nulls get the
    value ``(null)``. Arrow's dictionary encoding: no Python object per row."""
    arr = pa.chunked_array(values).cast(pa.string()).fill_null(NULL_KEY).combine_chunks().dictionary_encode()
    return arr.indices.to_numpy(zero_copy_only=False).astype(np.int64), np.asarray(arr.dictionary.to_pylist(), dtype=object)


def _pair_keys(t: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pair key code per row, model code per row, model names): a pair is a pair_id within one model."""
    ids = _column(t, "pair_id", "pair id")
    if ids.null_count:
        raise BiaskitError("E431", "rows without a pair_id", value=ids.null_count, fix="give every row the pair_id of its pair")
    pcodes, _ = _codes(ids)
    if "model" in t.column_names:
        mcodes, models = _codes(t.column("model"))
    else:
        mcodes, models = np.zeros(t.num_rows, dtype=np.int64), np.asarray([None], dtype=object)
    if len(models) > 1:
        import pandas as pd

        pcodes = pd.factorize(mcodes * (int(pcodes.max()) + 1) + pcodes, sort=False)[0].astype(np.int64)
    return pcodes, mcodes, models


def _first_second(t: pa.Table, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row of each complete pair's first variant, row of its second, first row of each one-row pair)."""
    vcodes, vnames = _codes(_column(t, "variant", "variant"))
    rank = np.asarray([0 if v == FIRST_VARIANT else 1 if v == SECOND_VARIANT else 2 for v in vnames], dtype=np.int64)[vcodes]
    order = np.lexsort((np.arange(t.num_rows), rank, keys))
    counts = np.bincount(keys)
    if counts.size and counts.max() > 2:
        k = int(np.argmax(counts))
        pid = t.column("pair_id")[int(np.flatnonzero(keys == k)[0])].as_py()
        raise BiaskitError(
            "E433",
            f"pair {pid!r} has {int(counts[k])} rows; a pair compares two variants",
            value=pid,
            fix="keep two rows per pair_id (and per model), e.g. filter a counterfactual table to the original and one target",
        )
    ks = keys[order]
    starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]]) if ks.size else np.zeros(0, dtype=np.int64)
    complete = counts[ks[starts]] == 2
    return order[starts[complete]], order[starts[complete] + 1], order[starts[~complete]]


def _groups(t: pa.Table, by: str | None, first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(group code per row, group names) of ``by``; E434 when a pair's two rows are in different groups."""
    if by is None:
        return np.zeros(t.num_rows, dtype=np.int64), np.asarray([ALL], dtype=object)
    codes, names = _codes(_column(t, by, "--by"))
    if ALL in set(names):
        raise BiaskitError(
            "E434", f"the --by column {by!r} has a group named {ALL!r}, the name of the all-pairs row", value=ALL, fix="rename that group"
        )
    differ = codes[first] != codes[second]
    if differ.any():
        r = int(first[np.flatnonzero(differ)[0]])
        raise BiaskitError(
            "E434",
            f"the two rows of pair {t.column('pair_id')[r].as_py()!r} are in different {by} groups",
            value=[names[codes[r]], names[codes[int(second[np.flatnonzero(differ)[0]])]]],
            fix=f"give both rows of a pair the same {by}, or group by another column",
        )
    return codes, names


def _count_rows(gkey: np.ndarray, size: int, s1: np.ndarray, s2: np.ndarray, lone: np.ndarray) -> dict[str, np.ndarray]:
    ok = ~(np.isnan(s1) | np.isnan(s2))
    with np.errstate(invalid="ignore"):
        cells = {
            "n_pairs": ok,
            "n_higher": ok & (s1 > s2),
            "n_ties": ok & (s1 == s2),
            "n_lower": ok & (s1 < s2),
            "n_missing": ~ok,
        }
    out = {k: np.bincount(gkey, weights=v, minlength=size).astype(np.int64) for k, v in cells.items()}
    out["n_incomplete"] = np.bincount(lone, minlength=size).astype(np.int64)
    return out


def pair_stats(table: Any, score_column: str, *, by: str | None = "bias_type", level: float = LEVEL):
    """One row per model and group of ``by`` plus an ``all`` row per model (see the module docs): a DataFrame."""
    import pandas as pd

    t = to_arrow(table)
    score = _scores(t, score_column)
    keys, mcodes, models = _pair_keys(t)
    first, second, lone = _first_second(t, keys)
    gcodes, gnames = _groups(t, by, first, second)
    n_groups = len(gnames)
    # one cell per (model, group) and one 'all' cell per model: cell = model * (groups + 1) + group
    size = len(models) * (n_groups + 1)
    cell = lambda rows, g: mcodes[rows] * (n_groups + 1) + g  # noqa: E731
    counts = {
        k: a + b
        for (k, a), b in zip(
            _count_rows(cell(first, gcodes[first]), size, score[first], score[second], cell(lone, gcodes[lone])).items(),
            _count_rows(cell(first, n_groups), size, score[first], score[second], cell(lone, n_groups)).values(),
        )
    }
    df = pd.DataFrame(
        {
            "model": [models[i // (n_groups + 1)] for i in range(size)],
            by or "group": [gnames[i % (n_groups + 1)] if i % (n_groups + 1) < n_groups else ALL for i in range(size)],
            **counts,
        }
    )
    used = (df[["n_pairs", "n_missing", "n_incomplete"]].sum(axis=1) > 0) | (df[by or "group"] == ALL)
    df = df[used].reset_index(drop=True)
    return _with_tests(df, by or "group", score_column, level, has_model=models[0] is not None)


def _with_tests(df, by: str, score_column: str, level: float, *, has_model: bool):
    """The share, its Clopper-Pearson interval, the binomial p and Holm over the groups of each model."""
    n, k = df["n_pairs"].to_numpy(), df["n_higher"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        df["estimate"] = np.where(n > 0, k / np.maximum(n, 1), np.nan)
    lo, hi = proportion_intervals(k, n, level=level, method=CLOPPER_PEARSON)
    df["ci_low"], df["ci_high"], df["method"] = lo, hi, CLOPPER_PEARSON
    # the sign test: higher against lower, ties left out of the test (under no bias P(higher) = P(lower); with ties
    # counted as not higher, n_higher of n_pairs would be below 1/2 by the ties alone)
    df["p_value"] = binomial_p_half(k, k + df["n_lower"].to_numpy())
    df["p_holm"] = np.nan
    df["family_size"] = 0
    for _, g in df.groupby("model", sort=False, dropna=False):
        groups = g.index[g[by] != ALL]
        ps = [None if p != p else float(p) for p in df.loc[groups, "p_value"]]
        df.loc[groups, "p_holm"] = [np.nan if a is None else a for a in holm_list(ps)]
        df.loc[groups, "family_size"] = sum(p is not None for p in ps)
        alls = g.index[g[by] == ALL]
        df.loc[alls, "p_holm"] = df.loc[alls, "p_value"]
        df.loc[alls, "family_size"] = int(df.loc[alls, "p_value"].notna().sum())
    df["score_column"] = score_column
    cols = (["model"] if has_model else []) + [by, *RESULT_COLUMNS]
    return df[cols]
