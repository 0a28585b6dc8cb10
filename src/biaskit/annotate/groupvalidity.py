"""Is a metric equally valid for every group? (``biaskit annotate validate --by group``)

For each group (any column of the samples table: group, domain, source, language, template) the metric's
labels are compared with the human labels of that group's items:

* ``group_accuracy``, ``group_f1_macro`` (mean per-class F1 over the classes present in the group, by humans
  or by the metric), ``group_spearman_rho`` (human ordinal label vs the metric's score);
* per class ``c``: ``group_miss_rate_<c>`` = P(metric != c | human = c) (false-negative rate) and
  ``group_false_alarm_rate_<c>`` = P(metric = c | human != c) (false-positive rate).

Each with a 95% percentile bootstrap CI over the group's items (``n_boot`` resamples; confusion-matrix
figures are resampled through the multinomial distribution of the item's (human, metric) cell, which is
the same as resampling items with replacement). A group with fewer than ``min_n`` (30) items keeps its rows
with ``note`` = ``small group: n < 30``: flagged, never hidden.

For every pair of groups (a, b) and every rate r (accuracy, miss and false-alarm rates): ``diff_<r>`` =
r(a) - r(b) and ``ratio_<r>`` = r(a) / r(b), with percentile CIs from the two groups' independent
bootstrap distributions, and a two-sided permutation p-value over items: the group labels of the two
groups' items are permuted (the cell counts of group a under permutation follow a multivariate
hypergeometric distribution, which is sampled exactly: ``n_boot`` permutations), p = (1 + #|d*| >= |d|) /
(1 + permutations). ``p_value_raw`` is that p; ``p_value`` is Holm-corrected over the pairs of groups for
the same metric and rate (statsmodels' ``multipletests(method="holm")``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from biaskit.annotate.agreement import _row
from biaskit.annotate.rankstats import _spearman_boot, spearman
from biaskit.bootstrap import percentile_interval

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


def _ci(vals: np.ndarray) -> tuple[float | None, float | None]:
    return percentile_interval(vals, LEVEL, min_finite=max(10, len(vals) // 10))


def rate_measures(labels: Sequence[str]) -> list[str]:
    """The rates compared between groups, in table order."""
    return ["accuracy", *[f"miss_rate_{c}" for c in labels], *[f"false_alarm_rate_{c}" for c in labels]]


@dataclass
class _Group:
    """One group's items (``members``: positions in the inputs), the counts of its (human, metric) cells, its
    observed figures and their bootstrap distributions (empty without a bootstrap)."""

    name: str
    members: np.ndarray
    counts: np.ndarray
    obs: dict[str, float]
    boots: dict[str, np.ndarray]

    @property
    def n(self) -> int:
        return len(self.members)


def group_rows(
    y_true: Sequence[str],
    y_pred: Sequence[str],
    groups: Sequence[Any],
    labels: Sequence[str],
    *,
    h_rank: Sequence[float | None] | None = None,
    score: Sequence[float | None] | None = None,
    round: str,
    task: str,
    metric: str,
    by: str,
    n_boot: int = 1000,
    seed: int = 0,
    min_n: int = MIN_N,
) -> list[dict[str, Any]]:
    """Per-group and pairwise agreement-stage rows (see the module docstring)."""
    labels = list(labels)
    k = len(labels)
    idx = {lab: i for i, lab in enumerate(labels)}
    code = np.array([idx[a] * k + idx[b] for a, b in zip(y_true, y_pred)], dtype=np.int64)
    # a null grouping value, None or a float NaN (a float --by column), is the group "(missing)", never "nan"
    gvals = ["(missing)" if g is None or (isinstance(g, float) and g != g) else str(g) for g in groups]
    rng = np.random.default_rng(seed)

    def row(measure: str, value: float | None, **kw: Any) -> dict[str, Any]:
        return _row(round, task, measure, value, **kw, metric=metric, group_by=by)  # metric, group_by last, as always

    rows: list[dict[str, Any]] = []
    stats: dict[str, _Group] = {}
    for g in sorted(set(gvals)):
        gs = stats[g] = _group_stats(g, np.flatnonzero(np.array(gvals) == g), code, labels, n_boot=n_boot, rng=rng)
        note = f"small group: n < {min_n}" if gs.n < min_n else None
        rows += _group_rate_rows(row, gs, labels, note)
        if h_rank is not None and score is not None:
            # Spearman: item-level resampling (ranks)
            rows.append(_group_spearman_row(row, gs, h_rank, score, note, n_boot=n_boot, rng=rng))
    rows += _pair_rows(row, stats, labels, min_n=min_n, n_boot=n_boot, rng=rng)
    return rows


def _group_stats(name: str, members: np.ndarray, code: np.ndarray, labels: list[str], *, n_boot: int, rng: np.random.Generator) -> _Group:
    """A group's cell counts, observed rates and (``n_boot`` > 0, two items or more) their multinomial bootstrap."""
    k = len(labels)
    n = len(members)
    c = np.bincount(code[members], minlength=k * k)
    obs = {r: float(v) for r, v in _rates_from_cm(c.reshape(k, k), labels).items()}
    boots: dict[str, np.ndarray] = {}
    if n_boot > 0 and n >= 2:
        bc = rng.multinomial(n, c / n, size=n_boot).reshape(n_boot, k, k)
        boots = _rates_from_cm(bc, labels)
    return _Group(name, members, c, obs, boots)


