"""One validation path for annotations from any platform (Label Studio export or a result file).

Raw records (one per annotation) are checked and turned into the annotations table. Problems are never
silently fixed: each dropped record is counted by reason and kept, with its reason, in a ``rejected``
table (written next to the annotations as ``<out>.rejected.jsonl`` by the CLI), so nothing is lost.

Reasons: ``skipped`` (the annotator cancelled/skipped the task), ``empty_result`` (no label),
``several_labels`` (more than one choice in a single-choice task), ``label_outside_config``,
``unknown_sample`` (not an item of this round), ``duplicate_annotation`` (a second annotation by the same
annotator on the same item: the latest one is kept, earlier ones are rejected).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from biaskit.annotate.tasks import TaskType, get_task_type
from biaskit.arrow import to_arrow
from biaskit.errors import BiaskitError
from biaskit.schema import ANNOTATIONS, validate

EXPLAIN = {
    "skipped": "the annotator skipped the task",
    "empty_result": "no label or no annotator",
    "several_labels": "more than one choice in a single-choice task",
    "label_outside_config": "label not in the task's label set",
    "unknown_sample": "the item is not in this round's samples table",
    "duplicate_annotation": "the annotator labelled the item again; the latest label is kept",
}
REASONS = ("skipped", "empty_result", "several_labels", "label_outside_config", "unknown_sample", "duplicate_annotation")


@dataclass
class PullReport:
    received: int = 0
    kept: int = 0
    dropped: Counter = field(default_factory=Counter)
    items: int = 0
    annotators: list[str] = field(default_factory=list)
    items_without_annotations: int = 0
    examples: dict = field(default_factory=dict)  # reason -> up to 3 (sample_id, annotator, label)

    def details(self) -> list[str]:
        """One line per drop reason with what it means and examples (for the CLI)."""
        out = []
        for reason, n in sorted(self.dropped.items()):
            ex = "; ".join(f"{s} by {a} ({lab})" for s, a, lab in self.examples.get(reason, []))
            out.append(f"  dropped {n} x {reason}: {EXPLAIN[reason]} (e.g. {ex})")
        return out

    def summary(self) -> str:
        drops = ", ".join(f"{k} {v}" for k, v in sorted(self.dropped.items())) or "none"
        return f"{self.kept} annotations kept of {self.received} received ({self.items} items, {len(self.annotators)} annotators); dropped: {drops}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "received": self.received,
            "kept": self.kept,
            "dropped": dict(self.dropped),
            "items": self.items,
            "annotators": self.annotators,
            "items_without_annotations": self.items_without_annotations,
        }


def _norm_label(v: Any) -> list[str]:
    if v is None:
        return []
    if isinstance(v, (list, tuple)):
        return [str(x).strip().lower() for x in v if x is not None and str(x).strip()]
    s = str(v).strip().lower()
    return [s] if s else []


def validate_records(
    records: Iterable[Mapping[str, Any]], *, task: str | TaskType, round: str, platform: str, sample_ids: Iterable[str] | None = None
) -> tuple[pa.Table, pa.Table, PullReport]:
    """Check raw annotation records and build the annotations table.

    A record has ``sample_id``, ``annotator``, ``label`` (a string or a list of choices) and optionally
    ``lead_time``, ``created_at``, ``updated_at``, ``cancelled``, ``annotation_id``.
    Returns (annotations, rejected, report).
    """
    tt = get_task_type(task)
    spec = task if isinstance(task, str) else tt.name
    known = set(sample_ids) if sample_ids is not None else None
    rep = PullReport()
    rejected: list[dict[str, Any]] = []

    def reject(rec: Mapping[str, Any], reason: str) -> None:
        rejected.append(_rejected_row(rep, rec, reason, round=round, platform=platform))

    good: list[dict[str, Any]] = []
    for rec in records:
        rep.received += 1
        labs = _norm_label(rec.get("label"))
        reason = _drop_reason(rec, labs, tt, known)
        if reason:
            reject(rec, reason)
        else:
            good.append({**rec, "label": labs[0]})
    kept = _latest_per_item_and_annotator(good, reject)
    rows = [
        _annotation_row(r, round=round, spec=spec, platform=platform)
        for r in sorted(kept.values(), key=lambda r: (r["sample_id"], str(r["annotator"])))
    ]
    rep.kept = len(rows)
    rep.items = len({r["sample_id"] for r in rows})
    rep.annotators = sorted({r["annotator"] for r in rows})
    if known is not None:
        rep.items_without_annotations = len(known - {r["sample_id"] for r in rows})
    return _annotations_table(rows), _rejected_table(rejected), rep


def _drop_reason(rec: Mapping[str, Any], labs: list[str], tt: TaskType, known: set[str] | None) -> str | None:
    """Why a record is rejected (the first reason that applies, see the module docstring), None to keep it."""
    if rec.get("cancelled"):
        return "skipped"
    if not labs:
        return "empty_result"
    if len(labs) > 1:
        return "several_labels"
    if known is not None and rec.get("sample_id") not in known:
        return "unknown_sample"
    if labs[0] not in tt.labels:
        return "label_outside_config"
    if not rec.get("annotator"):
        return "empty_result"
    return None


def _rejected_row(rep: PullReport, rec: Mapping[str, Any], reason: str, *, round: str, platform: str) -> dict[str, Any]:
    """Count a rejected record on the report (with up to 3 examples per reason) and return its rejected row."""
    rep.dropped[reason] += 1
    exs = rep.examples.setdefault(reason, [])
    if len(exs) < 3:
        exs.append((rec.get("sample_id"), rec.get("annotator"), "|".join(_norm_label(rec.get("label"))) or "-"))
    return {
        "sample_id": rec.get("sample_id"),
        "annotator": rec.get("annotator"),
        "label": "|".join(_norm_label(rec.get("label"))) or None,
        "reason": reason,
        "annotation_id": None if rec.get("annotation_id") is None else str(rec.get("annotation_id")),
        "created_at": _s(rec.get("created_at")),
        "round": round,
        "platform": platform,
    }


def _latest_per_item_and_annotator(
    good: list[dict[str, Any]], reject: Callable[[Mapping[str, Any], str], None]
) -> dict[tuple[str, str], dict[str, Any]]:
    """The latest record (updated_at, created_at, annotation id) per item x annotator; earlier ones are rejected
    as ``duplicate_annotation``."""
    good.sort(
        key=lambda r: (
            str(r.get("sample_id")),
            str(r.get("annotator")),
            _s(r.get("updated_at")) or _s(r.get("created_at")) or "",
            _s(r.get("created_at")) or "",
            str(r.get("annotation_id") or ""),
        )
    )
    kept: dict[tuple[str, str], dict[str, Any]] = {}
    for r in good:
        key = (r["sample_id"], str(r["annotator"]))
        if key in kept:
            reject(kept[key], "duplicate_annotation")
        kept[key] = r
    return kept


def _annotation_row(r: Mapping[str, Any], *, round: str, spec: str, platform: str) -> dict[str, Any]:
    return {
        "sample_id": r["sample_id"],
        "round": round,
        "annotator": str(r["annotator"]),
        "label": r["label"],
        "lead_time": None if r.get("lead_time") is None else float(r["lead_time"]),
        "created_at": _s(r.get("created_at")),
        "task_type": spec,
        "platform": platform,
        "annotation_id": None if r.get("annotation_id") is None else str(r.get("annotation_id")),
    }


def _s(v: Any) -> str | None:
    if v is None:
        return None
    if hasattr(v, "isoformat"):
        return v.isoformat().replace("+00:00", "Z")
    return str(v)


def _annotations_table(rows: list[dict[str, Any]]) -> pa.Table:
    """The annotations stage's columns (:data:`biaskit.schema.ANNOTATIONS`) plus the platform's ``annotation_id``."""
    schema = ANNOTATIONS.arrow_schema().append(pa.field("annotation_id", pa.string()))
    return pa.Table.from_pylist(rows, schema=schema)


def _rejected_table(rows: list[dict[str, Any]]) -> pa.Table:
    schema = pa.schema([(c, pa.string()) for c in ("sample_id", "annotator", "label", "reason", "annotation_id", "created_at", "round", "platform")])
    return pa.Table.from_pylist(rows, schema=schema)


def samples_info(samples: Any) -> tuple[str, str, list[str]]:
    """(round, task spec, sample ids) of a samples table with a single round and task type."""
    s = to_arrow(samples)
    validate(s, "samples")
    rounds = sorted({x for x in s.column("round").to_pylist() if x})
    tasks = sorted({x for x in s.column("task_type").to_pylist() if x})
    if len(rounds) != 1 or len(tasks) != 1:
        raise BiaskitError(
            "E092",
            "a samples table must hold exactly one round and one task type",
            value={"rounds": rounds, "task_types": tasks},
            fix="sample each round into its own file (biaskit annotate sample --round NAME)",
        )
    return rounds[0], tasks[0], s.column("sample_id").to_pylist()
