"""Is a metric valid here? The report's one reading of each metric's validation, so that a metric whose
validation failed cannot produce "evidence of a gap" anywhere on the page.

From the agreement-stage rows of ``biaskit annotate validate`` (overall ``accuracy`` and the ``confusion:<human>:<metric>``
cells; rows with a ``group`` are per-group rows and are not read here) and, for an LLM judge, from the scores
table's ``judge_flip`` column (the label changed when the options were listed in another order) or a validation row
``order_flip_rate``. A metric is **not valid here** when any of these holds (each gives its reason in words):

* its accuracy is not above the majority-class baseline (the accuracy of always answering the humans' most
  frequent label: the largest row of the confusion matrix over its total);
* its agreement with the human labels is hardly above chance: Cohen's kappa of the confusion matrix below
  :data:`MIN_KAPPA` (0.2, the lower edge of "fair" agreement in Landis and Koch's reading);
* its label changes with the order of the options in more than :data:`MAX_ORDER_FLIP` (20%) of texts.

A metric without validation rows has unknown validity (``valid`` None): nothing is marked, and the judge section
says that its validity is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Cohen's kappa below this: agreement with the humans hardly above chance
MIN_KAPPA = 0.2
#: the share of texts whose judge label changes with the option order above which the label measures the order
MAX_ORDER_FLIP = 0.2
#: the section the validation of a metric is shown in: the judge's own section, the agreement section for the others
JUDGE_ANCHOR, AGREEMENT_ANCHOR = "judge", "agreement"


@dataclass
class MetricValidity:
    """What the validation says about one metric: ``valid`` (None: not validated), the ``reasons`` it is not, and
    the figures they come from. ``anchor``: the section id its validation is shown in."""

    metric: str
    valid: bool | None = None
    reasons: list[str] = field(default_factory=list)
    accuracy: float | None = None
    majority: float | None = None
    majority_label: str | None = None
    kappa: float | None = None
    order_flip: float | None = None
    n_items: int | None = None
    anchor: str = AGREEMENT_ANCHOR

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)


def kappa_from_confusion(cm: np.ndarray) -> float:
    """Cohen's kappa of a confusion matrix (rows: one rater, columns: the other): (p_o - p_e) / (1 - p_e)."""
    n = cm.sum()
    if n == 0:
        return float("nan")
    po = np.trace(cm) / n
    pe = float((cm.sum(axis=0) * cm.sum(axis=1)).sum()) / (n * n)
    return float("nan") if pe >= 1 else float((po - pe) / (1 - pe))


def confusion_of(rows, metric: str) -> tuple[np.ndarray, list[str]] | None:
    """The overall confusion matrix (rows: the human label, columns: the metric's) of ``metric`` from its
    ``confusion:<human>:<metric>`` validation rows, with the labels in order; None when there are none."""
    c = rows[(rows["metric"] == metric) & rows["measure"].astype(str).str.startswith("confusion:")]
    if "group" in c.columns:
        c = c[c["group"].isna()]
    if not len(c):
        return None
    cells = [(str(m).split(":")[1], str(m).split(":")[2], float(x)) for m, x in zip(c["measure"], c["estimate"]) if x == x]
    labs = list(dict.fromkeys([h for h, _, _ in cells] + [j for _, j, _ in cells]))
    cm = np.zeros((len(labs), len(labs)))
    for h, j, x in cells:
        cm[labs.index(h), labs.index(j)] += x
    return cm, labs


def majority_baseline(cm: np.ndarray, labels: list[str]) -> tuple[float, str] | None:
    """(accuracy of always answering the humans' most frequent label, that label); None for an empty matrix."""
    n = float(cm.sum())
    if n <= 0:
        return None
    rows = cm.sum(axis=1)
    j = int(np.argmax(rows))
    return float(rows[j] / n), labels[j]


def validation_rows(loaded: dict[str, Any]):
    """Every agreement-stage row of the run that names a metric (one frame), or None."""
    import pandas as pd

    frames = [d for d in loaded.values() if {"measure", "estimate", "metric"} <= set(d.columns)]
    if not frames:
        return None
    v = pd.concat(frames, ignore_index=True)
    return v[v["metric"].notna()]


def _order_flip(loaded: dict[str, Any], rows, metric: str) -> float | None:
    """The share of texts whose label changed with the option order: a validation row ``order_flip_rate`` of the
    metric, else (for the judge) the mean of the scores table's ``judge_flip``."""
    if rows is not None:
        r = rows[(rows["metric"] == metric) & (rows["measure"] == "order_flip_rate") & rows["estimate"].notna()]
        if "group" in r.columns:
            r = r[r["group"].isna()]
        if len(r):
            return float(r.iloc[0]["estimate"])
    col = f"{metric}_flip"
    for d in loaded.values():
        if col in d.columns and d[col].notna().any():
            return float(d[col].dropna().astype(bool).mean())
    return None


