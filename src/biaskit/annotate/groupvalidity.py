"""Is a metric equally valid for every group? (``biaskit annotate validate --by group``)

For each group (any column of the samples table: group, domain, source, language, template) the metric's
labels are compared with the human labels of that group's items:

* ``group_accuracy``, ``group_f1_macro`` (mean per-class F1 over the classes present in the group, by humans
  or by the metric), ``group_spearman_rho`` (human ordinal label vs the metric's score);
* per class ``c``: ``group_miss_rate_<c>`` = P(metric != c | human = c) (false-negative rate) and
  ``group_false_alarm_rate_<c>`` = P(metric = c | human != c) (false-positive rate).

Intervals come from the inference layer (:mod:`biaskit.evaluate.stats.inference`, method in ``method``):
accuracy, miss and false-alarm rates are shares, with 95% Wilson intervals (never [1, 1] for an all-correct
small group: 8 of 8 gives [0.676, 1.0]); macro-F1 and Spearman's rho have no closed form and get BCa bootstrap
intervals over the group's items (``n_boot`` resamples; none when ``n_boot`` is 0). A group with fewer than
``min_n`` (30) items keeps its rows with ``note`` = ``small group: n < 30``: flagged, never hidden.

Per-group rows name their group in ``group``. For every pair of groups (``group_a`` = a, ``group_b`` = b) and every
rate r (accuracy, miss and false-alarm rates): ``diff_<r>`` = r(a) - r(b) with Newcombe's hybrid score interval,
``ratio_<r>`` = r(a) / r(b) with the log interval (Katz, 0.5 added to each count), and the two-sided Fisher exact
test of the 2x2 table (group x hit / miss): ``p_value`` is its p, ``p_floor`` the smallest p its margins allow,
and ``p_holm`` is Holm-corrected within its metric-fairness family
(:func:`biaskit.evaluate.stats.families.holm_metric_fairness`: the primary family holds the accuracy of every pair
of groups, the secondary one every pair x every other rate; ``family``, ``family_size``), the same p the report's
"Is the metric fair?" section and headline show.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Any

import numpy as np
from scipy.stats import rankdata

from biaskit.annotate.agreement import agreement_row
from biaskit.annotate.rankstats import spearman
from biaskit.bootstrap import BootSpec
from biaskit.evaluate.stats import inference as inf
from biaskit.evaluate.stats.families import holm_metric_fairness

MIN_N = 30
LEVEL = 0.95


def _rates_from_cm(cm: np.ndarray, labels: Sequence[str]) -> dict[str, np.ndarray]:
    """Rates from confusion matrices ``cm[..., true, pred]`` (any leading shape); NaN where undefined."""
    cm = np.asarray(cm, dtype=float)
    n = cm.sum(axis=(-2, -1))
    tp = np.diagonal(cm, axis1=-2, axis2=-1)
    true_n = cm.sum(axis=-1)
    pred_n = cm.sum(axis=-2)
    out: dict[str, np.ndarray] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        out["accuracy"] = tp.sum(axis=-1) / n
        prec = tp / pred_n
        rec = tp / true_n
        f1 = np.where((pred_n + true_n) > 0, 2 * tp / (pred_n + true_n), np.nan)
        present = (pred_n + true_n) > 0
        out["f1_macro"] = np.where(present.any(axis=-1), np.nansum(np.where(present, f1, 0.0), axis=-1) / present.sum(axis=-1), np.nan)
        for j, lab in enumerate(labels):
            out[f"miss_rate_{lab}"] = 1.0 - rec[..., j]
            fp = pred_n[..., j] - tp[..., j]
            neg = n - true_n[..., j]
            out[f"false_alarm_rate_{lab}"] = fp / neg
    del prec
    return out


def rate_measures(labels: Sequence[str]) -> list[str]:
    """The rates compared between groups, in table order."""
    return ["accuracy", *[f"miss_rate_{c}" for c in labels], *[f"false_alarm_rate_{c}" for c in labels]]


def _rate_counts(cm: np.ndarray, labels: Sequence[str]) -> dict[str, tuple[int, int]]:
    """(hits, items) of every share-type rate of a k x k confusion matrix ``cm[true, pred]``: accuracy = right / all;
    miss rate of c = (human c, metric not c) / human c; false-alarm rate of c = (metric c, human not c) / human not c."""
    n = int(cm.sum())
    tp = np.diagonal(cm)
    true_n = cm.sum(axis=1)
    pred_n = cm.sum(axis=0)
    out = {"accuracy": (int(tp.sum()), n)}
    for j, lab in enumerate(labels):
        out[f"miss_rate_{lab}"] = (int(true_n[j] - tp[j]), int(true_n[j]))
    for j, lab in enumerate(labels):
        out[f"false_alarm_rate_{lab}"] = (int(pred_n[j] - tp[j]), int(n - true_n[j]))
    return out


@dataclass
class _Group:
    """One group's items (``members``: positions in the inputs; ``codes``: their (human, metric) cell codes), the
    counts of its cells, its observed figures, the (hits, items) of each share-type rate and the ``note`` its rows
    carry (a small group)."""

    name: str
    members: np.ndarray
    codes: np.ndarray
    counts: np.ndarray
    obs: dict[str, float]
    hits: dict[str, tuple[int, int]]
    note: str | None = None

    @property
    def n(self) -> int:
        return len(self.members)


@dataclass(frozen=True)
class GroupedItems:
    """The items of one metric's validation by group, one entry per item: the human label (``y_true``), the metric's
    label (``y_pred``) and the item's group; with ``h_rank`` and ``score`` (the human label's rank on the ordinal
    scale and the metric's score, None where an item has none) Spearman's rho per group too."""

    y_true: Sequence[str]
    y_pred: Sequence[str]
    groups: Sequence[Any]
    h_rank: Sequence[float | None] | None = None
    score: Sequence[float | None] | None = None


@dataclass(frozen=True)
class RowKey:
    """What every row of one validation by group names: its ``round``, ``task`` and ``metric``, and the column the
    groups come from (``by``, written as ``group_by``)."""

    round: str
    task: str
    metric: str
    by: str


def group_rows(items: GroupedItems, labels: Sequence[str], *, key: RowKey, boot: BootSpec = BootSpec(), min_n: int = MIN_N) -> list[dict[str, Any]]:
    """Per-group and pairwise agreement-stage rows of one metric (see the module docstring); ``boot``: the BCa
    resamples of the figures without a closed form (macro-F1, Spearman) and their seed (group i: ``seed + i``)."""
    y_true, y_pred, groups, h_rank, score = items.y_true, items.y_pred, items.groups, items.h_rank, items.score
    round, task, metric, by = key.round, key.task, key.metric, key.by
    labels = list(labels)
    k = len(labels)
    idx = {lab: i for i, lab in enumerate(labels)}
    code = np.array([idx[a] * k + idx[b] for a, b in zip(y_true, y_pred)], dtype=np.int64)
    # a null grouping value, None or a float NaN (a float --by column), is the group "(missing)", never "nan"
    gvals = np.array(["(missing)" if g is None or (isinstance(g, float) and g != g) else str(g) for g in groups], dtype=object)

    def row(measure: str, value: float | None, **kw: Any) -> dict[str, Any]:
        return agreement_row(round, task, measure, value, **kw, metric=metric, group_by=by)  # metric, group_by last, as always

    rows: list[dict[str, Any]] = []
    stats: dict[str, _Group] = {}
    for gi, g in enumerate(sorted(set(gvals))):
        gs = stats[g] = _group_stats(g, np.flatnonzero(gvals == g), code, labels)
        gs.note = f"small group: n < {min_n}" if gs.n < min_n else None
        group_boot = replace(boot, seed=boot.seed + gi)
        rows += _group_rate_rows(row, gs, labels, group_boot)
        if h_rank is not None and score is not None:
            rows.append(_group_spearman_row(row, gs, h_rank, score, group_boot))

    rows += _pair_rows(row, stats, labels, min_n=min_n, family_key={"metric": metric, "group_by": by})
    return rows


def _group_stats(name: str, members: np.ndarray, code: np.ndarray, labels: list[str]) -> _Group:
    """A group's cell counts, observed rates and the (hits, items) of its share-type rates."""
    k = len(labels)
    c = np.bincount(code[members], minlength=k * k)
    cm = c.reshape(k, k)
    obs = {r: float(v) for r, v in _rates_from_cm(cm, labels).items()}
    return _Group(name, members, code[members], c, obs, _rate_counts(cm, labels))


