"""Prediction-powered inference (PPI, PPI++) of a label's share per group: the metric corrected by human labels.

The metric labels every text; humans label a sample. Per group there are n labelled rows (human label Y and
metric label Ŷ, both 0/1 for "is label L") and N unlabelled rows (only Ŷᵤ; the rows without a human label).

- Estimate (Angelopoulos et al., Science 2023; PPI++, Angelopoulos, Duchi & Zrnic 2023):
  ``θ = λ·mean(Ŷᵤ) + mean(Y − λ·Ŷ)``. λ = 1 is classic PPI; by default λ is power-tuned (PPI++):
  ``λ = cov(Y, Ŷ) / ((1 + n/N)·var(Ŷ ∪ Ŷᵤ))`` clipped to [0, 1], the covariance with 1/n over the labelled rows,
  the variance ``np.cov`` (ddof 1) over labelled and unlabelled predictions pooled (as ``ppi_py`` 0.2.3).
- Interval (normal, method ``ppi++-wald`` / ``ppi-wald``): ``θ ± z·sqrt(λ²·var(Ŷᵤ)/N + var(Y − λŶ)/n)``, both
  variances with ddof 0 (numpy's ``std``, as ``ppi_py.ppi_mean_ci``). Tests check equality with ``ppi_py`` to 1e-9.
- Gap of two independent groups: ``θ_a − θ_b`` with ``SE = sqrt(se_a² + se_b²)`` and a normal interval.

The PPI estimate is unbiased when the labelled rows are a uniform random sample of the group's rows; the
metric's own share is biased wherever the metric errs more in one group. A round drawn with score-bin strata is
not a uniform sample: the result carries a note then.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from biaskit.errors import BiaskitError
from biaskit.evaluate.stats._common import check_ci, fill_keys, is_missing, require_columns, to_frame
from biaskit.evaluate.stats.aggregate import check_label_vocabulary, label_strings, metric_labels, proportion_ci
from biaskit.evaluate.stats.columns import INTERVAL
from biaskit.evaluate.stats.inference import newcombe_interval
from biaskit.evaluate.stats.inference import normal_quantile as _z
from biaskit.labels import check_values

#: the ``measure`` values of :func:`ppi_table`'s rows
MEASURES = ("share_metric", "share_human", "share_ppi", "gap_metric", "gap_human", "gap_ppi")
#: columns of :func:`ppi_table`'s result
PPI_COLUMNS = [
    "group",
    "group_a",
    "group_b",
    "measure",
    *INTERVAL,
    "se",
    "n_labelled",
    "n_unlabelled",
    "lam",
    "method",
    "reason",
]


#: PPI's normal interval is given only where a group meets its conditions (else nan and the reason, never a
#: confident number): at least MIN_LABELLED labelled rows; at least MIN_EXPECTED_EACH labelled rows expected with and
#: without the label (labelled rows x the metric's share over all the group's rows: a figure the labelled sample
#: barely moves, so the condition selects no lucky samples); at least MIN_OBSERVED_EACH observed with and without it
#: (by human label); a positive standard error. Without them the human-minus-metric variance comes from a handful of
#: rows: with a 3% label and 20 labelled rows per group PPI++ gave [0, 0] (se 0) for half the groups and covered 33%.
#: By simulation (tests/evaluate/stats/test_ppi_conditions.py; base rate 0.01-0.5, labelled rows 10-500, metric recall
#: 0.7 and false alarms 0.05) PPI++ covers at least 0.90 in every cell where the conditions hold
MIN_LABELLED = 30
MIN_EXPECTED_EACH = 10
MIN_OBSERVED_EACH = 2


class PPIData(NamedTuple):
    """One group's data for PPI, each 0/1 per row: the human labels of its labelled rows (``y``), the metric's labels
    of those rows (``yhat``) and the metric's labels of its unlabelled rows (``yhat_unlabelled``)."""

    y: Any
    yhat: Any
    yhat_unlabelled: Any


def ppi_condition_failed(y, metric_share: float) -> str | None:
    """The condition of PPI's normal interval that a group fails, as the reason a reader sees, or None when it meets
    them (see :data:`MIN_LABELLED`): ``y`` the human labels (0/1) of its labelled rows, ``metric_share`` the metric's
    share of the label over all its rows."""
    y = np.asarray(y, dtype=float)
    n, pos = int(y.size), int(y.sum())
    if n < MIN_LABELLED:
        return f"too few labelled rows for PPI's interval: {n} (needs {MIN_LABELLED})"
    expected = min(n * metric_share, n * (1.0 - metric_share))
    if expected < MIN_EXPECTED_EACH:
        return (
            f"label too rare or too common for PPI's interval with {n} labelled rows: about {expected:.1f} expected on the rarer side "
            f"(the metric's share {metric_share:.3f}; needs {MIN_EXPECTED_EACH}): label more rows"
        )
    if min(pos, n - pos) < MIN_OBSERVED_EACH:
        return f"too few labelled rows with or without the label for PPI's interval: {pos} and {n - pos} (needs {MIN_OBSERVED_EACH} each)"
    return None


