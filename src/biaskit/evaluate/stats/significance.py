"""Tests between groups with effect sizes, and multiple-comparison correction.

- :func:`two_proportion_ztest` (pooled variance, as ``statsmodels.stats.proportion.proportions_ztest``)
  with Cohen's h; BOLD compares female vs male positive-sentiment proportions this way.
- :func:`chi2_homogeneity` (``scipy.stats.chi2_contingency``) with Cramér's V; BOLD's test that label
  distributions differ across sources/groups.
- :func:`mann_whitney` (``scipy.stats.mannwhitneyu``, two-sided) with the rank-biserial correlation.
- :func:`correct_pvalues`: Holm (family-wise) and Benjamini-Hochberg (false discovery rate).
- :func:`pairwise_proportion_tests` / :func:`pairwise_mann_whitney`: every pair of groups, corrected.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from biaskit.errors import BiaskitError, check_choice
from biaskit.evaluate.stats._common import as_list, fill_keys, groups_of, is_missing, require_columns, to_frame
from biaskit.evaluate.stats.aggregate import check_label_vocabulary, label_strings, metric_labels
from biaskit.evaluate.stats.cluster import cluster_diff, resolve_cluster
from biaskit.evaluate.stats.inference import fisher_exact_2x2, newcombe_interval

CORRECTIONS = ("holm", "bh", "none")


def _check_count(count: int, n: int, name: str) -> None:
    if n <= 0 or count < 0 or count > n:
        raise BiaskitError(
            "E080",
            f"{name}: need 0 <= count <= n and n > 0",
            value={"count": count, "n": n},
            fix="pass the number of rows with the label and the number of rows with a valid label",
        )


def cohen_h(p1: float, p2: float) -> float:
    """Cohen's h = 2 asin(sqrt p1) - 2 asin(sqrt p2) (|h| 0.2 small, 0.5 medium, 0.8 large)."""
    return 2.0 * math.asin(math.sqrt(p1)) - 2.0 * math.asin(math.sqrt(p2))


def two_proportion_ztest(count_a: int, n_a: int, count_b: int, n_b: int) -> dict[str, float]:
    """Two-sided z-test that proportions ``count_a/n_a`` and ``count_b/n_b`` are equal (pooled variance).

    Returns ``p_a, p_b, diff (= p_a - p_b), z, p_value, cohen_h``. When both proportions are 0 or both 1
    the test is undefined: z and p_value are nan. z and p come from ``statsmodels.stats.proportion.proportions_ztest``
    (the same numbers, to the last bit, as the formula z = (p_a - p_b) / sqrt(p(1-p)(1/n_a + 1/n_b)) with the pooled p).
    """
    from statsmodels.stats.proportion import proportions_ztest

    _check_count(count_a, n_a, "group A")
    _check_count(count_b, n_b, "group B")
    pa_, pb_ = count_a / n_a, count_b / n_b
    pooled = (count_a + count_b) / (n_a + n_b)
    if pooled in (0.0, 1.0):
        z = p = float("nan")
    else:
        zs, ps = proportions_ztest([count_a, count_b], [n_a, n_b])
        z, p = float(zs), float(ps)
    return {"p_a": pa_, "p_b": pb_, "diff": pa_ - pb_, "z": z, "p_value": p, "cohen_h": cohen_h(pa_, pb_)}


def chi2_homogeneity(contingency, *, correction: bool = False) -> dict[str, float]:
    """Chi-square test of homogeneity on a groups x labels count matrix (list of lists or DataFrame).

    All-zero rows/columns are removed first (they carry no information and make expected counts 0).
    ``correction``: Yates' continuity correction for 2x2 tables (off by default; BOLD reports the plain
    statistic). Returns ``chi2, p_value, dof, n, cramers_v``.
    """
    from scipy.stats import chi2_contingency

    m = np.asarray(getattr(contingency, "values", contingency), dtype=float)
    if m.ndim != 2:
        raise BiaskitError("E080", "contingency table must be 2-D (groups x labels)", value=m.shape, fix="pass a list of rows of counts")
    if (m < 0).any():
        raise BiaskitError("E080", "contingency counts must be non-negative", value=m.tolist(), fix="pass counts, not differences")
    m = m[m.sum(axis=1) > 0][:, m.sum(axis=0) > 0]
    if m.shape[0] < 2 or m.shape[1] < 2:
        return {"chi2": float("nan"), "p_value": float("nan"), "dof": 0, "n": int(m.sum()), "cramers_v": float("nan")}
    res = chi2_contingency(m, correction=correction)
    n = m.sum()
    v = math.sqrt(res.statistic / (n * (min(m.shape) - 1)))
    return {"chi2": float(res.statistic), "p_value": float(res.pvalue), "dof": int(res.dof), "n": int(n), "cramers_v": v}


