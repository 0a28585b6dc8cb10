"""Group-level aggregation of per-text scores: counts, label proportions (Wilson CIs) and means (seeded bootstrap CIs).

Rows are never dropped: a null grouping value becomes its own group ``"(null)"``; a null score is counted
in ``n_null`` (and rows whose ``<metric>_error`` is set in ``n_error``) and left out of the denominator
of that score only. ``n`` is always the number of rows in the group, so the ``n`` of all groups adds up
to the table's row count.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from biaskit.bootstrap import BootSpec, percentile_ci
from biaskit.errors import BiaskitError, check_choice
from biaskit.evaluate.metrics.catalog import check_column, vocabulary
from biaskit.evaluate.stats._common import as_list, check_ci, column_counts, error_column, fill_keys, groups_of, is_missing, require_columns, to_frame
from biaskit.evaluate.stats.cluster import cluster_bootstrap_ci, clustered_share_ci, resolve_cluster
from biaskit.evaluate.stats.columns import LABEL, METHOD, REASON
from biaskit.evaluate.stats.inference import PROPORTION_METHODS, never_zero_width, proportion_interval

#: columns of :func:`aggregate`'s result after the grouping columns
AGG_COLUMNS = ("column", LABEL, "stat", "n", "n_valid", "n_null", "n_error", "count", "estimate", "ci_low", "ci_high")


def label_strings(series):
    """Labels as strings; booleans become 'true'/'false'; nulls stay null."""
    import pandas as pd

    def conv(v):
        if v is None or (isinstance(v, float) and v != v) or v is pd.NA:
            return None
        if isinstance(v, bool) or type(v).__name__ == "bool_":
            return "true" if v else "false"
        return str(v)

    return series.map(conv)


def metric_labels(column: str) -> tuple[str, ...] | None:
    """The labels of a metric's label column as the metric declares them (its ``LabelOutput``), or None for a
    column no registered metric writes (``stats aggregate`` and ``stats ztest`` refuse other values in such a
    column: ``POSITIVE``, ``x``: E151)."""
    return vocabulary(column)


def check_label_vocabulary(values, column: str, what: str = "the table") -> None:
    """E151 when a metric label column holds values outside the metric's labels (nulls are fine: failed rows)."""
    check_column(values, column, what=what)


#: interval methods for a proportion (``prop_ci=``); ``wilson`` is the default
PROPORTION_CI = ("wilson", "clopper-pearson", "bootstrap")


def proportion_ci(count: int, n: int, *, ci: float = 0.95, method: str = "wilson") -> tuple[float, float]:
    """Confidence interval of a proportion ``count / n``: Wilson score (default) or Clopper-Pearson (exact).

    The inference layer's interval (:func:`biaskit.evaluate.stats.inference.proportion_interval`, the same numbers
    everywhere): unlike a percentile bootstrap, both give a real interval when the count is 0 or n (0 of 12 gives
    Wilson [0, 0.2425] at 95 %, where a bootstrap gives [0, 0]). Both equal
    ``statsmodels.stats.proportion.proportion_confint`` (methods ``wilson`` / ``beta``; tested). (nan, nan) for n == 0.
    """
    check_choice("E080", "unknown proportion interval method", method, PROPORTION_METHODS, fix="use wilson (default) or clopper-pearson")
    return proportion_interval(count, n, level=ci, method=method)


def bootstrap_proportion_ci(count: int, n: int, *, n_boot: int = 1000, ci: float = 0.95, rng=None) -> tuple[float, float]:
    """Percentile bootstrap CI of a proportion ``count / n``.

    Resampling ``n`` items with replacement and counting one label gives a Binomial(n, count/n) count,
    so the bootstrap distribution is drawn directly from that binomial (same distribution, no n x n_boot
    index matrix). Returns (nan, nan) when n == 0.
    """
    if n <= 0:
        return float("nan"), float("nan")
    rng = rng if rng is not None else np.random.default_rng(0)
    p = count / n
    return percentile_ci(lambda g, k: g.binomial(n, p, size=k) / n, n_boot, rng, level=ci)


