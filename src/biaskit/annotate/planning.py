"""Planning the next annotation round (``biaskit annotate plan``) and drawing it (``sample --plan``).

Method (normal approximation with the observed rate): for a per-group rate ``p`` (accuracy, or the miss
rate of one class) measured on ``m`` items, the 95% CI half-width is about ``z * sqrt(p (1 - p) / m)``
(``z`` = 1.96). To bring it to the target ``h`` the rate needs ``m* = ceil(z^2 p (1 - p) / h^2)`` items.
A miss rate of class ``c`` is measured only on the items the humans put in ``c``, so the group needs
``ceil(m* / share_c)`` items in all, where ``share_c`` is the observed share of ``c`` in the group; the plan
asks for the difference to what the group already has (never negative). When the observed rate is 0 or 1
(no spread to go on) ``p`` is replaced by ``(x + 2) / (m + 4)`` (Agresti-Coull). A test checks the predicted
half-widths against simulated rounds (within 20%).

The next round then prefers the items the metric is least sure about (:func:`uncertainty`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from biaskit.annotate.metriccols import MetricColumns
from biaskit.arrow import to_arrow
from biaskit.errors import BiaskitError, check_choice
from biaskit.evaluate.stats.inference import Z95
from biaskit.formats.plans import PLAN_FIELDS, PLAN_FIX, PLAN_GROUP_FIELDS
from biaskit.inputs import check_record, read_json
from biaskit.labels import check_task


def half_width(p: float, m: float, z: float = Z95) -> float:
    """Normal-approximation CI half-width of a proportion ``p`` on ``m`` items."""
    return z * math.sqrt(p * (1 - p) / m) if m > 0 else float("inf")


def plan_round(validation: Any, *, target: float = 0.05, rate: str = "accuracy", metric: str | None = None, z: float = Z95) -> dict[str, Any]:
    """Items each group needs so that the CI half-width of ``rate`` falls to ``target`` (see the module docstring)."""
    if not (0 < target < 0.5):
        raise BiaskitError("E256", "the target CI half-width must be between 0 and 0.5", value=target, fix="e.g. --target-ci 0.05")
    t = to_arrow(validation)
    need = {"measure", "estimate", "n_items", "group", "metric"}
    if not need <= set(t.column_names):
        raise BiaskitError(
            "E256",
            "the validation table has no per-group rows",
            value=sorted(set(t.column_names))[:20],
            fix="run `biaskit annotate validate ... --by group` (a samples column) first",
        )
    rows = [r for r in t.to_pylist() if r["group"] is not None and r["measure"].startswith("group_") and not r.get("group_b")]
    metrics = sorted({r["metric"] for r in rows if r["metric"]})
    if not rows:
        raise BiaskitError(
            "E256",
            "the validation table has no per-group rows",
            value=t.num_rows,
            fix="run `biaskit annotate validate ... --by group` (a samples column) first",
        )
    if metric is None:
        if len(metrics) != 1:
            raise BiaskitError("E256", "the validation table holds several metrics", value=metrics, options=metrics, fix="pass --metric NAME")
        metric = metrics[0]
    else:
        check_choice("E256", "no per-group rows for this metric", metric, metrics, fix="pass one of the metrics")
    rows = [r for r in rows if r["metric"] == metric]
    rates = sorted({r["measure"][len("group_") :] for r in rows} - {"f1_macro", "spearman_rho"})
    check_choice("E256", "unknown rate to plan for", rate, rates, fix="use --rate accuracy or --rate miss_rate_<label>")
    by = next((r.get("group_by") for r in rows if r.get("group_by")), None)
    size = {r["group"]: int(r["n_items"] or 0) for r in rows if r["measure"] == "group_accuracy"}
    groups: dict[str, Any] = {}
    for r in rows:
        if r["measure"] != f"group_{rate}":
            continue
        g, m, n_g = r["group"], int(r["n_items"] or 0), size.get(r["group"], 0)
        p = r["estimate"]
        entry: dict[str, Any] = {"n_now": n_g, "rate_items_now": m, "rate": p}
        if p is None or m == 0 or n_g == 0:
            entry.update({"n_more": None, "error": r.get("reason") or "the rate is undefined in this group"})
            groups[g] = entry
            continue
        x = p * m
        p_eff = p if 0 < p < 1 else (x + 2) / (m + 4)
        share = m / n_g
        m_star = math.ceil(z * z * p_eff * (1 - p_eff) / (target * target))
        n_total = math.ceil(m_star / share)
        more = max(0, n_total - n_g)
        entry.update(
            {
                "rate_used": p_eff,
                "share": share,
                "rate_items_needed": m_star,
                "n_needed": max(n_total, n_g),
                "n_more": more,
                "half_width_now": half_width(p_eff, m, z),
                "half_width_planned": half_width(p_eff, share * (n_g + more), z),
                "note": "small group: n < 30" if n_g < 30 else None,
            }
        )
        groups[g] = entry
    return {
        "version": 1,
        "method": "normal approximation with the observed rate (Agresti-Coull when it is 0 or 1)",
        "metric": metric,
        "rate": rate,
        "group_by": by,
        "target_half_width": target,
        "z": z,
        "groups": groups,
        "total_more": int(sum(e["n_more"] or 0 for e in groups.values())),
    }


def read_plan(path: str | Path, task: Any = None) -> dict[str, Any]:
    """A plan file read through the input layer (:mod:`biaskit.inputs`): JSON (a BOM accepted, NaN refused), the
    declared keys of :data:`PLAN_FIELDS` and, per group, :data:`PLAN_GROUP_FIELDS` (an unknown key is E382; a
    wrong type, NaN or a negative count such as ``n_more: -5`` is E381, naming the file, key and value). With
    ``task`` (a TaskType), a ``miss_rate_<label>`` plan must name one of its labels (E251)."""
    p = Path(path)
    if not p.is_file():
        raise BiaskitError("E256", "plan file not found", value=str(p), fix="write one with `biaskit annotate plan ... --out plan.json`")
    plan = check_record(read_json(p, what="plan file", code="E256", fix=PLAN_FIX), PLAN_FIELDS, source=str(p), fix=PLAN_FIX)
    groups = {}
    for g, entry in plan["groups"].items():
        groups[g] = check_record(entry, PLAN_GROUP_FIELDS, source=str(p), where=f"groups[{g!r}]", fix=PLAN_FIX)
    plan["groups"] = groups
    rate = plan.get("rate") or ""
    if task is not None and rate.startswith("miss_rate_"):
        check_task([rate[len("miss_rate_") :]], task, what=f"the plan file {p} (its rate {rate!r})", column="rate")
    return plan


def quotas(plan: dict[str, Any]) -> dict[str, int]:
    """{group: items to draw} of a plan (read with :func:`read_plan`: every ``n_more`` is a count >= 0 or null)."""
    return {g: int(e.get("n_more") or 0) for g, e in plan["groups"].items()}


def boundaries(rows: list[dict[str, Any]], metric_label: str, metric_score: Any, ordinal: list[str]) -> list[float]:
    """The metric's decision boundaries on its score, estimated from ``rows``: for two neighbouring labels of the
    task's ordinal scale that occur (a label no row has is skipped) the boundary is midway between the highest
    score labelled with the lower one and the lowest score labelled with the higher one (VADER: about +-0.05)."""
    by: dict[str, list[float]] = {}
    for r in rows:
        v = metric_score(r)
        lab = r.get(metric_label)
        if v is not None and np.isfinite(v) and lab in ordinal:
            by.setdefault(lab, []).append(float(v))
    present = [lab for lab in ordinal if by.get(lab)]
    return [(max(by[lo]) + min(by[hi])) / 2 for lo, hi in zip(present, present[1:])]


def uncertainty(
    rows: list[dict[str, Any]], mc: MetricColumns | None, ordinal: list[str], label_columns: list[str], cuts: list[float] | None = None
) -> np.ndarray:
    """Higher = the metric is less sure. Two parts, compared in this order:

    1. disagreement: the number of distinct labels among ``label_columns`` (other metrics' labels on the same
       scale) that differ from the metric's label (the label column of ``mc``, the metric's columns);
    2. closeness of the metric's score (``mc``'s score, where it has one) to its nearest decision boundary
       (``cuts``, default :func:`boundaries` of ``rows``).
    Returned as ``disagreement - distance / (1 + max distance)`` so disagreement dominates.
    """
    metric_label = mc.label if mc else None
    metric_score = mc.score_of if mc and mc.score else None
    n = len(rows)
    dis = np.zeros(n)
    if metric_label:
        for j, r in enumerate(rows):
            mine = r.get(metric_label)
            dis[j] = len({r.get(c) for c in label_columns if r.get(c) is not None and r.get(c) != mine})
    dist: np.ndarray = np.zeros(n)
    if metric_score is not None and metric_label and len(ordinal) >= 2 and n:
        if cuts is None:
            cuts = boundaries(rows, metric_label, metric_score, ordinal)
        sc = np.array([np.nan if metric_score(r) is None else metric_score(r) for r in rows], dtype=float)
        if cuts:
            dist = np.min(np.abs(sc[:, None] - np.array(cuts)[None, :]), axis=1)
            fin = np.isfinite(dist)
            dist = np.where(fin, dist, dist[fin].max() if fin.any() else 0.0)
    span = float(dist.max()) if n else 0.0
    return dis - dist / (1.0 + span)
