"""Inter-annotator agreement, careless-annotator checks and majority-vote ground truth.

All statistics are computed here from first principles (numpy) and checked in the tests against
independent implementations: statsmodels' ``fleiss_kappa``, the ``krippendorff`` package and
scikit-learn's ``cohen_kappa_score``.

* Fleiss' kappa needs the same number of ratings per item: it uses the items with the largest number of
  ratings (``n_items`` says how many) and is null with an ``error`` when fewer than two remain.
* Krippendorff's alpha (nominal and ordinal) allows missing ratings: items with one rating are ignored.
  Ordinal alpha ranks labels by the task's ordinal scale; labels off the scale (regard's ``other``) count
  as missing there. Computed per item from category counts, so it handles any number of annotators
  (Argilla v1 collapsed all records into one item and reported alpha = 0.000: a regression test covers it).
* Pairwise Cohen's kappa on the items both annotators labelled.
* Per annotator: agreement and Cohen's kappa with the majority of the *other* annotators (leave-one-out,
  so an annotator cannot vote for their own majority), accuracy on gold items, and a careless flag.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from biaskit.annotate.labelmodels import check_task_labels, crowd_warnings, gold_answers
from biaskit.annotate.tasks import TaskType, get_task_type
from biaskit.arrow import to_arrow
from biaskit.bootstrap import percentile_ci, resample_each
from biaskit.errors import BiaskitError
from biaskit.schema import AGREEMENT
from biaskit.votes import LabelTable, majority_vote, read_labels, top_labels

# --------------------------------------------------------------------------- statistics


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' kappa from an items x categories count table with equal row sums (>= 2)."""
    counts = np.asarray(counts, dtype=float)
    n = counts.sum(axis=1)
    if counts.shape[0] == 0 or n.min() < 2 or not np.all(n == n[0]):
        raise ValueError("fleiss_kappa needs >= 1 item and the same number (>= 2) of ratings per item")
    r = n[0]
    p_j = counts.sum(axis=0) / counts.sum()
    p_i = ((counts**2).sum(axis=1) - r) / (r * (r - 1))
    pbar, pe = p_i.mean(), float((p_j**2).sum())
    if np.isclose(pe, 1.0):
        return float("nan")
    return float((pbar - pe) / (1 - pe))


def _delta2(n_c: np.ndarray, level: str) -> np.ndarray:
    k = len(n_c)
    if level == "nominal":
        return 1.0 - np.eye(k)
    if level == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        d = np.zeros((k, k))
        for c in range(k):
            for e in range(c, k):
                v = cum[e + 1] - cum[c] - (n_c[c] + n_c[e]) / 2.0
                d[c, e] = d[e, c] = v * v
        return d
    raise ValueError(f"unknown level {level!r}")


def krippendorff_alpha(counts: np.ndarray, level: str = "nominal") -> float:
    """Krippendorff's alpha from items x categories counts (categories in ordinal order for ``ordinal``).

    Items with fewer than two ratings are not pairable and are ignored.
    """
    counts = np.asarray(counts, dtype=float)
    m = counts.sum(axis=1)
    counts = counts[m >= 2]
    m = m[m >= 2]
    if counts.shape[0] == 0:
        return float("nan")
    w = counts / (m - 1)[:, None]
    o = w.T @ counts - np.diag(w.sum(axis=0))  # coincidence matrix
    n_c = o.sum(axis=0)
    n = n_c.sum()
    d = _delta2(n_c, level)
    d_o = (o * d).sum()
    d_e = (np.outer(n_c, n_c) * d).sum()
    if d_e == 0:
        return float("nan")
    return float(1.0 - (n - 1) * d_o / d_e)


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float:
    """Cohen's kappa between two equal-length label sequences."""
    if len(a) != len(b) or not a:
        raise ValueError("cohen_kappa needs two non-empty label lists of equal length")
    cats = sorted(set(a) | set(b))
    idx = {c: i for i, c in enumerate(cats)}
    cm = np.zeros((len(cats), len(cats)))
    for x, y in zip(a, b):
        cm[idx[x], idx[y]] += 1
    n = cm.sum()
    po = np.trace(cm) / n
    pe = float((cm.sum(axis=1) * cm.sum(axis=0)).sum() / (n * n))
    if np.isclose(pe, 1.0):
        return float("nan")
    return float((po - pe) / (1 - pe))