def ppi_lambda(y, yhat, yhat_unlabelled) -> float:
    """The power-tuned λ of PPI++ for a mean (see the module docstring), clipped to [0, 1]. 0 when the
    predictions have no spread (they carry no information)."""
    y, yh, yu = (np.asarray(v, dtype=float) for v in (y, yhat, yhat_unlabelled))
    n, big_n = y.size, yu.size
    cov = float(np.mean((y - y.mean()) * (yh - yh.mean())))
    var = float(np.var(np.concatenate([yh, yu]), ddof=1))
    if not var > 0:
        return 0.0
    return float(np.clip(cov / ((1.0 + n / big_n) * var), 0.0, 1.0))


def check_lam(lam: float | None) -> None:
    """E342 for a fixed λ outside [0, 1]."""
    if lam is not None and not (0.0 <= float(lam) <= 1.0):
        raise BiaskitError("E342", "λ must be between 0 and 1", value=lam, fix="--lam 1 for classic PPI; leave it out for PPI++")


def ppi_mean(y, yhat, yhat_unlabelled, *, lam: float | None = None, level: float = 0.95) -> dict[str, Any]:
    """PPI (``lam=1``), PPI with a fixed λ, or PPI++ (``lam=None``: power-tuned) estimate of a mean with its
    standard error and normal interval: ``estimate, se, ci_low, ci_high, lam, method``.

    E342 with fewer than 2 labelled or no unlabelled rows (the estimate needs both)."""
    y, yh, yu = (np.asarray(v, dtype=float) for v in (y, yhat, yhat_unlabelled))
    if y.size != yh.size:
        raise BiaskitError(
            "E342",
            "human and metric labels of the labelled rows differ in length",
            value=(y.size, yh.size),
            fix="pass one metric label per labelled row",
        )
    if y.size < 2 or yu.size < 1:
        raise BiaskitError(
            "E342",
            "PPI needs at least 2 labelled and 1 unlabelled row",
            value={"n_labelled": int(y.size), "n_unlabelled": int(yu.size)},
            fix="label more rows of this group, or leave some rows of the scored table without a human label",
        )
    tuned = lam is None
    check_lam(lam)
    lam = ppi_lambda(y, yh, yu) if lam is None else float(lam)
    est = lam * float(yu.mean()) + float((y - lam * yh).mean())
    se = math.sqrt((lam * yu).std() ** 2 / yu.size + (y - lam * yh).std() ** 2 / y.size)
    z = _z(level)
    return {"estimate": est, "se": se, "ci_low": est - z * se, "ci_high": est + z * se, "lam": lam, "method": "ppi++-wald" if tuned else "ppi-wald"}