def _batch_confusion(codes: np.ndarray, kk: int) -> np.ndarray:
    """Cell counts (``..., kk``) of arrays of item codes (``..., m``), by one offset bincount."""
    flat = codes.reshape(-1, codes.shape[-1])
    off = (np.arange(flat.shape[0]) * kk)[:, None]
    bc = np.bincount((flat + off).ravel(), minlength=flat.shape[0] * kk).reshape(flat.shape[0], kk)
    return bc.reshape(codes.shape[:-1] + (kk,))


def _f1_interval(codes: np.ndarray, labels: list[str], boot: BootSpec) -> tuple[float | None, float | None]:
    """BCa interval of the macro-F1 of a group's items (no closed form)."""
    k = len(labels)

    def stat(c, axis=-1):
        cm = _batch_confusion(np.moveaxis(np.asarray(c), axis, -1), k * k)
        return _rates_from_cm(cm.reshape(cm.shape[:-1] + (k, k)), labels)["f1_macro"]

    return inf.bca_interval((codes,), stat, boot=boot)


def _group_rate_rows(row: Callable[..., dict[str, Any]], gs: _Group, labels: list[str], boot: BootSpec) -> list[dict[str, Any]]:
    """``group_<rate>`` rows of one group: accuracy, macro-F1, miss and false-alarm rate per class, with CIs
    (Wilson for the shares, BCa for macro-F1)."""
    rows = []
    for r in ("accuracy", "f1_macro", *rate_measures(labels)[1:]):
        v = gs.obs[r]
        err = None
        if r == "f1_macro":
            n_used = gs.n
            lo, hi = _f1_interval(gs.codes, labels, boot) if np.isfinite(v) else (None, None)
            method = inf.BCA if lo is not None else None
        else:
            x, n_used = gs.hits[r]
            lab = r.split("_rate_", 1)[-1]
            if not n_used:
                err = (
                    f"no item of the group has the human label {lab!r}"
                    if r.startswith("miss_")
                    else f"every item of the group has the human label {lab!r}"
                )
            lo, hi = inf.proportion_interval(x, n_used) if n_used else (None, None)
            method = inf.WILSON if n_used else None
        rows.append(
            row(
                f"group_{r}",
                v if np.isfinite(v) else None,
                n_items=n_used,
                ci_low=lo,
                ci_high=hi,
                method=method,
                group=gs.name,
                note=gs.note,
                reason=err if not np.isfinite(v) else None,
            )
        )
    return rows


