"""Human labels per item, shared by annotation, statistics and training: the annotations table
(:func:`read_annotations`), items x annotators (:class:`LabelTable`), the majority vote with its tie policy
(:func:`majority_vote`) and a label model's labels table in the majority vote's shape (:func:`labels_as_majority`).

It sits below ``annotate`` and ``evaluate`` (docs/architecture.md): ``annotate`` validates metrics and
measures agreement with it, ``evaluate.stats.ppiround`` joins a round's human labels to a scored table and
``train`` builds its training rows from it. A task type (``biaskit.annotate.tasks.TaskType``) is passed in
already resolved; this module only asks it to check a tie label (:class:`LabelChecker`).
"""

from __future__ import annotations

import random as _random
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from biaskit.arrow import to_arrow
from biaskit.errors import BiaskitError

TIE_POLICIES = ("drop", "random", "label:<name>")


class LabelChecker(Protocol):
    """What the majority vote needs of a task type: its labels, and a check that refuses a label outside them."""

    @property
    def labels(self) -> Sequence[str]: ...

    def check_label(self, label: str) -> str: ...


#: the table of :func:`majority_vote` (and of :func:`labels_as_majority`): one row per item
MAJORITY_SCHEMA = pa.schema(
    [
        ("sample_id", pa.string()),
        ("label", pa.string()),
        ("n_votes", pa.int64()),
        ("n_top", pa.int64()),
        ("share", pa.float64()),
        ("tie", pa.bool_()),
        ("kept", pa.bool_()),
        ("reason", pa.string()),
    ]
)


def read_annotations(annotations: Any) -> pa.Table:
    """An annotations table with the columns every crowd figure needs: sample_id, annotator, label (E001 names the first missing)."""
    t = to_arrow(annotations)
    for c in ("sample_id", "annotator", "label"):
        if c not in t.column_names:
            raise BiaskitError(
                "E001", f"the annotations table lacks column {c!r}", value=t.column_names, fix="give an annotations table (biaskit annotate pull)"
            )
    return t


@dataclass
class LabelTable:
    """Items x annotators, ``None`` where an annotator did not label an item."""

    items: list[str]
    annotators: list[str]
    labels: list[list[str | None]]

    @classmethod
    def from_annotations(cls, annotations: Any, *, exclude_items: Iterable[str] = ()) -> LabelTable:
        t = read_annotations(annotations)
        ex = set(exclude_items)
        by: dict[str, dict[str, str]] = defaultdict(dict)
        for sid, ann, lab in zip(*(t.column(c).to_pylist() for c in ("sample_id", "annotator", "label"))):
            if sid in ex or lab is None:
                continue
            if ann in by[sid] and by[sid][ann] != lab:
                raise BiaskitError(
                    "E091",
                    "two different labels by one annotator on one item",
                    value=(sid, ann),
                    fix="pull the annotations with `biaskit annotate pull`, which keeps the latest one",
                )
            by[sid][ann] = lab
        items = sorted(by)
        anns = sorted({a for d in by.values() for a in d})
        return cls(items, anns, [[by[i].get(a) for a in anns] for i in items])

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[str | None]], annotators: Sequence[str] | None = None) -> LabelTable:
        anns = list(annotators) if annotators else [f"a{j + 1}" for j in range(len(rows[0]) if rows else 0)]
        return cls([f"i{i}" for i in range(len(rows))], anns, [list(r) for r in rows])

    def categories(self, task: LabelChecker | None = None) -> list[str]:
        seen = sorted({lab for row in self.labels for lab in row if lab is not None})
        if task is None:
            return seen
        return [*task.labels, *[s for s in seen if s not in task.labels]]

    def counts(self, categories: Sequence[str]) -> np.ndarray:
        idx = {c: j for j, c in enumerate(categories)}
        m = np.zeros((len(self.items), len(categories)), dtype=float)
        for i, row in enumerate(self.labels):
            for lab in row:
                if lab is not None and lab in idx:
                    m[i, idx[lab]] += 1
        return m


def top_labels(labels: Iterable[str]) -> tuple[list[str], int]:
    c = Counter(labels)
    if not c:
        return [], 0
    best = max(c.values())
    return sorted(k for k, v in c.items() if v == best), best


@dataclass(frozen=True)
class VoteRule:
    """How an item's majority label is taken from its votes.

    ``tie_policy``: ``drop`` (no label; the item is left out), ``random`` (a choice among the tied labels by a
    generator seeded ``seed``) or ``label:<name>`` (ties get that label, e.g. ``label:neutral``). An item whose
    majority is in ``exclude_labels`` (e.g. ``other``, as Sheng et al. did) or with fewer than ``min_votes`` labels
    is not kept."""

    tie_policy: str = "drop"
    exclude_labels: Sequence[str] = ()
    min_votes: int = 1
    seed: int = 0