def ppi_mean_batch(y, yhat, yhat_unlabelled, *, lam: float | None = None, level: float = 0.95) -> dict[str, np.ndarray]:
    """:func:`ppi_mean` of many data sets of one size at once (rows of ``y``/``yhat``: sets x n; ``yhat_unlabelled``:
    sets x N), for simulations and planning: arrays ``estimate, se, ci_low, ci_high, lam``."""
    check_lam(lam)
    y, yh, yu = (np.atleast_2d(np.asarray(v, dtype=float)) for v in (y, yhat, yhat_unlabelled))
    n, big_n = y.shape[1], yu.shape[1]
    if lam is None:
        cov = np.mean((y - y.mean(axis=1, keepdims=True)) * (yh - yh.mean(axis=1, keepdims=True)), axis=1)
        var = np.var(np.concatenate([yh, yu], axis=1), axis=1, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            lam_v = np.where(var > 0, np.clip(cov / ((1.0 + n / big_n) * var), 0.0, 1.0), 0.0)
    else:
        lam_v = np.full(y.shape[0], float(lam))
    est = lam_v * yu.mean(axis=1) + (y - lam_v[:, None] * yh).mean(axis=1)
    se = np.sqrt((lam_v[:, None] * yu).std(axis=1) ** 2 / big_n + (y - lam_v[:, None] * yh).std(axis=1) ** 2 / n)
    z = _z(level)
    return {"estimate": est, "se": se, "ci_low": est - z * se, "ci_high": est + z * se, "lam": lam_v}


def gap(a: dict[str, Any], b: dict[str, Any], *, level: float = 0.95) -> dict[str, Any]:
    """Difference of two independent estimates (``estimate`` and ``se`` each): normal interval, SE = sqrt(se_a² + se_b²)."""
    d = a["estimate"] - b["estimate"]
    se = math.sqrt(a["se"] ** 2 + b["se"] ** 2)
    z = _z(level)
    return {"estimate": d, "se": se, "ci_low": d - z * se, "ci_high": d + z * se}


def _row(group, measure: str, **kw) -> dict[str, Any]:
    r = dict.fromkeys(PPI_COLUMNS)
    r.update(group=group, measure=measure, **kw)
    return r


@dataclass
class _Fitted:
    """One group's PPI result as its gaps to other groups read it: (metric count, rows, human count, labelled rows,
    unlabelled rows), its PPI estimate (None when undefined) and why it is undefined."""

    group: Any
    counts: tuple[int, int, int, int, int]
    est: dict | None
    reason: str | None


def _group_rows(g, data: PPIData, lam, level) -> tuple[list[dict], dict | None]:
    """share_metric, share_human and share_ppi rows of one group, and its PPI estimate (None when undefined)."""
    y_lab, yh_lab, unl = data
    yh_all = np.concatenate([yh_lab, unl])
    n, big_n = int(y_lab.size), int(yh_all.size - y_lab.size)
    counts = {"n_labelled": n, "n_unlabelled": big_n}
    km = int(yh_all.sum())
    lo, hi = proportion_ci(km, int(yh_all.size), ci=level)
    rows = [_row(g, "share_metric", estimate=km / yh_all.size, ci_low=lo, ci_high=hi, method="wilson", **counts)]
    if n:
        kh = int(y_lab.sum())
        lo, hi = proportion_ci(kh, n, ci=level)
        rows.append(_row(g, "share_human", estimate=kh / n, ci_low=lo, ci_high=hi, method="wilson", **counts))
    else:
        rows.append(_row(g, "share_human", method="wilson", reason="no labelled row in this group", **counts))
    try:
        est = ppi_mean(y_lab, yh_lab, unl, lam=lam, level=level)
    except BiaskitError as exc:
        rows.append(_row(g, "share_ppi", method="none", reason=exc.what, **counts))
        return rows, None
    why = ppi_condition_failed(y_lab, km / yh_all.size) or (None if est["se"] > 0 else "PPI's standard error is 0: no spread to estimate it from")
    if why is not None:  # never a confident number from a method whose condition fails: nan and the reason
        rows.append(_row(g, "share_ppi", method="none", reason=why, **counts))
        return rows, None
    rows.append(
        _row(
            g,
            "share_ppi",
            estimate=est["estimate"],
            ci_low=est["ci_low"],
            ci_high=est["ci_high"],
            se=est["se"],
            lam=est["lam"],
            method=est["method"],
            **counts,
        )
    )
    return rows, est


def ppi_shares(groups: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], *, lam: float | None = None, level: float = 0.95):
    """The :data:`PPI_COLUMNS` rows from arrays per group: ``{group: (y_labelled, yhat_labelled, yhat_unlabelled)}``.

    Per group share_metric (all rows, Wilson), share_human (labelled rows, Wilson) and share_ppi; per pair of
    groups gap_metric and gap_human (Newcombe) and gap_ppi (normal, SE from both groups)."""
    import pandas as pd

    check_lam(lam)
    rows, fitted = [], {}
    for g in sorted(groups):
        y, yh, yu = (np.asarray(v, dtype=float) for v in groups[g])
        allm = np.concatenate([yh, yu])
        r, e = _group_rows(g, PPIData(y, yh, yu), lam, level)
        rows += r
        why = next((x["reason"] for x in r if x["measure"] == "share_ppi" and x["reason"]), None)
        fitted[g] = _Fitted(g, (int(allm.sum()), int(allm.size), int(y.sum()), int(y.size), int(yu.size)), e, why)
    for a, b in itertools.combinations(sorted(groups), 2):
        rows += _gap_rows(fitted[a], fitted[b], lam, level)
    return pd.DataFrame(rows, columns=PPI_COLUMNS)


def _gap_rows(fa: _Fitted, fb: _Fitted, lam, level) -> list[dict]:
    a, b = fa.group, fb.group
    kma, nma, kha, nha, ua = fa.counts
    kmb, nmb, khb, nhb, ub = fb.counts
    both = {"group_a": a, "group_b": b, "n_labelled": nha + nhb, "n_unlabelled": ua + ub}
    lo, hi = newcombe_interval(kma, nma, kmb, nmb, level=level)
    out = [_row(None, "gap_metric", estimate=kma / nma - kmb / nmb, ci_low=lo, ci_high=hi, method="newcombe", **both)]
    if nha and nhb:
        lo, hi = newcombe_interval(kha, nha, khb, nhb, level=level)
        out.append(_row(None, "gap_human", estimate=kha / nha - khb / nhb, ci_low=lo, ci_high=hi, method="newcombe", **both))
    else:
        out.append(_row(None, "gap_human", method="newcombe", reason="a group has no labelled row", **both))
    meth = ("ppi++-wald" if lam is None else "ppi-wald") + " (independent groups)"
    if fa.est is None or fb.est is None:
        why = "; ".join(f"{f.group}: {f.reason}" for f in (fa, fb) if f.reason)
        out.append(_row(None, "gap_ppi", method="none", reason=f"the PPI share of a group is undefined ({why})", **both))
    else:
        gp = gap(fa.est, fb.est, level=level)
        out.append(_row(None, "gap_ppi", estimate=gp["estimate"], ci_low=gp["ci_low"], ci_high=gp["ci_high"], se=gp["se"], method=meth, **both))
    return out