def mann_whitney(a, b) -> dict[str, float]:
    """Two-sided Mann-Whitney U test of samples ``a`` and ``b`` (nulls/NaNs removed and counted).

    ``u`` is the statistic of ``a``; ``rank_biserial`` = 2U/(n_a n_b) - 1 (> 0: ``a`` tends to be larger;
    = P(a > b) - P(a < b)). With an empty sample the result is nan.
    """
    xa = np.asarray([np.nan if v is None else v for v in a], dtype=float)
    xb = np.asarray([np.nan if v is None else v for v in b], dtype=float)
    xa, xb = xa[~np.isnan(xa)], xb[~np.isnan(xb)]
    out = {
        "n_a": int(xa.size),
        "n_b": int(xb.size),
        "median_a": float(np.median(xa)) if xa.size else float("nan"),
        "median_b": float(np.median(xb)) if xb.size else float("nan"),
    }
    if xa.size == 0 or xb.size == 0:
        return {**out, "u": float("nan"), "p_value": float("nan"), "rank_biserial": float("nan")}
    u, p = mwu_two_sided(xa, xb)
    return {**out, "u": u, "p_value": p, "rank_biserial": 2 * u / (xa.size * xb.size) - 1}


@functools.lru_cache(maxsize=256)
def _u_null_counts(n1: int, n2: int):
    """Number of orderings of n1 + n2 distinct values giving each U (0 .. n1*n2), by the recursion
    c(n1, n2, u) = c(n1 - 1, n2, u - n2) + c(n1, n2 - 1, u)."""
    if n1 == 0 or n2 == 0:
        return np.ones(1, dtype=object)
    a = _u_null_counts(n1 - 1, n2)
    b = _u_null_counts(n1, n2 - 1)
    out = np.zeros(n1 * n2 + 1, dtype=object)
    out[n2 : n2 + len(a)] += a
    out[: len(b)] += b
    return out


def mwu_two_sided(xa, xb) -> tuple[float, float]:
    """Two-sided Mann-Whitney U of float arrays without NaNs: (U of ``xa``, p).

    Same numbers as ``scipy.stats.mannwhitneyu(xa, xb, alternative="two-sided")`` (method "auto": the
    exact null distribution when both samples have at most 8 values and there are no ties, else the normal
    approximation with tie and continuity correction), without scipy's per-call overhead (about 50x
    faster, which matters for Likelihood Bias: one test per descriptor pair and template). A test checks
    equality with scipy on random samples.
    """
    n1, n2 = int(xa.size), int(xb.size)
    xy = np.concatenate([xa, xb])
    _, inv, counts = np.unique(xy, return_inverse=True, return_counts=True)
    avg = np.cumsum(counts) - (counts - 1) / 2.0  # 1-based average rank of each distinct value
    r1 = float(avg[inv[:n1]].sum())
    u1 = r1 - n1 * (n1 + 1) / 2.0
    u = max(u1, n1 * n2 - u1)
    ties = bool((counts > 1).any())
    if n1 > 8 and n2 > 8 or ties:
        n = n1 + n2
        tie_term = float((counts.astype(float) ** 3 - counts).sum())
        sd = math.sqrt(n1 * n2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1))))
        num = u - n1 * n2 / 2.0 - 0.5
        if sd == 0:  # every value equal: as scipy, num / 0 -> -inf (p = 1) or nan
            z = math.copysign(math.inf, num) if num != 0 else math.nan
        else:
            z = num / sd
        p = math.nan if z != z else math.erfc(z / math.sqrt(2))  # 2 * P(Z > z)
    else:
        c = _u_null_counts(n1, n2)
        p = 2 * float(sum(c[int(round(u)) :])) / float(math.comb(n1 + n2, n1))
    return float(u1), (p if p != p else float(min(max(p, 0.0), 1.0)))