@dataclass(frozen=True)
class Tally:
    """How an item's vote went: ``n_votes`` labels, ``n_top`` of them for the top label (its ``share``), and whether
    several labels tied at the top (None where a labels table does not say)."""

    n_votes: int | None
    n_top: int | None
    share: float | None
    tie: bool


def majority_vote(annotations: Any, *, task: LabelChecker | None = None, rule: VoteRule = VoteRule()) -> pa.Table:
    """Majority label per item, taken by ``rule`` (:class:`VoteRule`).

    Items whose majority is excluded or with too few labels get ``kept = false`` and a ``reason``. Returns
    sample_id, label, n_votes, n_top, share, tie, kept, reason.
    """
    tie_policy, exclude_labels, min_votes = rule.tie_policy, rule.exclude_labels, rule.min_votes
    if not (tie_policy in ("drop", "random") or tie_policy.startswith("label:")):
        raise BiaskitError(
            "E091",
            "unknown tie policy",
            value=tie_policy,
            options=TIE_POLICIES,
            fix="use --tie-policy drop, random or label:<name> (e.g. label:neutral)",
        )
    if tie_policy.startswith("label:") and task is not None:
        task.check_label(tie_policy.split(":", 1)[1])
    lt = LabelTable.from_annotations(annotations)
    rnd = _random.Random(rule.seed)
    rows = []
    for item, row in zip(lt.items, lt.labels):
        labs = [x for x in row if x is not None]
        tops, best = top_labels(labs)
        tie = len(tops) > 1
        label, reason = (tops[0] if tops else None), None
        if tie:
            if tie_policy == "drop":
                label, reason = None, "tie"
            elif tie_policy == "random":
                label = rnd.choice(tops)
            else:
                label = tie_policy.split(":", 1)[1]
        if len(labs) < min_votes:
            reason = f"fewer than {min_votes} votes"
        elif label is not None and label in exclude_labels:
            reason = f"majority is {label!r} (excluded)"
        tally = Tally(n_votes=len(labs), n_top=best, share=best / len(labs) if labs else None, tie=tie)
        rows.append(majority_row(item, label, tally, reason))
    return pa.Table.from_pylist(rows, schema=MAJORITY_SCHEMA)


def read_labels(labels: Any) -> pa.Table:
    """Check a labels table (``annotate aggregate``'s output) and return it (E254 when it is not one)."""
    t = to_arrow(labels)
    missing = [c for c in ("sample_id", "label") if c not in t.column_names]
    if missing:
        raise BiaskitError(
            "E254",
            f"the labels table lacks column(s) {', '.join(missing)}",
            value=t.column_names,
            fix="pass the table written by `biaskit annotate aggregate --out labels.parquet`",
        )
    ids = t.column("sample_id").to_pylist()
    if len(set(ids)) != len(ids) or any(i is None for i in ids):
        raise BiaskitError(
            "E254",
            "the labels table has a null or repeated sample_id",
            value=[i for i, c in Counter(ids).items() if c > 1][:3],
            fix="pass the table written by `biaskit annotate aggregate` (one row per item)",
        )
    return t


def majority_row(sample_id: str, label: str | None, tally: Tally, reason: str | None) -> dict[str, Any]:
    """One row of :data:`MAJORITY_SCHEMA`: an item is kept when nothing gives a ``reason`` to leave it out."""
    return {
        "sample_id": sample_id,
        "label": label,
        "n_votes": tally.n_votes,
        "n_top": tally.n_top,
        "share": tally.share,
        "tie": tally.tie,
        "kept": reason is None,
        "reason": reason,
    }


def labels_as_majority(labels: Any, *, exclude_labels=(), gold: set[str] | None = None) -> pa.Table:
    """A labels table in :func:`majority_vote`'s shape (kept/reason), for validate/train."""
    t = read_labels(labels)
    rows = []
    n_ann = t.column("n_annotations").to_pylist() if "n_annotations" in t.column_names else [None] * t.num_rows
    conf = t.column("confidence").to_pylist() if "confidence" in t.column_names else [None] * t.num_rows
    isg = t.column("is_gold").to_pylist() if "is_gold" in t.column_names else [False] * t.num_rows
    for sid, lab, n, c, g in zip(t.column("sample_id").to_pylist(), t.column("label").to_pylist(), n_ann, conf, isg):
        reason = (
            "gold item"
            if (g or (gold and sid in gold))
            else "no label"
            if lab is None
            else f"label is {lab!r} (excluded)"
            if lab in exclude_labels
            else None
        )
        rows.append(majority_row(sid, lab, Tally(n_votes=n, n_top=None, share=c, tie=False), reason))
    return pa.Table.from_pylist(rows, schema=MAJORITY_SCHEMA)