def ppi_gap_rows(result) -> Any:
    """The ``gap_ppi`` rows of a :func:`ppi_table` / :func:`ppi_shares` result (for the report's headline)."""
    return result[result["measure"] == "gap_ppi"].reset_index(drop=True)


def binary(series, label: str):
    """1.0 where the value is ``label``, 0.0 for another label, nan where null (booleans as 'true'/'false')."""
    s = label_strings(series)
    miss = is_missing(s)
    return np.where(miss.to_numpy(), np.nan, (s == str(label)).to_numpy(dtype=float))


@dataclass(frozen=True)
class PPIShare:
    """The share PPI estimates: of ``label``, per value of column ``by``, from the metric's label of every row
    (``metric_column``) and the human label of the labelled rows (``human_column``; null: an unlabelled row)."""

    metric_column: str
    human_column: str
    label: str
    by: str


def ppi_table(table: Any, share: PPIShare, *, lam: float | None = None, level: float = 0.95):
    """PPI of the ``share`` (:class:`PPIShare`) from one table. Rows whose metric label is null are left out (they
    are failed rows; E343 when none is left in a group). Returns :data:`PPI_COLUMNS` rows."""
    metric_column, human_column, label, by = share.metric_column, share.human_column, share.label, share.by
    check_ci(level)
    df = to_frame(table)
    require_columns(df, [metric_column, human_column, by], "stats ppi", "pass --metric-column, --human-column and --by with columns of the table")
    df = fill_keys(df, [by])
    check_human_labels(df, metric_column, human_column)
    m, h = binary(df[metric_column], label), binary(df[human_column], label)
    _check_label_present(df, metric_column, human_column, label)
    groups = {}
    for g, idx in df.groupby(by, sort=True).indices.items():
        mg, hg = m[idx], h[idx]
        ok = ~np.isnan(mg)
        if not ok.any():
            raise BiaskitError(
                "E343", f"group {g!r} has no row with a metric label", value=g, fix="score the table (failed rows have a null metric label)"
            )
        mg, hg = mg[ok], hg[ok]
        lab = ~np.isnan(hg)
        groups[g] = (hg[lab], mg[lab], mg[~lab])
    return ppi_shares(groups, lam=lam, level=level)


def check_human_labels(df, metric_column: str, human_column: str) -> None:
    """The human labels against the label set, as ``annotate`` checks a round's labels: the metric's declared labels
    (E151 for a metric column holding others), else the labels the metric column holds. E151 lists the unknown
    values (``POSITIVE``, a ``"nan"`` string, ``SUPER``) and the expected set; E350 when the human column holds no
    label at all (every value null: an unquoted ``NaN``, ``nan`` or empty cell in a CSV reads as null), where every
    row would count as unlabelled. Nulls elsewhere are the unlabelled rows."""
    metric = label_strings(df[metric_column])
    known = metric_labels(metric_column)
    if known is not None:
        check_label_vocabulary(metric.tolist(), metric_column)
    labels = list(known) if known is not None else sorted(set(metric.dropna()))
    human = label_strings(df[human_column])
    if human.isna().all():
        raise BiaskitError(
            "E350",
            f"the human label column {human_column!r} holds no label: every value is null",
            value={"rows": len(human), "null": int(human.isna().sum())},
            options=labels,
            fix="write the human labels with the metric's label names (a CSV reads NaN, nan and empty cells as null), or pass the round with --samples",
        )
    check_values(human.tolist(), labels, what="stats ppi: the human labels", column=human_column, code="E151", of=f"column {metric_column!r}")


def _check_label_present(df, metric_column: str, human_column: str, label: str) -> None:
    seen = set(label_strings(df[metric_column]).dropna()) | set(label_strings(df[human_column]).dropna())
    if str(label) not in seen:
        raise BiaskitError(
            "E344",
            f"label {label!r} occurs in neither {metric_column!r} nor {human_column!r}",
            value=label,
            options=sorted(seen)[:20],
            fix="pass --label with a label of the columns (exact spelling)",
        )