def holm(pvalues: Sequence[float]):
    """Holm-adjusted p-values of ``pvalues`` (no NaN), in their order, as a float array.

    The same operations as statsmodels' ``multipletests(p, method="holm")`` (sort, ``p * (m, m-1, ..., 1)``,
    running maximum, capped at 1), so the values are equal to the bit (tests compare the two), without its
    ``gc.collect()`` on every call: in a process holding a model that cost about a second per call, and a
    report makes hundreds of calls."""
    p = np.asarray(pvalues, dtype=float)
    if p.size == 0:
        return p
    order = np.argsort(p)
    adjusted = np.maximum.accumulate(p[order] * np.arange(p.size, 0, -1))
    adjusted[adjusted > 1] = 1.0
    out = np.empty_like(adjusted)
    out[order] = adjusted
    return out


def correct_pvalues(pvalues: Sequence[float], method: str = "holm") -> list[float]:
    """Adjusted p-values: ``holm`` (step-down, family-wise error) or ``bh`` (Benjamini-Hochberg, FDR).

    Missing p-values (NaN or None) stay NaN and do not count towards the number of tests.
    """
    method = method.lower()
    if method in ("fdr_bh", "benjamini-hochberg"):
        method = "bh"
    check_choice("E080", "unknown p-value correction", method, CORRECTIONS, fix="use holm or bh")
    ps = []
    for i, p in enumerate(pvalues):
        try:
            v = float("nan") if p is None else float(p)
        except (TypeError, ValueError):
            raise BiaskitError(
                "E080", f"p-value {i} is not a number", value=p, fix="pass numbers in [0, 1]; None or NaN for a missing test"
            ) from None
        if v == v and not 0.0 <= v <= 1.0:
            raise BiaskitError("E080", f"p-value {i} is outside [0, 1]", value=v, fix="pass p-values, not test statistics or log p-values")
        ps.append(v)
    idx = [i for i, p in enumerate(ps) if p == p]
    out = [float("nan")] * len(ps)
    m = len(idx)
    if method == "none" or m == 0:
        for i in idx:
            out[i] = ps[i]
        return out
    if method == "holm":
        for i, v in zip(idx, holm([ps[i] for i in idx])):
            out[i] = float(v)
    else:
        # Benjamini-Hochberg by hand: statsmodels' fdr_bh gives the same values but can differ in the last bit
        # (another order of operations), which would change written tables (test_significance compares the two)
        order = sorted(idx, key=lambda i: ps[i])
        running = 1.0
        for k in range(m - 1, -1, -1):
            i = order[k]
            running = min(running, ps[i] * m / (k + 1))
            out[i] = min(1.0, running)
    return out


def _pairs(groups: list[str], pairs: Sequence[tuple[str, str]] | None) -> list[tuple[str, str]]:
    """All pairs of ``groups`` or the given ``pairs`` (a pair whose group is absent from one family is skipped
    there; :func:`_check_pairs` has checked that every named group occurs in the table)."""
    if pairs is None:
        return list(itertools.combinations(groups, 2))
    return [(a, b) for a, b in pairs if a in groups and b in groups]


def _check_pairs(df, group: str, pairs: Sequence[tuple[str, str]] | None) -> None:
    if pairs is None:
        return
    groups = sorted(set(df[group]))
    bad = [g for p in pairs for g in p if g not in groups]
    if bad:
        raise BiaskitError(
            "E080", "pair names a group that is not in the table", value=bad, options=groups, fix="name groups exactly as in the group column"
        )


