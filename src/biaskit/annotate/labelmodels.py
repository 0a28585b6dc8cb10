"""Label models: one label per item from several crowd labels (``biaskit annotate aggregate``).

Methods (all fitted by `crowd-kit <https://github.com/Toloka/crowd-kit>`_, behind biaskit's own checks
and errors; biaskit does not re-implement the EM):

* ``majority``: crowd-kit ``MajorityVote`` (ties go to the label that sorts first, confidence = vote share).
* ``dawid-skene``: ``DawidSkene`` (one confusion matrix per annotator, EM; Dawid & Skene 1979). Gold items
  are passed as ``true_labels``, so their answer is fixed during EM and informs the confusion matrices.
* ``glad``: ``GLAD`` (annotator skill x item difficulty; Whitehill et al. 2009).
* ``mace``: ``MACE`` (each annotator either knows or spams; Hovy et al. 2013), seeded by ``seed``.
* ``wawa``: ``Wawa`` (majority vote weighted by each annotator's agreement with the plain majority).

Gold items (``samples.is_gold``) are fitted with the rest (their crowd labels tell the model about the
annotators), but their row in the labels table carries the known answer (``is_gold`` true, confidence 1)
so nothing downstream scores them as if they were unknown; only Dawid-Skene uses them as known answers
*inside* the fit (the other crowd-kit models have no such input).

The labels table: ``sample_id, label, confidence, method, n_annotations, is_gold`` (+ ``round``). The
annotator table: ``annotator, method, n_annotations, skill, skill_measure, agreement_with_labels,
gold_accuracy, confusion`` (Dawid-Skene: JSON ``{true label: {given label: probability}}``).
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from biaskit.annotate.tasks import TaskType, get_task_type
from biaskit.arrow import to_arrow
from biaskit.errors import BiaskitError, MissingDependencyError, check_choice
from biaskit.labels import check_task
from biaskit.votes import read_annotations

METHODS = ("majority", "dawid-skene", "glad", "mace", "wawa")

LABELS_SCHEMA = pa.schema(
    [
        ("sample_id", pa.string()),
        ("label", pa.string()),
        ("confidence", pa.float64()),
        ("method", pa.string()),
        ("n_annotations", pa.int64()),
        ("is_gold", pa.bool_()),
        ("round", pa.string()),
    ]
)
ANNOTATORS_SCHEMA = pa.schema(
    [
        ("annotator", pa.string()),
        ("method", pa.string()),
        ("n_annotations", pa.int64()),
        ("skill", pa.float64()),
        ("skill_measure", pa.string()),
        ("agreement_with_labels", pa.float64()),
        ("gold_accuracy", pa.float64()),
        ("confusion", pa.string()),
    ]
)

SKILL_MEASURES = {
    "majority": "share of the annotator's labels equal to the majority label",
    "dawid-skene": "mean diagonal of the annotator's confusion matrix (probability of giving the true label)",
    "glad": "GLAD alpha (log-odds skill; 0 = random, negative = adversarial)",
    "mace": "MACE probability that the annotator is not spamming",
    "wawa": "Wawa skill: agreement with the majority vote",
}


class CrowdWarning(UserWarning):
    """An annotations table whose figures cannot be trusted (one annotator, no overlap, one label)."""


class LabelModelWarning(CrowdWarning):
    """An annotations table a label model can fit but should not be trusted on (one label, one annotator, no overlap)."""


def check_task_labels(labels, task: TaskType | None, *, what: str = "the annotations") -> None:
    """E251 when a label is outside the task's label set (pull drops those; a hand-made table may have them);
    E386 when there is no task to check them against (no ``task_type`` column and no ``--task``)."""
    if task is None:
        raise BiaskitError(
            "E386",
            f"{what} name no task type, so their labels cannot be checked",
            value=None,
            fix="pass --task (e.g. --task sentiment, or --task name:a,b,c), or give a table with a task_type column",
        )
    check_task(labels, task, what=what, fix="pull the labels with `biaskit annotate pull` (it drops such labels) or pass the right --task")


def gold_answers(samples: Any, task: TaskType | None) -> dict[str, str]:
    """sample_id -> gold label of the samples table's gold items, each checked against the task's labels
    (a gold answer outside them, e.g. ``SUPERPOSITIVE``, is E251, never an item's label)."""
    gold: dict[str, str] = {}
    if samples is None:
        return gold
    s = to_arrow(samples)
    if "is_gold" in s.column_names:
        gl = s.column("gold_label").to_pylist() if "gold_label" in s.column_names else [None] * s.num_rows
        for sid, g, lab in zip(s.column("sample_id").to_pylist(), s.column("is_gold").to_pylist(), gl):
            if g and lab is not None:
                gold[sid] = lab
    if gold and task is not None:
        check_task_labels(list(gold.values()), task, what="the samples table's gold answers (gold_label)")
    return gold


def crowd_warnings(items: list[str], annotators: list[str], labels: list[str], *, cls=CrowdWarning, stacklevel: int = 3) -> list[str]:
    """Named warnings for one annotator, no item labelled twice, or every label the same; returns the messages."""
    notes = []
    per_item = Counter(items)
    if len(set(annotators)) < 2:
        notes.append("only one annotator: agreement and annotator quality cannot be estimated")
    elif per_item and max(per_item.values()) < 2:
        notes.append("no overlap: every item has a single label, so agreement cannot be estimated")
    if len(set(labels)) == 1:
        notes.append(f"every annotation has the same label ({labels[0]!r}): chance-corrected agreement is undefined")
    for n in notes:
        warnings.warn(n, cls, stacklevel=stacklevel)
    return notes


@dataclass
class Aggregation:
    labels: pa.Table
    annotators: pa.Table
    method: str
    warnings: list[str] = field(default_factory=list)


def _crowdkit():
    try:
        from crowdkit import aggregation
    except ImportError:
        raise MissingDependencyError("crowdkit", "annotate", "the label models (crowd-kit)") from None
    return aggregation


def crowd_frame(annotations: Any, *, task: str | TaskType | None = None, samples: Any = None):
    """(DataFrame task/worker/label, task type, gold answers) after biaskit's checks on the annotations."""
    import pandas as pd

    t = read_annotations(annotations)
    if task is None and "task_type" in t.column_names:
        specs = sorted({x for x in t.column("task_type").to_pylist() if x})
        task = specs[0] if len(specs) == 1 else None
    if task is None and samples is not None and "task_type" in to_arrow(samples).column_names:
        specs = sorted({x for x in to_arrow(samples).column("task_type").to_pylist() if x})
        task = specs[0] if len(specs) == 1 else None
    tt = get_task_type(task) if task is not None else None
    rows = [
        (s, a, lab)
        for s, a, lab in zip(*(t.column(c).to_pylist() for c in ("sample_id", "annotator", "label")))
        if lab is not None and s is not None and a is not None
    ]
    if not rows:
        raise BiaskitError("E250", "no annotations to aggregate", value=t.num_rows, fix="pull the round's labels first (biaskit annotate pull)")
    check_task_labels([lab for _, _, lab in rows], tt)
    pairs = Counter((s, a) for s, a, _ in rows)
    dup = [k for k, v in pairs.items() if v > 1]
    if dup:
        raise BiaskitError(
            "E007",
            f"{len(dup)} (sample_id, annotator) pair(s) hold several labels",
            value=dup[:3],
            fix="pull the labels with `biaskit annotate pull`, which keeps each annotator's latest label",
        )
    gold = gold_answers(samples, tt)
    df = pd.DataFrame(rows, columns=["task", "worker", "label"])
    return df, tt, gold


def check_crowd(df, method: str) -> list[str]:
    """Warnings (and E252 for label models) on tables a label model cannot learn annotator quality from."""
    notes = []
    n_workers = df["worker"].nunique()
    per_item = df.groupby("task")["worker"].nunique()
    n_labels = df["label"].nunique()
    if n_workers < 2:
        if method != "majority":
            raise BiaskitError(
                "E252",
                f"{method} needs labels from at least two annotators to estimate their quality",
                value={"annotators": int(n_workers)},
                fix="use --method majority, or collect labels from more annotators",
            )
        notes.append("only one annotator: the labels are that annotator's, nothing is aggregated")
    elif int((per_item >= 2).sum()) == 0:
        if method != "majority":
            raise BiaskitError(
                "E252",
                f"{method} needs items labelled by several annotators (overlap); every item has one label",
                value={"items": int(len(per_item)), "max_labels_per_item": int(per_item.max())},
                fix="push the round with --annotators 3 (or more), or use --method majority",
            )
        notes.append("no overlap: every item has a single label, so nothing is aggregated")
    if n_labels < 2:
        notes.append(f"every annotation has the same label ({df['label'].iloc[0]!r}): annotator quality cannot be estimated")
    for n in notes:
        warnings.warn(n, LabelModelWarning, stacklevel=3)
    return notes


def fit_crowdkit(df, method: str, *, gold: dict[str, str] | None = None, seed: int = 0, n_iter: int = 100):
    """The fitted crowd-kit model and its (labels Series, probas DataFrame) for ``method``."""
    import pandas as pd

    ag = _crowdkit()
    if method == "majority":
        m = ag.MajorityVote()
        m.fit(df)
    elif method == "dawid-skene":
        m = ag.DawidSkene(n_iter=n_iter)
        tl = pd.Series({k: v for k, v in (gold or {}).items() if k in set(df["task"])}, dtype=object)
        m.fit(df, true_labels=tl if len(tl) else None)
    elif method == "glad":
        m = ag.GLAD(n_iter=n_iter)
        m.fit(df)
    elif method == "mace":
        m = ag.MACE(random_state=seed)
        m.fit(df)
    elif method == "wawa":
        # Wawa.predict() fails under scikit-learn >= 1.6 (its check_is_fitted needs sklearn tags that crowd-kit
        # 1.4.2's attrs classes lack), so do what Wawa._apply does: its fitted skills weight crowd-kit's MajorityVote
        m = ag.Wawa()
        m.fit(df)
        mv = ag.MajorityVote().fit(df, skills=m.skills_)
        m.labels_, m.probas_ = mv.labels_, mv.probas_
    else:
        raise BiaskitError("E253", "unknown label model", value=method, options=METHODS, fix="use --method dawid-skene (or majority)")
    return m, m.labels_, m.probas_


def aggregate(
    annotations: Any, *, method: str = "dawid-skene", samples: Any = None, task: str | TaskType | None = None, seed: int = 0
) -> Aggregation:
    """One label per item from the crowd's labels with a crowd-kit label model (see the module docstring; the
    iterative models run :func:`fit_crowdkit`'s 100 iterations)."""
    check_choice("E253", "unknown label model", method, METHODS, fix="use --method dawid-skene (or majority)")
    df, tt, gold = crowd_frame(annotations, task=task, samples=samples)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LabelModelWarning)
        notes = check_crowd(df, method)
    for n in notes:
        warnings.warn(n, LabelModelWarning, stacklevel=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # crowd-kit's pandas inplace= calls (Pandas4Warning)
        warnings.simplefilter("ignore", DeprecationWarning)
        model, labels, probas = fit_crowdkit(df, method, gold=gold, seed=seed)
    n_ann = df.groupby("task").size()
    rounds = sorted({x for x in to_arrow(annotations).column("round").to_pylist() if x}) if "round" in to_arrow(annotations).column_names else []
    rnd = rounds[0] if len(rounds) == 1 else None
    out = []
    for sid in sorted(n_ann.index):
        if sid in gold:
            out.append(
                {
                    "sample_id": sid,
                    "label": gold[sid],
                    "confidence": 1.0,
                    "method": method,
                    "n_annotations": int(n_ann[sid]),
                    "is_gold": True,
                    "round": rnd,
                }
            )
            continue
        lab = labels.get(sid)
        conf = float(probas.loc[sid, lab]) if lab is not None and lab in probas.columns else None
        out.append(
            {
                "sample_id": sid,
                "label": None if lab is None else str(lab),
                "confidence": conf,
                "method": method,
                "n_annotations": int(n_ann[sid]),
                "is_gold": False,
                "round": rnd,
            }
        )
    lab_t = pa.Table.from_pylist(out, schema=LABELS_SCHEMA)
    return Aggregation(lab_t, _annotator_table(df, model, method, {r["sample_id"]: r["label"] for r in out}, gold), method, notes)


def _annotator_table(df, model, method: str, final: dict[str, str | None], gold: dict[str, str]) -> pa.Table:
    workers = sorted(df["worker"].unique())
    skill: dict[str, float] = {}
    confusion: dict[str, str] = {}
    if method == "dawid-skene":
        err = model.errors_  # index (worker, given label), columns true label
        for w in workers:
            sub = err.loc[w]
            mat = {str(tl): {str(gl): round(float(sub.loc[gl, tl]), 6) for gl in sub.index} for tl in sub.columns}
            confusion[w] = json.dumps(mat, sort_keys=True)
            diag = [float(sub.loc[c, c]) for c in sub.columns if c in sub.index]
            skill[w] = float(np.mean(diag)) if diag else float("nan")
    elif method == "glad":
        skill = {str(k): float(v) for k, v in model.alphas_.items()}
    elif method == "mace":
        import pandas as pd

        _, names = pd.factorize(df["worker"])
        skill = {str(n): float(model.spamming_[i, 1]) for i, n in enumerate(names)}
    elif method in ("wawa", "majority"):
        skill = {str(k): float(v) for k, v in model.skills_.items()}
    rows = []
    for w, sub in df.groupby("worker"):
        agree = [final.get(t) == lab for t, lab in zip(sub["task"], sub["label"]) if final.get(t) is not None and t not in gold]
        g = [gold[t] == lab for t, lab in zip(sub["task"], sub["label"]) if t in gold]
        sk = skill.get(str(w))
        rows.append(
            {
                "annotator": str(w),
                "method": method,
                "n_annotations": int(len(sub)),
                "skill": None if sk is None or not np.isfinite(sk) else sk,
                "skill_measure": SKILL_MEASURES[method],
                "agreement_with_labels": float(np.mean(agree)) if agree else None,
                "gold_accuracy": float(np.mean(g)) if g else None,
                "confusion": confusion.get(str(w)),
            }
        )
    return pa.Table.from_pylist(rows, schema=ANNOTATORS_SCHEMA)