def _group_rate_rows(row: Callable[..., dict[str, Any]], gs: _Group, labels: list[str], note: str | None) -> list[dict[str, Any]]:
    """``group_<rate>`` rows of one group: accuracy, macro-F1, miss and false-alarm rate per class, with CIs."""
    k = len(labels)
    idx = {lab: i for i, lab in enumerate(labels)}
    true_n = gs.counts.reshape(k, k).sum(axis=1)
    rows = []
    for r in ("accuracy", "f1_macro", *rate_measures(labels)[1:]):
        v = gs.obs[r]
        if r.startswith("miss_rate_"):
            lab = r[len("miss_rate_") :]
            n_used = int(true_n[idx[lab]])
            err = None if n_used else f"no item of the group has the human label {lab!r}"
        elif r.startswith("false_alarm_rate_"):
            lab = r[len("false_alarm_rate_") :]
            n_used = int(gs.n - true_n[idx[lab]])
            err = None if n_used else f"every item of the group has the human label {lab!r}"
        else:
            n_used, err = gs.n, None
        lo, hi = _ci(gs.boots[r]) if gs.boots and np.isfinite(v) else (None, None)
        rows.append(
            row(
                f"group_{r}",
                v if np.isfinite(v) else None,
                n_items=n_used,
                ci_low=lo,
                ci_high=hi,
                group=gs.name,
                note=note,
                error=err if not np.isfinite(v) else None,
            )
        )
    return rows