#: columns of :func:`pairwise_proportion_tests`' result after the ``within`` columns
_PROPORTION_TEST_COLUMNS = [
    "group_a",
    "group_b",
    "count_a",
    "n_a",
    "count_b",
    "n_b",
    "n_null_a",
    "n_null_b",
    "p_a",
    "p_b",
    "diff",
    "z",
    "p_value",
    "p_adjusted",
    "cohen_h",
    "significant",
    "ci_low",
    "ci_high",
    "method",
    "cluster",
    "n_clusters",
    "reason",
]
#: the pooled z-test's condition: every cell of the 2x2 table expects at least this many texts under the null (the
#: usual rule for the normal approximation); below it the p is Fisher's exact test (method ``fisher-exact``)
MIN_EXPECTED = 5
NEWCOMBE_METHOD = "newcombe"
FISHER_METHOD = "fisher-exact"
#: the ``method`` of a test the data cannot support (its ``reason`` says why; every figure is nan)
NO_METHOD = "none"
#: the figures of :func:`two_proportion_ztest`, nan for a pair with an empty group
_ZTEST_FIGURES = ("p_a", "p_b", "diff", "z", "p_value", "cohen_h")


def _adjust_family(fam_rows: list[dict], correction: str) -> None:
    """Add ``p_adjusted`` (corrected within the family) and ``significant`` (p_adjusted < 0.05; None, never False,
    for a test without a p) to each row."""
    adj = correct_pvalues([r["p_value"] for r in fam_rows], correction)
    for r, p in zip(fam_rows, adj):
        r["p_adjusted"] = p
        r["significant"] = bool(p < 0.05) if p == p else None


def _prepare_label_column(df, column: str, label: str) -> None:
    """Labels of ``column`` as strings (in place); E151 for values outside a metric's labels, E080 when ``label``
    is not one of the column's labels."""
    df[column] = label_strings(df[column])
    check_label_vocabulary(df[column].tolist(), column)
    known = metric_labels(column) or sorted(set(df[column].dropna()))
    if str(label) not in known:  # 'POSITIVE' would be 0 of n in every group: a test of nothing
        raise BiaskitError(
            "E080",
            f"label {label!r} is not a label of column {column!r}",
            value=label,
            options=known,
            fix="pass --label with one of the column's labels (exact spelling)",
        )


def min_expected_count(ca: int, na: int, cb: int, nb: int) -> float:
    """The smallest expected cell count of the 2x2 table (label / not label x group A / B) under equal shares."""
    pooled = (ca + cb) / (na + nb)
    return min(na, nb) * min(pooled, 1.0 - pooled)


@dataclass(frozen=True)
class _Share:
    """The share a family of tests compares: of ``label`` in ``column``, between values of ``group``, the texts
    clustered by column ``cluster`` (None: independent texts)."""

    group: str
    column: str
    label: str
    cluster: str | None = None


def _pair_interval(fam, share: _Share, a: str, b: str, row: dict) -> dict:
    """``ci_low, ci_high, method, cluster, n_clusters, reason`` of the pair's difference p_a - p_b, and the test's
    ``z``/``p_value`` where they replace the pooled z-test's. The method the data support is picked:

    - no cluster: Newcombe's hybrid score interval; the pooled z-test when every cell expects at least
      :data:`MIN_EXPECTED` texts, else Fisher's exact test (``fisher-exact``, z nan);
    - a cluster column: :func:`~biaskit.evaluate.stats.cluster.cluster_diff` (CR1 with plenty of clusters, CR2 with
      Bell-McCaffrey degrees of freedom with few); nan and ``method`` none with the ``reason`` when a group lies
      in one cluster or every cluster id is null."""
    group, column, label, cluster = share.group, share.column, share.label, share.cluster
    out = {"ci_low": math.nan, "ci_high": math.nan, "method": NO_METHOD, "cluster": cluster, "n_clusters": None, "reason": None}
    nan = {"z": math.nan, "p_value": math.nan}
    if not row["n_a"] or not row["n_b"]:
        return {**out, **nan, "reason": "a group has no text with a valid label"}
    if cluster is None:
        out["ci_low"], out["ci_high"] = newcombe_interval(row["count_a"], row["n_a"], row["count_b"], row["n_b"], level=0.95)
        out["method"] = NEWCOMBE_METHOD
        if row["p_value"] != row["p_value"]:
            return {**out, "reason": "no test: the label's share is 0 or 1 in both groups"}
        if min_expected_count(row["count_a"], row["n_a"], row["count_b"], row["n_b"]) < MIN_EXPECTED:
            p, _ = fisher_exact_2x2(row["count_a"], row["n_a"], row["count_b"], row["n_b"])
            out.update(method=FISHER_METHOD, z=math.nan, p_value=float(p[0]))
        return out
    sub = fam[fam[group].isin([a, b]) & ~is_missing(fam[column])]
    if sub[cluster].isna().all():
        return {**out, **nan, "n_clusters": 0, "reason": f"every cluster id in column {cluster!r} is null: no cluster to estimate the variance from"}
    r = cluster_diff((sub[column] == label).to_numpy(dtype=float), (sub[group] == a).to_numpy(), sub[cluster].tolist())
    out.update(ci_low=r["ci_low"], ci_high=r["ci_high"], n_clusters=r["n_clusters"], z=r["z"], p_value=r["p_value"])
    if r["undefined"]:
        out.update(method=NO_METHOD, reason=r["undefined"])
    else:
        out["method"] = r["method"]
    return out