def _spearman_stat(h, s, axis=-1):
    """Spearman's rho along ``axis`` (average ranks for ties), vectorised over resamples."""
    rh = rankdata(np.moveaxis(np.asarray(h), axis, -1), axis=-1)
    rs = rankdata(np.moveaxis(np.asarray(s), axis, -1), axis=-1)
    rh = rh - rh.mean(axis=-1, keepdims=True)
    rs = rs - rs.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rh * rs).sum(axis=-1) / np.sqrt((rh * rh).sum(axis=-1) * (rs * rs).sum(axis=-1))


def _group_spearman_row(
    row: Callable[..., dict[str, Any]],
    gs: _Group,
    h_rank: Sequence[float | None],
    score: Sequence[float | None],
    boot: BootSpec,
) -> dict[str, Any]:
    """Spearman's rho of a group's human ordinal labels and scores, with a BCa interval over its items."""
    ok = [i for i in gs.members if h_rank[i] is not None and score[i] is not None]
    if len(ok) < 3:
        return row(
            "group_spearman_rho",
            None,
            n_items=len(ok),
            group=gs.name,
            note=gs.note,
            reason="fewer than 3 items with an ordinal human label and a score",
        )
    hx = np.array([h_rank[i] for i in ok], dtype=float)
    sx = np.array([score[i] for i in ok], dtype=float)
    rho, p = spearman(hx, sx)
    lo, hi = inf.bca_interval((hx, sx), _spearman_stat, boot=boot) if np.isfinite(rho) else (None, None)
    return row(
        "group_spearman_rho",
        rho,
        p_value=p if np.isfinite(p) else None,
        n_items=len(ok),
        ci_low=lo,
        ci_high=hi,
        method=inf.BCA if lo is not None else None,
        group=gs.name,
        note=gs.note,
    )