def bootstrap_ci(
    stat: Callable[[np.ndarray], float], n: int, *, n_boot: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[float | None, float | None]:
    """Percentile bootstrap CI of ``stat(indices)`` over ``n`` items resampled with replacement."""
    if n_boot <= 0 or n < 2:
        return None, None
    return percentile_ci(resample_each(stat, n), n_boot, np.random.default_rng(seed), level=level, min_finite=max(10, n_boot // 10))


# --------------------------------------------------------------------------- agreement table


def agreement_row(round_: str, task: str | None, measure: str, value: float | None, **kw) -> dict[str, Any]:
    reason = kw.pop("reason", None)
    if value is not None and not np.isfinite(value):
        value, reason = None, reason or "undefined (all ratings in one category or too few items)"
    return {
        "round": round_,
        "measure": measure,
        "estimate": value,
        "task_type": task,
        "metric": None,
        "annotator": None,
        "annotator_b": None,
        "n_items": None,
        "n_annotators": None,
        "p_value": None,
        "ci_low": None,
        "ci_high": None,
        "reason": reason,
        **kw,
    }


def agreement(
    annotations: Any,
    *,
    round: str | None = None,
    task: str | TaskType | None = None,
    samples: Any = None,
    careless_kappa: float = 0.2,
    n_boot: int = 1000,
    seed: int = 0,
    labels: Any = None,
) -> pa.Table:
    """All agreement figures of a round as agreement-stage rows.

    ``labels``: a labels table of ``annotate aggregate`` (a label model): adds, per annotator, agreement and
    Cohen's kappa with those labels (``annotator_labels_agreement``/``_kappa``) and ``labels_items``; the
    leave-one-out majority rows stay as they are.

    Gold items (``samples.is_gold``) are left out of inter-annotator agreement and used for per-annotator
    gold accuracy. ``careless_kappa``: an annotator whose Cohen's kappa with the leave-one-out majority is
    below it is flagged (``careless_flag`` = 1).
    """
    t, round = _one_round(to_arrow(annotations), round)
    if task is None and "task_type" not in t.column_names and samples is not None:
        task = _task_of(to_arrow(samples), None)[1]  # the samples name the task the annotations lack
    tt, spec = _task_of(t, task)

    check_task_labels(t.column("label").to_pylist(), tt)
    gold = gold_answers(samples, tt)
    crowd_warnings(*(t.column(c).to_pylist() for c in ("sample_id", "annotator", "label")))
    lt = LabelTable.from_annotations(t, exclude_items=gold)
    row = partial(agreement_row, round, spec)
    rows = _coefficient_rows(row, lt, tt, n_boot=n_boot, seed=seed)
    rows += _pairwise_cohen_rows(row, lt)
    rows += _annotator_majority_rows(row, lt, careless_kappa)
    if gold:
        rows += _gold_accuracy_rows(row, t, gold)
    if labels is not None:
        rows += _label_model_rows(row, lt, labels, gold)
    rows += _majority_summary_rows(row, t, tt, gold, n_annotators=len(lt.annotators))
    return rows_to_table(rows)


#: ``agreement_row`` with the round and task filled in: ``row(measure, value, **columns)``
_RowFn = Callable[..., dict[str, Any]]


def _one_round(t: pa.Table, round: str | None) -> tuple[pa.Table, str]:
    """The annotations of one round and its name: the table's only round, or the rows of ``round``."""
    if t.num_rows == 0:
        raise BiaskitError(
            "E091",
            "no annotations to compute agreement on",
            value=0,
            fix="pull annotations first (biaskit annotate pull) and check the round has labels",
        )
    if round is None:
        rounds = sorted(set(t.column("round").to_pylist())) if "round" in t.column_names else ["?"]
        if len(rounds) != 1:
            raise BiaskitError("E091", "the annotations hold several rounds", value=rounds, fix="pass --round NAME")
        round = rounds[0]
    elif "round" in t.column_names:
        have = sorted({x for x in t.column("round").to_pylist() if x})
        t = t.filter(pc.equal(t.column("round"), round))
        if t.num_rows == 0:
            raise BiaskitError("E091", "no annotations of this round", value=round, options=have, fix="pass one of the rounds in the table")
    return t, round


def _task_of(t: pa.Table, task: str | TaskType | None) -> tuple[TaskType | None, str | None]:
    """The task type (given, or the table's only ``task_type``) and its spec for the rows."""
    if task is None and "task_type" in t.column_names:
        specs = sorted({x for x in t.column("task_type").to_pylist() if x})
        task = specs[0] if len(specs) == 1 else None
    tt = get_task_type(task) if task else None
    spec = (task if isinstance(task, str) else tt.name) if tt else None
    return tt, spec


def _coefficient_rows(row: _RowFn, lt: LabelTable, tt: TaskType | None, *, n_boot: int, seed: int) -> list[dict[str, Any]]:
    """Fleiss' kappa, Krippendorff's alpha (nominal; ordinal for an ordinal task) with bootstrap CIs over
    items, and percent agreement."""
    counts = lt.counts(lt.categories(tt))
    m = counts.sum(axis=1)
    k_ann = len(lt.annotators)
    rows = [_fleiss_row(row, counts, m, n_boot=n_boot, seed=seed)]
    pairable = counts[m >= 2]
    val = krippendorff_alpha(counts, "nominal")
    lo, hi = bootstrap_ci(lambda idx: krippendorff_alpha(pairable[idx], "nominal"), len(pairable), n_boot=n_boot, seed=seed)
    rows.append(row("krippendorff_alpha_nominal", val, n_items=int((m >= 2).sum()), n_annotators=k_ann, ci_low=lo, ci_high=hi))
    if tt is not None and tt.ordinal:
        oc = lt.counts(list(tt.ordinal))
        om = oc.sum(axis=1)
        opair = oc[om >= 2]
        val = krippendorff_alpha(oc, "ordinal")
        lo, hi = bootstrap_ci(lambda idx: krippendorff_alpha(opair[idx], "ordinal"), len(opair), n_boot=n_boot, seed=seed)
        rows.append(row("krippendorff_alpha_ordinal", val, n_items=int((om >= 2).sum()), n_annotators=k_ann, ci_low=lo, ci_high=hi))
    agree = [(r.max() == r.sum()) for r in pairable] if len(pairable) else []
    rows.append(
        row(
            "percent_agreement",
            float(np.mean(agree)) if agree else None,
            n_items=len(agree),
            n_annotators=k_ann,
            reason=None if agree else "no item has two labels",
        )
    )
    return rows


def _fleiss_row(row: _RowFn, counts: np.ndarray, m: np.ndarray, *, n_boot: int, seed: int) -> dict[str, Any]:
    """Fleiss' kappa on the items with the largest number of ratings (``m``: ratings per item)."""
    full = m == m.max() if len(m) else m
    if len(m) and m.max() >= 2 and full.sum() >= 2:
        c_full = counts[full]
        val = fleiss_kappa(c_full)
        lo, hi = bootstrap_ci(lambda idx: fleiss_kappa(c_full[idx]), len(c_full), n_boot=n_boot, seed=seed)
        return row("fleiss_kappa", val, n_items=int(full.sum()), n_annotators=int(m.max()), ci_low=lo, ci_high=hi)
    return row(
        "fleiss_kappa",
        None,
        n_items=int(full.sum()) if len(m) else 0,
        reason="needs at least two items each labelled by the same number (>= 2) of annotators",
    )


def _pairwise_cohen_rows(row: _RowFn, lt: LabelTable) -> list[dict[str, Any]]:
    """Cohen's kappa of every pair of annotators on the items both labelled, and the mean of the defined ones."""
    rows: list[dict[str, Any]] = []
    kappas = []
    k_ann = len(lt.annotators)
    for a in range(k_ann):
        for b in range(a + 1, k_ann):
            both = [(x, y) for r in lt.labels if (x := r[a]) is not None and (y := r[b]) is not None]
            pair = dict(annotator=lt.annotators[a], annotator_b=lt.annotators[b], n_items=len(both), n_annotators=2)
            if len(both) >= 2:
                v = cohen_kappa([x for x, _ in both], [y for _, y in both])
                kappas.append(v)
                rows.append(row("cohen_kappa", v, **pair))
            else:
                rows.append(row("cohen_kappa", None, reason="fewer than two items labelled by both", **pair))
    fin = [k for k in kappas if np.isfinite(k)]
    if fin:
        rows.append(row("cohen_kappa_mean", float(np.mean(fin)), n_items=len(lt.items), n_annotators=k_ann))
    return rows


def _annotator_majority_rows(row: _RowFn, lt: LabelTable, careless_kappa: float) -> list[dict[str, Any]]:
    """Per annotator: agreement and Cohen's kappa with the leave-one-out majority, and the careless flag."""
    rows: list[dict[str, Any]] = []
    for j, ann in enumerate(lt.annotators):
        mine, maj = [], []
        for labs in lt.labels:
            own = labs[j]
            if own is None:
                continue
            others = [x for i, x in enumerate(labs) if i != j and x is not None]
            tops, _ = top_labels(others)
            if len(tops) == 1:
                mine.append(own)
                maj.append(tops[0])
        if not mine:
            rows.append(
                row("annotator_majority_agreement", None, annotator=ann, n_items=0, reason="no item where the other annotators have a clear majority")
            )
            continue
        rate = float(np.mean([x == y for x, y in zip(mine, maj)]))
        kap = cohen_kappa(mine, maj) if len(mine) >= 2 else float("nan")
        rows.append(row("annotator_majority_agreement", rate, annotator=ann, n_items=len(mine)))
        rows.append(row("annotator_majority_kappa", kap, annotator=ann, n_items=len(mine)))
        flag = (np.isfinite(kap) and kap < careless_kappa) or (not np.isfinite(kap) and rate < 0.5)
        rows.append(row("careless_flag", 1.0 if flag else 0.0, annotator=ann, n_items=len(mine)))
    return rows


def _gold_accuracy_rows(row: _RowFn, t: pa.Table, gold: dict[str, str]) -> list[dict[str, Any]]:
    """Per annotator: the share of the gold items they labelled with the gold label."""
    gt = LabelTable.from_annotations(t.filter(pc.is_in(t.column("sample_id"), pa.array(list(gold)))))
    rows = []
    for j, ann in enumerate(gt.annotators):
        hits = [labs[j] == gold[it] for it, labs in zip(gt.items, gt.labels) if labs[j] is not None]
        rows.append(
            row(
                "annotator_gold_accuracy",
                float(np.mean(hits)) if hits else None,
                annotator=ann,
                n_items=len(hits),
                reason=None if hits else "no gold items labelled",
            )
        )
    return rows


def _label_model_rows(row: _RowFn, lt: LabelTable, labels: Any, gold: dict[str, str]) -> list[dict[str, Any]]:
    """Per annotator: agreement and Cohen's kappa with a label model's labels (gold items left out), and
    ``labels_items``."""
    lt_ = read_labels(labels)
    method = sorted({x for x in lt_.column("method").to_pylist() if x}) if "method" in lt_.column_names else []
    final = {
        sid: lab for sid, lab in zip(lt_.column("sample_id").to_pylist(), lt_.column("label").to_pylist()) if lab is not None and sid not in gold
    }
    note = f"labels of {', '.join(method) or 'a label model'}"
    rows: list[dict[str, Any]] = []
    for j, ann in enumerate(lt.annotators):
        mine = [(own, final[it]) for it, labs in zip(lt.items, lt.labels) if (own := labs[j]) is not None and it in final]
        if not mine:
            rows.append(
                row("annotator_labels_agreement", None, annotator=ann, n_items=0, note=note, reason="no item of this annotator in the labels table")
            )
            continue
        rate = float(np.mean([x == y for x, y in mine]))
        kap = cohen_kappa([x for x, _ in mine], [y for _, y in mine]) if len(mine) >= 2 else float("nan")
        rows.append(row("annotator_labels_agreement", rate, annotator=ann, n_items=len(mine), note=note))
        rows.append(row("annotator_labels_kappa", kap, annotator=ann, n_items=len(mine), note=note))
    rows.append(row("labels_items", float(len(final)), n_items=len(lt.items), n_annotators=len(lt.annotators), note=note))
    return rows


def _majority_summary_rows(row: _RowFn, t: pa.Table, tt: TaskType | None, gold: dict[str, str], *, n_annotators: int) -> list[dict[str, Any]]:
    """How many non-gold items get a majority label (ties dropped), and how many are ties."""
    mv = majority_vote(t.filter(pc.invert(pc.is_in(t.column("sample_id"), pa.array(list(gold), pa.string())))), task=tt)
    return [
        row("majority_items", float(sum(mv.column("kept").to_pylist())), n_items=mv.num_rows, n_annotators=n_annotators),
        row("majority_ties", float(sum(mv.column("tie").to_pylist())), n_items=mv.num_rows, n_annotators=n_annotators),
    ]


def careless_annotators(table: Any) -> list[str]:
    """Annotators flagged by :func:`agreement` (``careless_flag`` = 1)."""
    t = to_arrow(table)
    return sorted(
        a
        for a, mm, v in zip(t.column("annotator").to_pylist(), t.column("measure").to_pylist(), t.column("estimate").to_pylist())
        if mm == "careless_flag" and v == 1.0
    )


def rows_to_table(rows: list[dict[str, Any]]) -> pa.Table:
    schema = AGREEMENT.arrow_schema()
    return pa.Table.from_pylist([{f.name: r.get(f.name) for f in schema} for r in rows], schema=schema)


def value(table: Any, measure: str, **where: Any) -> float | None:
    """The value of one figure in an agreement table (helper for tests, docs and reports)."""
    t = to_arrow(table)
    for r in t.to_pylist():
        if r["measure"] == measure and all(r.get(k) == v for k, v in where.items()):
            return r["estimate"]
    raise KeyError(f"{measure} {where} not in the table")