def _proportion_family(fam, share: _Share, pairs, base: dict) -> list[dict]:
    """The z-test rows of one family (before correction): (count of the label, valid rows, null rows) per group,
    then one test per pair (nan figures when a side has no valid row), with the interval of the difference."""
    group, column, label = share.group, share.column, share.label
    stats = {}
    for g, sub in fam.groupby(group, sort=True):
        miss = is_missing(sub[column])
        stats[g] = (int((sub.loc[~miss, column] == label).sum()), int((~miss).sum()), int(miss.sum()))
    fam_rows = []
    for a, b in _pairs(sorted(stats), pairs):
        if a not in stats or b not in stats:
            continue
        ca, na, nna = stats[a]
        cb, nb, nnb = stats[b]
        row = {**base, "group_a": a, "group_b": b, "count_a": ca, "n_a": na, "count_b": cb, "n_b": nb, "n_null_a": nna, "n_null_b": nnb}
        if na == 0 or nb == 0:
            row = {**row, **{k: float("nan") for k in _ZTEST_FIGURES}}
        else:
            row = {**row, **two_proportion_ztest(ca, na, cb, nb)}
        fam_rows.append({**row, **_pair_interval(fam, share, a, b, row)})
    return fam_rows


def pairwise_proportion_tests(
    table: Any,
    group: str,
    column: str,
    label: str,
    *,
    within: str | Sequence[str] = (),
    pairs: Sequence[tuple[str, str]] | None = None,
    correction: str = "holm",
    cluster: str | None = None,
):
    """Two-proportion z-tests of the share of ``label`` in ``column`` between every pair of ``group`` values.

    ``diff`` = p_a - p_b with ``ci_low``/``ci_high`` at 95%. The ``method`` column names the method used (see
    :func:`_pair_interval`): ``newcombe`` (Newcombe's hybrid score interval, pooled z-test), ``fisher-exact``
    (Newcombe's interval, Fisher's exact p: a cell expects fewer than :data:`MIN_EXPECTED` texts), or with ``cluster``
    (a column: page_id, template, ...; ``"auto"`` picks page_id / template_id / template, see
    :func:`~biaskit.evaluate.stats.cluster.resolve_cluster`) ``cr1-wald`` (CR1, both groups with at least
    :data:`~biaskit.evaluate.stats.cluster.MIN_CLUSTERS_CR1` clusters) or ``cr2-bm-t`` (CR2 with Bell-McCaffrey
    degrees of freedom), whose z (t) and p then replace the pooled z-test's; ``none`` with a ``reason`` and nan
    figures where the data support no test (a group in one cluster, null cluster ids, no valid text).

    ``within``: run the family separately inside each value of these columns (e.g. ``model``, ``domain``);
    the correction is applied per family. Rows with a null label are counted (``n_null_a/b``), not used.
    Returns a DataFrame: within columns, ``group_a, group_b, count_a, n_a, count_b, n_b, n_null_a, n_null_b,
    p_a, p_b, diff, z, p_value, p_adjusted, cohen_h, significant`` (p_adjusted < 0.05; None without a p), ``ci_low,
    ci_high, method, cluster, n_clusters, reason``.
    """
    import pandas as pd

    df = to_frame(table)
    within = as_list(within)
    require_columns(df, [group, column, *within], "pairwise proportion tests")
    cluster = resolve_cluster(df, cluster)
    df = fill_keys(df, [group, *within])
    _check_pairs(df, group, pairs)
    _prepare_label_column(df, column, label)
    share = _Share(group, column, label, cluster)
    rows = []
    for wkey, fam in groups_of(df, within):
        fam_rows = _proportion_family(fam, share, pairs, dict(zip(within, wkey)))
        _adjust_family(fam_rows, correction)
        rows += fam_rows
    return pd.DataFrame(rows, columns=[*within, *_PROPORTION_TEST_COLUMNS])


