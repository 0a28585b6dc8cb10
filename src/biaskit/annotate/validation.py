"""Validating an automatic metric against the human majority label (BOLD Table 8, Sheng et al.).

For each metric: Spearman's rho (with p-value) between the humans' ordinal label and the metric's
continuous score, accuracy, support-weighted precision/recall/F1, per-class precision/recall/F1, the
confusion matrix (rows = humans, columns = metric, BOLD Table 8 layout), accuracy with a Wilson interval (a share;
:mod:`biaskit.evaluate.stats.inference`) and the other figures with percentile bootstrap CIs over
items, and threshold calibration: the cut points on the metric's score that best reproduce the humans'
ordinal labels (BOLD set its gender thresholds "empirically"; here they are fitted and reported).

Computed from first principles and checked in the tests against ``scipy.stats.spearmanr`` and
scikit-learn's ``classification_report`` / ``confusion_matrix``. Weighted averages follow scikit-learn
(a class the metric never predicts has precision 0 inside the average); the per-class row of such a class
is null with an ``error``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from biaskit.annotate.agreement import agreement_row, rows_to_table
from biaskit.annotate.groupvalidity import GroupedItems, RowKey, group_rows
from biaskit.annotate.labelmodels import check_task_labels, crowd_warnings, gold_answers
from biaskit.annotate.metriccols import known, resolve
from biaskit.annotate.rankstats import spearman, spearman_boot
from biaskit.annotate.spans import check_like_for_like, metric_and_rule, rescore
from biaskit.annotate.tasks import TaskType, get_task_type
from biaskit.arrow import to_arrow
from biaskit.bootstrap import BootSpec, percentile_ci, percentile_interval, resample_each
from biaskit.errors import BiaskitError, check_choice
from biaskit.evaluate.metrics.catalog import check_column
from biaskit.evaluate.stats import inference as inf
from biaskit.votes import VoteRule, labels_as_majority, majority_vote

#: the method name of the validation's bootstrap intervals
PERCENTILE = "percentile bootstrap"

#: what :func:`calibrate_thresholds` can maximize
OBJECTIVES = ("accuracy", "balanced_accuracy")


@dataclass
class Classification:
    labels: list[str]
    confusion: np.ndarray  # rows: true (human), columns: predicted (metric)
    accuracy: float
    precision: dict[str, float | None]
    recall: dict[str, float | None]
    f1: dict[str, float | None]
    support: dict[str, int]
    weighted: dict[str, float]  # precision, recall, f1 weighted by true support


def classify(y_true: Sequence[str], y_pred: Sequence[str], labels: Sequence[str] | None = None) -> Classification:
    present = sorted(set(y_true) | set(y_pred))
    labs = [lab for lab in (labels or []) if lab in present] + [lab for lab in present if lab not in (labels or [])]
    idx = {lab: i for i, lab in enumerate(labs)}
    cm = np.zeros((len(labs), len(labs)), dtype=int)
    for a, b in zip(y_true, y_pred):
        cm[idx[a], idx[b]] += 1
    n = cm.sum()
    tp = np.diag(cm).astype(float)
    pred_n, true_n = cm.sum(axis=0), cm.sum(axis=1)
    prec = {lab: (tp[i] / pred_n[i] if pred_n[i] else None) for i, lab in enumerate(labs)}
    rec = {lab: (tp[i] / true_n[i] if true_n[i] else None) for i, lab in enumerate(labs)}
    f1 = {}
    for lab in labs:
        p, r = prec[lab], rec[lab]
        f1[lab] = None if p is None or r is None else (0.0 if p + r == 0 else 2 * p * r / (p + r))
    w = true_n / n if n else true_n
    weighted = {
        "precision": float(sum(w[i] * (prec[lab] or 0.0) for i, lab in enumerate(labs))),
        "recall": float(sum(w[i] * (rec[lab] or 0.0) for i, lab in enumerate(labs))),
        "f1": float(sum(w[i] * (f1[lab] or 0.0) for i, lab in enumerate(labs))),
    }
    return Classification(
        labs, cm, float(tp.sum() / n) if n else float("nan"), prec, rec, f1, {lab: int(true_n[i]) for i, lab in enumerate(labs)}, weighted
    )


@dataclass
class Thresholds:
    cuts: list[float]  # increasing; label k for score in (cuts[k-1], cuts[k]]
    order: list[str]  # ordinal labels, lowest score first
    accuracy: float
    objective: str = "accuracy"

    def predict(self, scores: Sequence[float] | np.ndarray) -> list[str]:
        idx = np.searchsorted(np.asarray(self.cuts), np.asarray(scores, dtype=float), side="left")
        return [self.order[int(i)] for i in idx]


def calibrate_thresholds(
    scores: Sequence[float | None] | np.ndarray, labels: Sequence[str], order: Sequence[str], objective: str = "accuracy"
) -> Thresholds:
    """Cut points on ``scores`` whose ordinal labelling best matches ``labels`` (exact optimum).

    ``objective``: ``accuracy`` or ``balanced_accuracy`` (mean per-class recall). Solved by dynamic
    programming over the sorted scores; cuts lie midway between neighbouring distinct scores.
    """
    check_choice("E091", "unknown calibration objective", objective, OBJECTIVES, fix="use --objective accuracy")
    order = list(order)
    pairs = [(float(s), lab) for s, lab in zip(scores, labels) if lab in order and s is not None and np.isfinite(s)]
    if len(pairs) < 2:
        raise BiaskitError("E091", "too few items to calibrate thresholds", value=len(pairs), fix="annotate more items (at least a few per label)")
    pairs.sort()
    s = np.array([p[0] for p in pairs])
    y = np.array([order.index(p[1]) for p in pairs])
    k, n = len(order), len(s)
    wts = np.ones(n)
    if objective == "balanced_accuracy":
        sup = np.bincount(y, minlength=k).astype(float)
        present = (sup > 0).sum()
        wts = 1.0 / (sup[y] * present)
    # allowed cut positions: 0, n and between distinct scores
    pos = np.array([0] + [i for i in range(1, n) if s[i] != s[i - 1]] + [n])
    cum = np.zeros((k, len(pos)))
    for c in range(k):
        cc = np.concatenate([[0.0], np.cumsum(wts * (y == c))])
        cum[c] = cc[pos]
    best = cum[0].copy()  # best[j]: classes 0..c assigned to items before pos[j]
    back = np.zeros((k, len(pos)), dtype=int)
    for c in range(1, k):
        run = best - cum[c]
        arg = np.maximum.accumulate(np.where(run == np.maximum.accumulate(run), np.arange(len(pos)), 0))
        runmax = np.maximum.accumulate(run)
        back[c] = arg
        best = cum[c] + runmax
    # best[-1] at j = last position covers all items
    j = len(pos) - 1
    cut_idx = []
    for c in range(k - 1, 0, -1):
        j = back[c][j]
        cut_idx.append(j)
    cut_idx.reverse()
    cuts = []
    for j in cut_idx:
        p = pos[j]
        if p <= 0:
            cuts.append(float(s[0]) - 1e-9)
        elif p >= n:
            cuts.append(float(s[-1]))
        else:
            cuts.append(float((s[p - 1] + s[p]) / 2))
    th = Thresholds(cuts, order, 0.0, objective)
    pred = th.predict(s)
    th.accuracy = float(np.mean([order.index(pp) == yy for pp, yy in zip(pred, y)]))
    return th


@dataclass
class Validation:
    table: pa.Table
    classification: Classification | None = None
    thresholds: Thresholds | None = None
    n_items: int = 0
    notes: list[str] = field(default_factory=list)

    def confusion_markdown(self) -> str:
        c = self.classification
        if c is None:
            return ""
        head = "| human \\ metric | " + " | ".join(c.labels) + " | support |"
        lines = [head, "|" + "---|" * (len(c.labels) + 2)]
        for i, lab in enumerate(c.labels):
            lines.append(f"| {lab} | " + " | ".join(str(int(v)) for v in c.confusion[i]) + f" | {int(c.confusion[i].sum())} |")
        return "\n".join(lines)


@dataclass(frozen=True)
class Calibration:
    """How thresholds are fitted to the human labels and checked: the ``objective`` they maximise (``accuracy`` or
    ``balanced_accuracy``) and its ``cv_folds``-fold cross-validation (0: none), the folds dealt by a permutation
    seeded ``seed``."""

    objective: str = "accuracy"
    cv_folds: int = 5
    seed: int = 0


def cross_validated_calibration(
    scores: Sequence[float | None], labels: Sequence[str], order: Sequence[str], *, calibration: Calibration = Calibration()
) -> float:
    """Out-of-sample figure for :func:`calibrate_thresholds`: the calibration's ``objective`` (``accuracy`` or
    ``balanced_accuracy``) of labels predicted for each item by thresholds fitted without it.

    Items are dealt into ``cv_folds`` folds by a seeded permutation (``numpy.random.default_rng(seed)``; item at
    permuted position i goes to fold i mod folds); ``cv_folds >= n`` is leave-one-out (no randomness). The
    held-out predictions of all folds are pooled before the figure is computed.
    """
    objective, folds, seed = calibration.objective, calibration.cv_folds, calibration.seed
    order = list(order)
    pairs = [(float(x), lab) for x, lab in zip(scores, labels) if lab in order and x is not None and np.isfinite(x)]
    n = len(pairs)
    if not isinstance(folds, int) or folds < 2:
        raise BiaskitError("E091", "cross-validation needs at least 2 folds", value=folds, fix="use --cv-folds 5 (or 0 to skip)")
    if n < 3:
        raise BiaskitError("E091", "too few items to cross-validate the thresholds", value=n, fix="annotate more items (at least a few per label)")
    k = min(folds, n)
    fold = np.arange(n) % k if k == n else np.empty(n, dtype=int)
    if k < n:
        fold[np.random.default_rng(seed).permutation(n)] = np.arange(n) % k
    s = np.array([p[0] for p in pairs])
    y = [p[1] for p in pairs]
    pred: list[str | None] = [None] * n
    for f in range(k):
        train = np.flatnonzero(fold != f)
        test = np.flatnonzero(fold == f)
        th = calibrate_thresholds(s[train], [y[i] for i in train], order, objective)
        for i, lab in zip(test, th.predict(s[test])):
            pred[i] = lab
    if objective == "accuracy":
        return float(np.mean([a == b for a, b in zip(pred, y)]))
    return float(np.mean([np.mean([pred[i] == lab for i in range(n) if y[i] == lab]) for lab in set(y)]))


def validate_metric(
    annotations: Any,
    samples: Any,
    *,
    metric: str,
    task: str | TaskType | None = None,
    round: str | None = None,
    tie_policy: str = "drop",
    exclude_labels: Sequence[str] = ("other",),
    label_column: str | None = None,
    score_column: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    calibrate: bool = True,
    objective: str = "accuracy",
    cv_folds: int = 5,
    by: str | None = None,
    labels: Any = None,
) -> Validation:
    """Compare the human majority label with ``metric``'s label/score carried in the samples table.

    ``by``: a samples column (group, domain, source, ...): adds per-group rows and pairwise differences between
    groups (:mod:`biaskit.annotate.groupvalidity`). ``labels``: a labels table of ``annotate aggregate`` used as
    the human label instead of the majority vote (gold items and ``exclude_labels`` still left out).

    With ``calibrate``, thresholds fitted on all items are reported with their (optimistic) in-sample figure
    ``calibrated_<objective>`` and, unless ``cv_folds`` is 0, the ``cv_folds``-fold cross-validated
    ``cv_calibrated_<objective>`` (see :func:`cross_validated_calibration`).

    Like for like (:mod:`biaskit.annotate.spans`): ``metric`` may name a VADER rule (``vader-bold-0.5``,
    ``vader-sheng-0.05``); where the samples record that the text shown is not the text scored, or another rule
    is asked for, a VADER metric is re-scored on the shown text and any other metric is refused (E395). Every
    row names the spans shown and scored and the rule (``shown_span``, ``scored_span``, ``scored_rule``)."""
    _check_calibration_options(calibrate, cv_folds, objective)
    s = to_arrow(samples)
    a = to_arrow(annotations)
    task, tt = _task_of_samples(s, task)
    if round is None:
        rs = sorted({x for x in (s.column("round").to_pylist() if "round" in s.column_names else []) if x})
        round = rs[0] if len(rs) == 1 else "?"
    s, spans, base = _like_for_like(s, metric, label_column=label_column, score_column=score_column)
    mc = resolve(base, s.column_names, label_column=label_column, score_column=score_column, need_label=True)
    srows = {r["sample_id"]: r for r in s.to_pylist()}
    _check_annotated_items_known(a, srows)

    check_task_labels(a.column("label").to_pylist() if "label" in a.column_names else [], tt)
    gold_answers(s, tt)  # a gold answer outside the task's labels is E251
    assert mc.label is not None  # resolve(need_label=True) names it
    check_column(s.column(mc.label).to_pylist(), mc.label, what="the samples table")  # the metric's own labels (E151)
    if all(c in a.column_names for c in ("sample_id", "annotator", "label")):
        crowd_warnings(*(a.column(c).to_pylist() for c in ("sample_id", "annotator", "label")))
    _check_by_column(s, by)
    mv = _human_labels(a, tt, labels=labels, rule=VoteRule(tie_policy=tie_policy, exclude_labels=exclude_labels, seed=seed))
    items, dropped = _pair_items(mv, srows, mc, tt, by)
    boot = BootSpec(n_boot=n_boot, seed=seed)
    row = _RowMaker(round, task if isinstance(task, str) else tt.name, metric)
    val = Validation(rows_to_table([]), n_items=len(items.y_true))
    val.notes.append(
        f"{len(items.y_true)} items with a human majority and a {metric} label; left out: " + ", ".join(f"{k} {v}" for k, v in dropped.items())
    )
    if spans.rescore:
        val.notes.append(f"re-scored the text shown ({spans.shown or 'original_text'}) with {spans.rule}: like for like with the annotators")
    if not items.y_true:
        val.table = _with_spans([row("accuracy", None, n_items=0, reason="no item has both a human majority and a metric label")], spans)
        return val
    rows = [_spearman_row(row, items, has_score=bool(mc.score), ordinal=bool(tt.ordinal), boot=boot)]
    val.classification = cl = classify(items.y_true, items.y_pred, list(tt.labels))
    rows += _classification_rows(row, items, cl, boot=boot)
    if calibrate and mc.score and tt.ordinal and len(items.scored()) >= 2:
        rows += _calibration_rows(row, val, items, tt.ordinal, Calibration(objective=objective, cv_folds=cv_folds, seed=seed))
    if by is not None:
        rows += _by_group_rows(row, items, cl, has_score=bool(mc.score), boot=boot)
    val.table = _with_spans(rows, spans)
    return val


def _like_for_like(s: pa.Table, metric: str, *, label_column: str | None, score_column: str | None):
    """(samples, :class:`~biaskit.annotate.spans.Spans`, metric name): the samples with the metric re-scored on the
    shown text where :func:`~biaskit.annotate.spans.check_like_for_like` says so (E395 where it cannot be)."""
    base, preset = metric_and_rule(metric)
    cols = [c for c in ("is_gold", "shown_span", "scored_span", "scored_rule") if c in s.column_names]
    spans = check_like_for_like(s.select(cols).to_pylist() if cols else [], base, preset)
    if spans.rescore:
        assert spans.preset is not None  # a re-scoring names its preset
        lab, sc = known()[base]
        s = rescore(s, spans.preset, label_column or lab, score_column or sc)
    return s, spans, base


def _with_spans(rows: list[dict], spans) -> pa.Table:
    """The validation rows as a table, each naming the span shown, the span scored and the rule."""
    cols = {"shown_span": spans.shown, "scored_span": spans.scored, "scored_rule": spans.rule}
    return rows_to_table([{**r, **cols} for r in rows])


@dataclass(frozen=True)
class _RowMaker:
    """``row(measure, value, **columns)``: an agreement-stage row of this validation (round, task and metric filled in)."""

    round: str
    task: str
    metric: str

    def __call__(self, measure: str, value: float | None, **kw: Any) -> dict[str, Any]:
        return agreement_row(self.round, self.task, measure, value, metric=self.metric, **kw)


@dataclass
class _Paired:
    """The items a metric is validated on, one entry per item in each list: the human label, the metric's
    label, the human label's rank on the ordinal scale, the metric's score and the group in column ``by``."""

    y_true: list[str] = field(default_factory=list)
    y_pred: list[str] = field(default_factory=list)
    h_rank: list[int | None] = field(default_factory=list)
    score: list[float | None] = field(default_factory=list)
    group: list[Any] = field(default_factory=list)
    by: str | None = None

    def scored(self) -> list[int]:
        """The positions of the items with both a rank on the ordinal scale and a score."""
        return [i for i in range(len(self.y_true)) if self.h_rank[i] is not None and self.score[i] is not None]


def _check_calibration_options(calibrate: bool, cv_folds: int, objective: str) -> None:
    if calibrate and cv_folds and (not isinstance(cv_folds, int) or cv_folds < 2):
        raise BiaskitError(
            "E091", "cv_folds must be 0 (no cross-validation) or at least 2", value=cv_folds, fix="use --cv-folds 5, or --cv-folds 0 to skip"
        )
    if calibrate:
        check_choice("E091", "unknown calibration objective", objective, OBJECTIVES, fix="use --objective accuracy or balanced_accuracy")


def _task_of_samples(s: pa.Table, task: str | TaskType | None) -> tuple[str | TaskType, TaskType]:
    """The task (given, or the samples' only ``task_type``) and its task type."""
    if task is None:
        specs = sorted({x for x in (s.column("task_type").to_pylist() if "task_type" in s.column_names else []) if x})
        if len(specs) != 1:
            raise BiaskitError("E091", "cannot tell the task type", value=specs, fix="pass --task")
        task = specs[0]
    return task, get_task_type(task)


def _check_annotated_items_known(a: pa.Table, srows: dict[str, dict[str, Any]]) -> None:
    unknown = sorted(set(a.column("sample_id").to_pylist()) - set(srows))
    if unknown:
        raise BiaskitError(
            "E091",
            f"{len(unknown)} annotated items are not in the samples table",
            value=unknown[:5],
            fix="pass the samples table of the same round (--samples)",
        )


def _check_by_column(s: pa.Table, by: str | None) -> None:
    if by is not None and by not in s.column_names:
        raise BiaskitError(
            "E255",
            f"--by column {by!r} is not in the samples table",
            value=by,
            options=[c for c in s.column_names if c not in ("text", "original_text", "mask_mapping")],
            fix="name a column the samples carry (group, domain, source, language, template)",
        )


def _human_labels(a: pa.Table, tt: TaskType, *, labels: Any, rule: VoteRule) -> pa.Table:
    """The human label per item in :func:`majority_vote`'s shape: a label model's labels (leaving out the rule's
    excluded labels), or the majority vote by ``rule``."""
    if labels is None:
        return majority_vote(a, task=tt, rule=rule)

    mv = labels_as_majority(labels, exclude_labels=rule.exclude_labels)
    check_task_labels(mv.column("label").to_pylist(), tt, what="the --labels table")
    missing = sorted(set(a.column("sample_id").to_pylist()) - set(mv.column("sample_id").to_pylist()))
    if missing and mv.num_rows == 0:
        raise BiaskitError(
            "E254",
            "the labels table has no item of these annotations",
            value=missing[:3],
            fix="aggregate the same round's annotations (biaskit annotate aggregate)",
        )
    return mv


def _pair_items(mv: pa.Table, srows: dict[str, dict[str, Any]], mc, tt: TaskType, by: str | None) -> tuple[_Paired, dict[str, int]]:
    """Items with a kept human label and a metric label (gold items left out), and the count left out per reason."""
    gold = {k for k, r in srows.items() if r.get("is_gold")}
    items = _Paired(by=by)
    dropped = {"no majority": 0, "metric missing": 0, "gold": 0}
    for r in mv.to_pylist():
        sid = r["sample_id"]
        if sid in gold:
            dropped["gold"] += 1
            continue
        if not r["kept"]:
            dropped["no majority"] += 1
            continue
        sr = srows.get(sid)
        if sr is None:
            raise BiaskitError(
                "E254",
                "the labels table holds an item that is not in the samples table",
                value=sid,
                fix="pass the labels and samples of the same round",
            )
        pred = sr.get(mc.label)
        if pred is None:
            dropped["metric missing"] += 1
            continue
        items.y_true.append(r["label"])
        items.y_pred.append(str(pred))
        items.h_rank.append(tt.rank(r["label"]))
        items.score.append(mc.score_of(sr) if mc.score else None)
        items.group.append(sr.get(by) if by else None)
    return items, dropped


def _spearman_row(row: _RowMaker, items: _Paired, *, has_score: bool, ordinal: bool, boot: BootSpec) -> dict:
    """Spearman's rho of the human ordinal label and the metric's score (over the items that have both), with its CI."""
    ok = items.scored()
    if has_score and len(ok) >= 3:
        hx = np.array([items.h_rank[i] for i in ok], dtype=float)
        sx = np.array([items.score[i] for i in ok], dtype=float)
        rho, p = spearman(hx, sx)
        lo, hi = _spearman_ci(hx, sx, boot)
        lo, hi, method, why = inf.never_zero_width(lo, hi, method=PERCENTILE)
        return row("spearman_rho", rho, p_value=p if np.isfinite(p) else None, n_items=len(ok), ci_low=lo, ci_high=hi, method=method, reason=why)
    why = (
        "no continuous score column for this metric"
        if not has_score
        else "the task has no ordinal scale"
        if not ordinal
        else "fewer than 3 items on the ordinal scale with a score"
    )
    return row("spearman_rho", None, n_items=len(ok), reason=why)


def _classification_rows(row: _RowMaker, items: _Paired, cl: Classification, *, boot: BootSpec) -> list[dict]:
    """Accuracy and weighted precision/recall/F1 with bootstrap CIs, per-class figures and the confusion matrix."""
    n = len(items.y_true)
    cis = _bootstrap_classification(items.y_true, items.y_pred, cl.labels, boot)
    # accuracy is a share: Wilson (the inference layer's interval for shares); the weighted figures have no closed form

    right = int(np.trace(cl.confusion))
    alo, ahi = inf.proportion_interval(right, n) if n else (None, None)
    rows = [row("accuracy", cl.accuracy, n_items=n, ci_low=alo, ci_high=ahi, method=inf.WILSON if n else None)]
    for j, key in enumerate(("precision", "recall", "f1"), 1):
        # a bootstrap that collapsed (perfect or no agreement: every resample gives 1 or 0) is no interval: the
        # inference layer's guard gives the weighted recall, a share (it equals the accuracy, right of n), Wilson's
        # interval, and the others none, with the reason
        lo, hi, method, why = inf.never_zero_width(*cis[j], method=PERCENTILE, share=(right, n) if key == "recall" else None)
        rows.append(row(f"{key}_weighted", cl.weighted[key], n_items=n, ci_low=lo, ci_high=hi, method=method, reason=why))
    why_none = {
        "precision": "the metric never predicted {!r}",
        "recall": "no human majority is {!r}",
        "f1": "precision or recall undefined",
    }
    for lab in cl.labels:
        for key, d in (("precision", cl.precision), ("recall", cl.recall), ("f1", cl.f1)):
            v = d[lab]
            rows.append(row(f"{key}_{lab}", v, n_items=cl.support[lab], reason=None if v is not None else why_none[key].format(lab)))
    for i, h in enumerate(cl.labels):
        for j, m in enumerate(cl.labels):
            rows.append(row(f"confusion:{h}:{m}", float(cl.confusion[i, j]), n_items=n))
    return rows


def _calibration_rows(row: _RowMaker, val: Validation, items: _Paired, order: Sequence[str], calibration: Calibration) -> list[dict]:
    """Thresholds fitted on all items with a rank and a score (kept on ``val``) with their in-sample figure, then the
    cross-validated one; a calibration that cannot be done is a note on ``val``, a cross-validation that cannot be
    done an error row."""
    ok = items.scored()
    scores: list[float | None] = [items.score[i] for i in ok]
    labels = [items.y_true[i] for i in ok]
    objective = calibration.objective
    rows: list[dict] = []
    try:
        th = calibrate_thresholds(scores, labels, order, objective)
        val.thresholds = th
        for c, cut in enumerate(th.cuts):
            rows.append(row(f"threshold_{th.order[c]}_{th.order[c + 1]}", cut, n_items=len(scores)))
        rows.append(row(f"calibrated_{objective}", th.accuracy if objective == "accuracy" else _balanced(th, scores, labels), n_items=len(scores)))
    except BiaskitError as exc:
        val.notes.append(f"threshold calibration skipped: {exc.what}")
        return rows
    if calibration.cv_folds:
        try:
            cv = cross_validated_calibration(scores, labels, order, calibration=calibration)
            rows.append(row(f"cv_calibrated_{objective}", cv, n_items=len(scores)))
        except BiaskitError as exc:
            rows.append(row(f"cv_calibrated_{objective}", None, n_items=len(scores), reason=exc.what))
    return rows


def _by_group_rows(row: _RowMaker, items: _Paired, cl: Classification, *, has_score: bool, boot: BootSpec) -> list[dict]:
    """Per-group and pairwise rows of :func:`biaskit.annotate.groupvalidity.group_rows` (``--by``)."""
    assert items.by is not None  # called with --by only
    bad = sorted({x for x in items.y_pred if x not in cl.labels} | {x for x in items.y_true if x not in cl.labels})
    if bad:  # cannot happen: classify() collects every label; kept as a guard for the code map
        raise BiaskitError("E255", "labels missing from the class list", value=bad, fix="report this as a bug")
    grouped = GroupedItems(
        items.y_true, items.y_pred, items.group, h_rank=items.h_rank if has_score else None, score=items.score if has_score else None
    )
    return group_rows(grouped, cl.labels, key=RowKey(row.round, row.task, row.metric, items.by), boot=boot)


def _spearman_ci(hx: np.ndarray, sx: np.ndarray, boot: BootSpec):
    """:func:`~biaskit.annotate.agreement.bootstrap_ci` of :func:`spearman` (same resamples, same rules), vectorised
    through :func:`~biaskit.annotate.rankstats.spearman_resamples` (a test checks it against the loop)."""
    n = len(hx)
    if boot.n_boot <= 0 or n < 2:
        return None, None
    vals = spearman_boot(hx, sx, boot.n_boot, np.random.default_rng(boot.seed))
    return percentile_interval(vals, boot.level, min_finite=max(10, boot.n_boot // 10))


def confusion_stats(cm: np.ndarray) -> tuple[float, float, float, float]:
    """(accuracy, weighted precision, weighted recall, weighted F1) from a confusion matrix (rows = true)."""
    cm = np.asarray(cm, dtype=float)
    n = cm.sum()
    tp = np.diag(cm)
    pred, true = cm.sum(axis=0), cm.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(pred > 0, tp / pred, 0.0)
        rec = np.where(true > 0, tp / true, 0.0)
        f1 = np.where(prec + rec > 0, 2 * prec * rec / (prec + rec), 0.0)
    w = true / n
    return float(tp.sum() / n), float((w * prec).sum()), float((w * rec).sum()), float((w * f1).sum())


def _bootstrap_classification(y_true, y_pred, labels, boot: BootSpec):
    """Percentile CIs of the four :func:`confusion_stats` figures, one resample serving all four.

    Uses the same resampling stream as :func:`~biaskit.annotate.agreement.bootstrap_ci` (items drawn with
    replacement by ``default_rng(seed).integers``, :func:`biaskit.bootstrap.resample_each`), each resample
    summarised through its confusion-matrix counts.
    """
    n = len(y_true)
    if boot.n_boot <= 0 or n < 2:
        return [(None, None)] * 4
    idx = {lab: i for i, lab in enumerate(labels)}
    k = len(labels)
    code = np.array([idx[a] * k + idx[b] for a, b in zip(y_true, y_pred)])

    def stat(items: np.ndarray) -> tuple[float, float, float, float]:
        return confusion_stats(np.bincount(code[items], minlength=k * k).reshape(k, k))

    return percentile_ci(resample_each(stat, n), boot.n_boot, np.random.default_rng(boot.seed), level=boot.level)


def _balanced(th: Thresholds, scores, labels) -> float:
    pred = th.predict(scores)
    recs = []
    for lab in set(labels):
        idx = [i for i, y in enumerate(labels) if y == lab]
        recs.append(np.mean([pred[i] == lab for i in idx]))
    return float(np.mean(recs))


def validate_metrics(annotations: Any, samples: Any, metrics: Sequence[str], **kw) -> tuple[pa.Table, dict[str, Validation]]:
    """:func:`validate_metric` for each of ``metrics`` (same keyword arguments): one agreement-stage table with
    all rows, and each metric's :class:`Validation`. ``biaskit annotate validate`` and the demo call it, then
    :func:`biaskit.annotate.ledger.record_validation`."""
    out, tables = {}, []
    for m in metrics:
        v = validate_metric(annotations, samples, metric=m, **kw)
        out[m] = v
        tables.append(v.table)
    return (pa.concat_tables(tables) if tables else rows_to_table([])), out