def metric_validity(loaded: dict[str, Any], metric: str) -> MetricValidity:
    """The validity of ``metric`` from the run's validation rows and judge consistency columns (module docstring)."""
    rows = validation_rows(loaded)
    mv = MetricValidity(metric, anchor=JUDGE_ANCHOR if metric == "judge" else AGREEMENT_ANCHOR)
    mv.order_flip = _order_flip(loaded, rows, metric)
    got = confusion_of(rows, metric) if rows is not None else None
    if got is not None:
        cm, labels = got
        mv.n_items = int(cm.sum())
        mv.accuracy = float(np.trace(cm) / cm.sum()) if cm.sum() else None
        base = majority_baseline(cm, labels)
        if base is not None:
            mv.majority, mv.majority_label = base
        k = kappa_from_confusion(cm)
        mv.kappa = k if k == k else None
    _judge(mv)
    return mv


def _judge(mv: MetricValidity) -> None:
    """Fill ``valid`` and ``reasons`` from the figures (None when nothing was measured)."""
    if mv.accuracy is not None and mv.majority is not None and mv.accuracy <= mv.majority:
        mv.reasons.append(
            f"accuracy {mv.accuracy:.2f} is not above the majority-class baseline {mv.majority:.2f} (always answering "
            f"'{mv.majority_label}', {mv.n_items} items)"
        )
    if mv.kappa is not None and mv.kappa < MIN_KAPPA:
        mv.reasons.append(f"agreement with the human labels hardly above chance (Cohen's kappa {mv.kappa:.2f} < {MIN_KAPPA:g})")
    if mv.order_flip is not None and mv.order_flip > MAX_ORDER_FLIP:
        mv.reasons.append(f"its label changes with the order of the options for {mv.order_flip:.0%} of texts (> {MAX_ORDER_FLIP:.0%})")
    measured = mv.accuracy is not None or mv.kappa is not None or mv.order_flip is not None
    mv.valid = None if not measured else not mv.reasons


def validities(loaded: dict[str, Any], metrics) -> dict[str, MetricValidity]:
    """:func:`metric_validity` of each metric named in ``metrics`` (those validated or with a flip column)."""
    return {m: metric_validity(loaded, m) for m in sorted(set(metrics))}


def mark_invalid(headline, by_metric: dict[str, MetricValidity]) -> None:
    """Mark each finding of a metric that is not valid here (``Finding.invalid`` = the reason, ``invalid_anchor`` =
    where its validation is shown) and add the uncertainty flag: such a finding is never evidence."""
    for f in headline:
        mv = by_metric.get(getattr(f, "source_metric", "") or "")
        if mv is not None and mv.valid is False:
            f.invalid = mv.reason
            f.invalid_anchor = mv.anchor
            if "metric not valid here" not in f.flags:
                f.flags.append("metric not valid here")


def with_majority_baseline(rows):
    """``rows`` (agreement-stage rows) with a ``majority_baseline`` column beside every accuracy: overall rows from the
    metric's confusion matrix, per-group rows (``group_accuracy``) from the group's human labels (the largest
    ``group_miss_rate_<c>`` item count over the group's items). Other rows get null."""
    out = rows.copy()
    base: list[float | None] = [None] * len(out)
    for i, (_, r) in enumerate(out.iterrows()):
        m = r.get("metric")
        if m is None or m != m:
            continue
        if r["measure"] == "accuracy" and not _has_group(r):
            got = confusion_of(out, m)
            mb = majority_baseline(*got) if got is not None else None
            base[i] = mb[0] if mb else None
        elif r["measure"] == "group_accuracy" and r.get("n_items") == r.get("n_items") and r.get("n_items"):
            same = out[(out["metric"] == m) & (out["group"] == r["group"]) & out["measure"].astype(str).str.startswith("group_miss_rate_")]
            if "group_by" in out.columns:
                same = same[same["group_by"] == r["group_by"]]
            counts = same["n_items"].dropna()
            base[i] = float(counts.max() / r["n_items"]) if len(counts) else None
    at = list(out.columns).index("estimate") + 1 if "estimate" in out.columns else len(out.columns)
    out.insert(at, "majority_baseline", base)
    return out


def _has_group(r) -> bool:
    g = r.get("group")
    return g is not None and g == g