def pairwise_mann_whitney(
    table: Any, group: str, value: str, *, within: str | Sequence[str] = (), pairs: Sequence[tuple[str, str]] | None = None, correction: str = "holm"
):
    """Mann-Whitney U between every pair of ``group`` values on a numeric column, corrected per family."""
    import pandas as pd

    df = to_frame(table)
    within = as_list(within)
    require_columns(df, [group, value, *within], "pairwise Mann-Whitney tests")
    df = fill_keys(df, [group, *within])
    _check_pairs(df, group, pairs)
    rows = []
    for wkey, fam in groups_of(df, within):
        vals = {g: pd.to_numeric(sub[value], errors="coerce") for g, sub in fam.groupby(group, sort=True)}
        fam_rows = []
        for a, b in _pairs(sorted(vals), pairs):
            if a not in vals or b not in vals:
                continue
            r = mann_whitney(vals[a].dropna().to_numpy(), vals[b].dropna().to_numpy())
            fam_rows.append(
                {
                    **dict(zip(within, wkey)),
                    "group_a": a,
                    "group_b": b,
                    "n_null_a": int(vals[a].isna().sum()),
                    "n_null_b": int(vals[b].isna().sum()),
                    **r,
                }
            )
        _adjust_family(fam_rows, correction)
        rows += fam_rows
    cols = [
        *within,
        "group_a",
        "group_b",
        "n_a",
        "n_b",
        "n_null_a",
        "n_null_b",
        "median_a",
        "median_b",
        "u",
        "p_value",
        "p_adjusted",
        "rank_biserial",
        "significant",
    ]
    return pd.DataFrame(rows, columns=cols)


def chi2_by(table: Any, group: str, column: str, *, within: str | Sequence[str] = (), correction: bool = False):
    """Chi-square test of homogeneity of ``column``'s label distribution across ``group`` values,
    one test per value of ``within``. Returns the contingency size, chi2, dof, p and Cramér's V."""
    import pandas as pd

    df = to_frame(table)
    within = as_list(within)
    require_columns(df, [group, column, *within], "chi-square test")
    df = fill_keys(df, [group, *within])

    df[column] = label_strings(df[column])
    rows = []
    for wkey, fam in groups_of(df, within):
        miss = is_missing(fam[column])
        ct = pd.crosstab(fam.loc[~miss, group], fam.loc[~miss, column])
        res = (
            chi2_homogeneity(ct.values, correction=correction)
            if ct.size
            else {"chi2": float("nan"), "p_value": float("nan"), "dof": 0, "n": 0, "cramers_v": float("nan")}
        )
        rows.append(
            {
                **dict(zip(within, wkey)),
                "groups": int(ct.shape[0]),
                "labels": int(ct.shape[1]) if ct.ndim == 2 else 0,
                "n_null": int(miss.sum()),
                **res,
            }
        )
    return pd.DataFrame(rows, columns=[*within, "groups", "labels", "n_null", "n", "chi2", "dof", "p_value", "cramers_v"])