def _pair_rows(
    row: Callable[..., dict[str, Any]], stats: dict[str, _Group], labels: list[str], *, min_n: int, family_key: dict
) -> list[dict[str, Any]]:
    """``diff_<rate>`` and ``ratio_<rate>`` rows of every pair of groups, rate by rate: Newcombe and log-ratio
    intervals, Fisher exact p-values (all tests at once), Holm-corrected within the primary (accuracy) and the secondary
    (other rates) metric-fairness family."""
    pairs = list(combinations(list(stats), 2))
    tests = [(r, a, b) for r in rate_measures(labels) for a, b in pairs]
    cnt = np.array([(*stats[a].hits[r], *stats[b].hits[r]) for r, a, b in tests], dtype=np.int64).reshape(-1, 4)
    x1, n1, x2, n2 = cnt.T
    p, floor = inf.fisher_exact_2x2(x1, n1, x2, n2) if len(cnt) else (np.array([]), np.array([]))
    dlo, dhi = inf.newcombe_interval(x1, n1, x2, n2)
    rlo, rhi = inf.ratio_interval(x1, n1, x2, n2)
    rmeth = inf.ratio_methods(x1, n1, x2, n2)
    defined = (n1 > 0) & (n2 > 0)

    holm = holm_metric_fairness([r for r, _, _ in tests], [float(v) if ok else None for v, ok in zip(p, defined)], family_key)
    rows: list[dict[str, Any]] = []
    for t, (r, a, b) in enumerate(tests):
        na, nb = stats[a].n, stats[b].n
        small = f"small group: n < {min_n}" if min(na, nb) < min_n else None
        base = dict(n_items=na + nb, group_a=a, group_b=b, note=small)
        if not defined[t]:
            why = "the rate is undefined in one of the groups"
            rows += [row(f"diff_{r}", None, **base, reason=why), row(f"ratio_{r}", None, **base, reason=why)]
            continue
        va, vb = stats[a].obs[r], stats[b].obs[r]
        adj, family, size = holm[t]
        test = dict(p_value=float(p[t]), p_floor=float(floor[t]), p_holm=adj, family=family, family_size=size)
        rows.append(row(f"diff_{r}", va - vb, **base, ci_low=float(dlo[t]), ci_high=float(dhi[t]), method=inf.NEWCOMBE, **test))
        ratio = va / vb if vb > 0 else None
        rci = dict(ci_low=float(rlo[t]), ci_high=float(rhi[t]), method=str(rmeth[t])) if ratio is not None else {}
        rows.append(row(f"ratio_{r}", ratio, **base, **rci, **test, reason=None if ratio is not None else f"the rate is 0 in {b!r}"))
    return rows