def bootstrap_mean_ci(values, *, n_boot: int = 1000, ci: float = 0.95, rng=None) -> tuple[float, float]:
    """Percentile bootstrap CI of a mean (resampling values with replacement, in memory-bounded chunks)."""
    x = np.asarray(values, dtype=float)
    n = x.size
    if n == 0:
        return float("nan"), float("nan")
    rng = rng if rng is not None else np.random.default_rng(0)
    chunk = max(1, min(n_boot, 5_000_000 // max(n, 1)))
    return percentile_ci(lambda g, k: x[g.integers(0, n, size=(k, n))].mean(axis=1), n_boot, rng, level=ci, block=chunk)


def aggregate(
    table: Any,
    by: str | Sequence[str] = (),
    *,
    labels: str | Iterable[str] = (),
    means: str | Iterable[str] = (),
    label_order: dict[str, Sequence[str]] | None = None,
    n_boot: int = 1000,
    ci: float = 0.95,
    seed: int = 0,
    prop_ci: str = "wilson",
    cluster: str | None = None,
):
    """Aggregate per-text scores by any columns.

    ``labels``: categorical columns (``vader_label``, ``regard_label``, ``toxicity_label``,
    ``gender_wavg_label``, ``norms_valence_class``, ``honest_hurtful``...): one result row per group and
    label with ``count`` and ``estimate`` = count / n_valid. Every label seen anywhere in the table (or
    given in ``label_order[column]``) gets a row in every group, with count 0 where absent.
    ``means``: numeric columns (``vader_compound``, ``perplexity``...): one row per group with the mean.

    Returns a pandas DataFrame in long form: the ``by`` columns, then :data:`AGG_COLUMNS`. For proportions
    ``ci_low`` / ``ci_high`` are Wilson score bounds at level ``ci`` (``prop_ci="wilson"``, default; a zero
    count still gets a real upper bound), ``"clopper-pearson"`` (exact) or ``"bootstrap"`` (the percentile
    bootstrap used before, which gives [0, 0] for 0 of n). For means they are percentile bootstrap bounds
    (``n_boot`` resamples) from a generator seeded with ``seed`` and the result row's position, so the same
    call gives the same numbers.

    ``cluster``: a column of clusters of dependent texts (``page_id``, ``template``; ``"auto"`` picks one, see
    :func:`~biaskit.evaluate.stats.cluster.resolve_cluster`). Then a share's interval is Wilson on the effective
    size n / design effect (CR1, ``method`` wilson-deff-cr1) and a mean's a percentile bootstrap over clusters
    (``cluster-bootstrap``), and the result gains the columns ``cluster, n_clusters, reason``.
    """
    import pandas as pd

    df = to_frame(table)
    by = as_list(by)
    labels = as_list(labels)
    means = as_list(means)
    boot = BootSpec(n_boot=n_boot, level=ci, seed=seed)
    _check_interval(boot, prop_ci)
    _check_columns(df, by, labels, means)
    cluster = resolve_cluster(df, cluster)
    plan = _plan(df, by, labels, means, label_order)
    if cluster is not None:
        return _clustered_aggregate(plan, cluster, boot)
    rows: list[dict] = []
    for cell in _cells(plan):
        if cell.column in plan.labels:
            rows += _proportion_rows(cell, plan.label_values[cell.column], boot, prop_ci)
        else:
            rows.append(_mean_row(cell, boot))
    return pd.DataFrame(rows, columns=[*by, *AGG_COLUMNS, METHOD])


@dataclass
class _Plan:
    """What :func:`aggregate` aggregates: the table (null keys filled), its grouping columns, its label and mean
    columns, each label column's labels in order and each column's error column."""

    df: Any
    by: list[str]
    labels: list[str]
    means: list[str]
    label_values: dict[str, list[str]]
    err_cols: dict[str, str | None]


@dataclass
class _Cell:
    """One column in one group: the group's key values (``base``), its rows ``g``, the column's null rows
    (``miss``), its counts, and ``position``, the first result row's position (with the seed, it seeds that row's
    bootstrap)."""

    base: dict
    g: Any
    column: str
    miss: Any
    counts: dict
    position: int


def _plan(df, by: list[str], labels: list[str], means: list[str], label_order: dict[str, Sequence[str]] | None) -> _Plan:
    df = fill_keys(df, by)
    label_values = _label_values(df, labels, label_order)
    err_cols = {c: error_column(df, c) for c in [*labels, *means]}
    return _Plan(df, by, labels, means, label_values, err_cols)


def _cells(plan: _Plan):
    """Every :class:`_Cell` of the plan, group by group; a label column takes one result row per label, a mean
    column one."""
    position = 0
    for key, g in groups_of(plan.df, plan.by):
        base = dict(zip(plan.by, key))
        for c in [*plan.labels, *plan.means]:
            miss = g[c].isna() if c in plan.means else is_missing(g[c])
            yield _Cell(base, g, c, miss, column_counts(g, miss, plan.err_cols[c]), position)
            position += len(plan.label_values[c]) if c in plan.labels else 1


def _clustered_aggregate(plan: _Plan, cluster: str, boot: BootSpec):
    """:func:`aggregate` with cluster-robust intervals (see its docstring)."""
    import pandas as pd

    rows: list[dict] = []
    for cell in _cells(plan):
        g, c, miss, counts, base = cell.g, cell.column, cell.miss, cell.counts, cell.base
        ids = g.loc[~miss, cluster]
        n_cl = len({str(v) for v in ids.dropna()}) + int(ids.isna().any())
        why = _cluster_reason(ids, cluster)
        extra = {"cluster": cluster, "n_clusters": 0 if ids.isna().all() else n_cl, "reason": why}
        if c in plan.labels:
            vals = g.loc[~miss, c]
            for lab in plan.label_values[c]:
                y = (vals == lab).to_numpy(dtype=float)
                r = clustered_share_ci(y, ids.tolist(), level=boot.level)
                lo, hi, meth = (r["ci_low"], r["ci_high"], r["method"]) if why is None else (float("nan"), float("nan"), "none")
                rows.append(
                    {**base, "column": c, LABEL: lab, "stat": "proportion", **counts, "count": int(y.sum()), "estimate": r["estimate"]}
                    | {"ci_low": lo, "ci_high": hi, **extra, METHOD: meth}
                )
        else:
            x = g.loc[~miss, c].astype(float).to_numpy()
            lo, hi = cluster_bootstrap_ci(x, ids.tolist(), boot=replace(boot, seed=boot.seed + cell.position))
            est = float(x.mean()) if x.size else float("nan")
            rows.append(
                {**base, "column": c, LABEL: "mean", "stat": "mean", **counts, "count": counts["n_valid"], "estimate": est}
                | {"ci_low": lo, "ci_high": hi, **extra, METHOD: "cluster-bootstrap" if why is None else "none"}
            )
    return pd.DataFrame(rows, columns=[*plan.by, *AGG_COLUMNS, "cluster", "n_clusters", METHOD, REASON])


def _cluster_reason(ids, cluster: str) -> str | None:
    """Why a group's cluster ids support no clustered interval (None when they do): no valid text, every id null,
    or one cluster (the between-cluster variance cannot be estimated from one cluster)."""
    if not len(ids):
        return "no text with a valid value"
    if ids.isna().all():
        return f"every cluster id in column {cluster!r} is null: no cluster to estimate the variance from"
    distinct = {str(v) for v in ids.dropna()} | ({"(null)"} if ids.isna().any() else set())
    if len(distinct) < 2:
        return f"all texts come from one cluster ({cluster} {next(iter(distinct))}): the between-cluster variance cannot be estimated"
    return None


def _check_interval(boot: BootSpec, prop_ci: str) -> None:
    """E080 for a bad level, ``n_boot`` or proportion interval method."""
    check_ci(boot.level)
    if boot.n_boot < 1:
        raise BiaskitError("E080", "n_boot must be at least 1", value=boot.n_boot, fix="use e.g. n_boot=1000")
    check_choice("E080", "unknown proportion interval method", prop_ci, PROPORTION_CI, fix="use wilson (default), clopper-pearson or bootstrap")


def _check_columns(df, by: list[str], labels: list[str], means: list[str]) -> None:
    """E080 for nothing to aggregate, a missing column or a mean of a non-numeric column."""
    import pandas as pd

    if not labels and not means:
        raise BiaskitError(
            "E080",
            "nothing to aggregate: give label columns and/or mean columns",
            fix="e.g. aggregate(table, by=['group', 'model'], labels=['vader_label'])",
        )
    require_columns(df, [*by, *labels, *means], "aggregation")
    for m in means:
        if not (pd.api.types.is_numeric_dtype(df[m]) or df[m].isna().all()):
            raise BiaskitError(
                "E080", f"column {m!r} is not numeric, so it has no mean", value=str(df[m].dtype), fix=f"pass {m!r} in labels= instead of means="
            )


def _label_values(df, labels: list[str], label_order: dict[str, Sequence[str]] | None) -> dict[str, list[str]]:
    """Turn the label columns of ``df`` into strings (in place), check their vocabulary, and return each column's
    labels: those of ``label_order`` first, then the others seen in the table, sorted."""
    label_order = dict(label_order or {})
    label_values: dict[str, list[str]] = {}
    for c in labels:
        df[c] = label_strings(df[c])
        check_label_vocabulary(df[c].tolist(), c)
        seen = sorted(v for v in df[c].dropna().unique())
        order = [str(v) for v in label_order.get(c, [])]
        label_values[c] = order + [v for v in seen if v not in order]
    return label_values


def _proportion_rows(cell: _Cell, labels: list[str], boot: BootSpec, prop_ci: str) -> list[dict]:
    """One row per label of the cell's column: count, proportion of the valid rows and its interval (the
    bootstrap of label k is seeded with ``[seed, position + k]``)."""
    counts, c = cell.counts, cell.column
    n_valid = counts["n_valid"]
    vc = cell.g.loc[~cell.miss, c].value_counts()
    rows = []
    for k, lab in enumerate(labels):
        cnt = int(vc.get(lab, 0))
        est = cnt / n_valid if n_valid else float("nan")
        if prop_ci == "bootstrap" and n_valid:
            # at 0 or n every resample repeats the sample (the percentile bootstrap is the point [0, 0] or [1, 1]); the
            # inference layer's guard gives a collapsed interval Wilson's instead (``method`` says so)
            pt = 0 < cnt < n_valid
            rng = np.random.default_rng([boot.seed, cell.position + k])
            lo, hi = bootstrap_proportion_ci(cnt, n_valid, n_boot=boot.n_boot, ci=boot.level, rng=rng) if pt else (est, est)
            lo, hi, method, _ = never_zero_width(lo, hi, method="bootstrap", share=(cnt, n_valid), level=boot.level)
        else:
            method = "wilson" if prop_ci == "bootstrap" else prop_ci
            lo, hi = proportion_ci(cnt, n_valid, ci=boot.level, method=method)
        rows.append(
            {**cell.base, "column": c, LABEL: lab, "stat": "proportion", **counts, "count": cnt, "estimate": est, "ci_low": lo, "ci_high": hi}
            | {METHOD: method}
        )
    return rows


def _mean_row(cell: _Cell, boot: BootSpec) -> dict:
    """The mean of the cell's column over its valid rows, with a bootstrap interval seeded ``[seed, position]``."""
    counts = cell.counts
    x = cell.g.loc[~cell.miss, cell.column].astype(float).to_numpy()
    est = float(x.mean()) if x.size else float("nan")
    lo, hi = bootstrap_mean_ci(x, n_boot=boot.n_boot, ci=boot.level, rng=np.random.default_rng([boot.seed, cell.position]))
    row = {**cell.base, "column": cell.column, LABEL: "mean", "stat": "mean", **counts, "count": counts["n_valid"], "estimate": est}
    return row | {"ci_low": lo, "ci_high": hi, METHOD: "bootstrap"}


def proportions_wide(agg, by: Sequence[str], column: str):
    """One row per group: ``n``, ``n_valid``, ``n_null``, ``n_error`` and ``prop_<label>``, ``count_<label>``,
    ``ci_low_<label>``, ``ci_high_<label>`` for every label of ``column`` in an :func:`aggregate` result."""
    import pandas as pd

    by = as_list(by)
    sub = agg[agg["column"] == column]
    if sub.empty:
        raise BiaskitError(
            "E080", f"the aggregate has no rows for column {column!r}", value=sorted(agg["column"].unique()), fix="aggregate that column first"
        )
    lab_order = list(dict.fromkeys(sub[LABEL]))
    recs = []
    for key, g in groups_of(sub, by):
        r = dict(zip(by, key))
        first = g.iloc[0]
        r.update(n=int(first["n"]), n_valid=int(first["n_valid"]), n_null=int(first["n_null"]), n_error=int(first["n_error"]))
        for lab in lab_order:
            row = g[g[LABEL] == lab]
            if row.empty:
                continue
            row = row.iloc[0]
            r[f"count_{lab}"] = int(row["count"])
            r[f"prop_{lab}"] = row["estimate"]
            r[f"ci_low_{lab}"] = row["ci_low"]
            r[f"ci_high_{lab}"] = row["ci_high"]
        recs.append(r)
    return pd.DataFrame(recs)


def label_proportions(
    table: Any, column: str, by: str | Sequence[str] = (), *, label_order: Sequence[str] | None = None, boot: BootSpec = BootSpec()
):
    """Wide proportions of one label column per group (see :func:`proportions_wide`), with Wilson CIs."""
    by = as_list(by)
    order: dict[str, Sequence[str]] = {column: list(label_order or [])}
    agg = aggregate(table, by, labels=[column], label_order=order, n_boot=boot.n_boot, ci=boot.level, seed=boot.seed)
    return proportions_wide(agg, by, column)