def _group_spearman_row(
    row: Callable[..., dict[str, Any]],
    gs: _Group,
    h_rank: Sequence[float | None],
    score: Sequence[float | None],
    note: str | None,
    *,
    n_boot: int,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """Spearman's rho of a group's human ordinal labels and scores, with a bootstrap CI over its items."""
    ok = [i for i in gs.members if h_rank[i] is not None and score[i] is not None]
    if len(ok) < 3:
        return row(
            "group_spearman_rho",
            None,
            n_items=len(ok),
            group=gs.name,
            note=note,
            error="fewer than 3 items with an ordinal human label and a score",
        )
    hx = np.array([h_rank[i] for i in ok], dtype=float)
    sx = np.array([score[i] for i in ok], dtype=float)
    rho, p = spearman(hx, sx)
    lo, hi = _ci(_spearman_boot(hx, sx, n_boot, rng)) if n_boot > 0 else (None, None)
    return row("group_spearman_rho", rho, p_value=p if np.isfinite(p) else None, n_items=len(ok), ci_low=lo, ci_high=hi, group=gs.name, note=note)


def _pair_rows(
    row: Callable[..., dict[str, Any]], stats: dict[str, _Group], labels: list[str], *, min_n: int, n_boot: int, rng: np.random.Generator
) -> list[dict[str, Any]]:
    """``diff_<rate>`` and ``ratio_<rate>`` rows of every pair of groups, rate by rate, with permutation p-values
    Holm-corrected over the pairs."""
    rows: list[dict[str, Any]] = []
    pairs = list(combinations(list(stats), 2))
    for r in rate_measures(labels):
        pend = []
        for a, b in pairs:
            rd, rr, p = _pair_rate_rows(row, stats[a], stats[b], r, labels, min_n=min_n, n_boot=n_boot, rng=rng)
            rows += [rd, rr]
            pend.append((rd, rr, p))
        _holm(pend)
    return rows


def _pair_rate_rows(
    row: Callable[..., dict[str, Any]],
    ga: _Group,
    gb: _Group,
    r: str,
    labels: list[str],
    *,
    min_n: int,
    n_boot: int,
    rng: np.random.Generator,
) -> tuple[dict[str, Any], dict[str, Any], float | None]:
    """The diff and ratio rows of rate ``r`` between two groups and their permutation p-value (None when the
    rate is undefined in a group or there are no permutations); the rows get ``p_value`` from :func:`_holm`."""
    a, b = ga.name, gb.name
    na, nb = ga.n, gb.n
    va, vb = ga.obs[r], gb.obs[r]
    small = f"small group: n < {min_n}" if min(na, nb) < min_n else None
    if not (np.isfinite(va) and np.isfinite(vb)):
        why = "the rate is undefined in one of the groups"
        return (
            row(f"diff_{r}", None, n_items=na + nb, group=a, group_b=b, note=small, error=why),
            row(f"ratio_{r}", None, n_items=na + nb, group=a, group_b=b, note=small, error=why),
            None,
        )
    d = va - vb
    dlo = dhi = rlo = rhi = None
    if ga.boots and gb.boots:
        dlo, dhi = _ci(ga.boots[r] - gb.boots[r])
        with np.errstate(divide="ignore", invalid="ignore"):
            rlo, rhi = _ci(ga.boots[r] / gb.boots[r])
    p = _perm_p(ga.counts, gb.counts, r, labels, d, n_boot, rng) if n_boot > 0 else None
    ratio = va / vb if vb > 0 else None
    rd = row(f"diff_{r}", d, n_items=na + nb, group=a, group_b=b, ci_low=dlo, ci_high=dhi, p_value_raw=p, note=small)
    rr = row(
        f"ratio_{r}",
        ratio,
        n_items=na + nb,
        group=a,
        group_b=b,
        ci_low=rlo,
        ci_high=rhi,
        p_value_raw=p,
        note=small,
        error=None if ratio is not None else f"the rate is 0 in {b!r}",
    )
    return rd, rr, p


def _holm(pend: list[tuple[dict[str, Any], dict[str, Any], float | None]]) -> None:
    """Set ``p_value`` on each (diff row, ratio row, raw p) of one rate that has a p: the raw p Holm-corrected
    over those pairs."""
    from biaskit.evaluate.stats.significance import holm

    ps = [p for _, _, p in pend if p is not None]
    if ps:
        # one pair: Holm leaves p as is
        adj = list(holm(ps)) if len(ps) > 1 else list(ps)
        for rd, rr, p in pend:
            if p is not None:
                rd["p_value"] = rr["p_value"] = float(min(1.0, adj.pop(0)))


def _perm_p(ca: np.ndarray, cb: np.ndarray, rate: str, labels: Sequence[str], d: float, n_perm: int, rng: np.random.Generator) -> float | None:
    """Two-sided permutation p of rate(a) - rate(b): group a's cell counts under permutation are multivariate
    hypergeometric draws from the pooled counts."""
    k = len(labels)
    pooled = (ca + cb).astype(np.int64)
    na = int(ca.sum())
    draws = rng.multivariate_hypergeometric(pooled, na, size=n_perm)
    ra = _rates_from_cm(draws.reshape(n_perm, k, k), labels)[rate]
    rb = _rates_from_cm((pooled - draws).reshape(n_perm, k, k), labels)[rate]
    dd = ra - rb
    ok = np.isfinite(dd)
    if ok.sum() < max(10, n_perm // 10):
        return None
    hits = int((np.abs(dd[ok]) >= abs(d) - 1e-12).sum())
    return float((1 + hits) / (1 + ok.sum()))
