"""The figures of ``biaskit train classifier``: accuracy and macro F1, their mean and sd over runs, and the
warnings when the fine-tuned model is no better than a baseline (see :mod:`biaskit.train.classifier`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from biaskit.train.config import SYSTEMS


def accuracy_macro_f1(y_true: Sequence[Any], y_pred: Sequence[Any]) -> tuple[float, float]:
    """Accuracy and macro F1 over the classes present in ``y_true`` or ``y_pred`` (a class with no true and
    no predicted item does not count; a class predicted but never true has F1 0)."""
    n = len(y_true)
    acc = sum(a == b for a, b in zip(y_true, y_pred)) / n
    f1s = []
    for c in sorted(set(y_true) | set(y_pred), key=str):
        tp = sum(a == c and b == c for a, b in zip(y_true, y_pred))
        fp = sum(a != c and b == c for a, b in zip(y_true, y_pred))
        fn = sum(a == c and b != c for a, b in zip(y_true, y_pred))
        f1s.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return float(acc), float(sum(f1s) / len(f1s))


def _mean_sd(xs: Sequence[float | None]) -> tuple[float | None, float | None]:
    v = [x for x in xs if x is not None]
    if not v:
        return None, None
    m = sum(v) / len(v)
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else None
    return m, sd


def summarise(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    summary: dict[str, dict[str, Any]] = {}
    for sname in SYSTEMS:
        vals = [run["systems"][sname] for run in runs if sname in run["systems"]]
        if not vals:
            continue
        am, asd = _mean_sd([v.get("accuracy") for v in vals])
        fm, fsd = _mean_sd([v.get("macro_f1") for v in vals])
        summary[sname] = {"accuracy_mean": am, "accuracy_sd": asd, "macro_f1_mean": fm, "macro_f1_sd": fsd, "runs": len(vals)}
        if vals[0].get("rule"):
            summary[sname]["rule"] = vals[0]["rule"]
        if any(v.get("error") for v in vals):
            summary[sname]["error"] = next(v["error"] for v in vals if v.get("error"))
    return summary


def majority_warnings(runs: list[dict[str, Any]]) -> list[str]:
    """ "no better than the majority baseline" for fine-tuned runs whose test accuracy is at most the majority class's
    on the same split (a model that collapsed to one class scores exactly that)."""
    ft = [r for r in runs if "finetuned" in r["systems"]]
    if not ft:
        return []
    worse = [r for r in ft if r["systems"]["finetuned"]["accuracy"] <= r["majority_accuracy"] + 1e-12]
    single = [r for r in ft if len(r["systems"]["finetuned"].get("pred_class_counts") or {}) == 1]
    if not worse:
        return []
    fa = sum(r["systems"]["finetuned"]["accuracy"] for r in ft) / len(ft)
    ma = sum(r["majority_accuracy"] for r in ft) / len(ft)
    msg = (
        f"the fine-tuned model is no better than the majority baseline in {len(worse)} of {len(ft)} run(s) "
        f"(test accuracy {100 * fa:.1f} vs {100 * ma:.1f} for always predicting the most frequent class, mean over runs)"
    )
    if single:
        msg += f"; {len(single)} run(s) predict a single class for every test text"
    return [msg + ": more epochs (--epochs), another learning rate (--lr) or more labelled data may help; do not use it as a metric as is"]


def baseline_warnings(runs: list[dict[str, Any]]) -> list[str]:
    """ "below the TF-IDF baseline" when the fine-tuned model's test macro-F1, averaged over the runs that have both,
    is lower than the TF-IDF + logistic regression baseline's on the same splits."""
    both = [r for r in runs if "finetuned" in r["systems"] and r["systems"].get("tfidf_logreg", {}).get("macro_f1") is not None]
    both = [r for r in both if r["systems"]["finetuned"].get("macro_f1") is not None]
    if not both:
        return []
    n = len(both)
    ff = sum(r["systems"]["finetuned"]["macro_f1"] for r in both) / n
    tf = sum(r["systems"]["tfidf_logreg"]["macro_f1"] for r in both) / n
    if ff >= tf:
        return []
    worse = sum(r["systems"]["finetuned"]["macro_f1"] < r["systems"]["tfidf_logreg"]["macro_f1"] for r in both)
    fa = sum(r["systems"]["finetuned"].get("accuracy") or 0.0 for r in both) / n
    ta = sum(r["systems"]["tfidf_logreg"].get("accuracy") or 0.0 for r in both) / n
    return [
        f"the fine-tuned model scores below the TF-IDF + logistic regression baseline (macro-F1 {100 * ff:.1f} vs {100 * tf:.1f}, "
        f"accuracy {100 * fa:.1f} vs {100 * ta:.1f}, mean over {n} run(s); below it in {worse}): the baseline is the better "
        "classifier on this data; more epochs (--epochs), another learning rate (--lr) or another encoder (--base-model) may help"
    ]
