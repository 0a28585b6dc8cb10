"""One label vocabulary check for every stage (scoring, aggregation, validation, the report).

The labels of a metric's label column come from the metric's own declaration
(:class:`~biaskit.evaluate.metrics.base.LabelOutput`, read through
:func:`biaskit.evaluate.metrics.catalog.vocabulary`); the labels of an annotation task from its
:class:`~biaskit.annotate.tasks.TaskType` (built from those declarations, or from a user's choice set). Nothing
else lists labels. :func:`check_values` is the one check: nulls are rows without a label and pass; any other
value must be one of the labels (a string), else the error names the table, the column, the values and the
valid labels.

A label written by a user (``--task stance:ano,ne,možná``) is normalised to Unicode NFC and lower case
(:func:`normalize`) and is valid when it is 1-40 characters of letters, marks and digits of any script, spaces,
``-`` and ``_`` (:func:`is_label`): Czech, Polish, Slovak, Hebrew and Arabic labels are labels.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

from biaskit.errors import BiaskitError

#: longest label (characters, after NFC)
MAX_LABEL = 40


def normalize(label: object) -> str:
    """A user's label as biaskit stores it: NFC, stripped, lower case (``Možná`` -> ``možná``)."""
    return unicodedata.normalize("NFC", str(label)).strip().lower()


def is_label(label: str) -> bool:
    """1-40 characters: letters, combining marks and digits of any script, spaces, ``-`` and ``_``; starting
    with a letter or digit; no control or format characters (so no right-to-left override)."""
    if not (0 < len(label) <= MAX_LABEL):
        return False
    if unicodedata.category(label[0])[0] not in "LN":
        return False
    return all(unicodedata.category(ch)[0] in "LNM" or ch in " _-" for ch in label)


def _shown(bad: Sequence[str]) -> str:
    return ", ".join(bad[:8]) + (f", ... ({len(bad) - 8} more)" if len(bad) > 8 else "")


def check_values(
    values: Iterable[object],
    labels: Sequence[str],
    *,
    what: str,
    column: str = "label",
    code: str = "E151",
    of: str = "the metric",
    fix: str | None = None,
) -> None:
    """Refuse values of ``column`` outside ``labels`` (error ``code``: E151 for a metric's column, E251 for a
    task's labels). Nulls (None, NaN) pass: they are rows without a label. A value that is the NFC form of a
    label, but not written in it, is named as such."""
    vals = [v for v in values if v is not None and not (isinstance(v, float) and v != v)]
    ok = set(labels)
    bad_counts = Counter(repr(v) for v in vals if not isinstance(v, str) or v not in ok)
    if not bad_counts:
        return
    bad = sorted(bad_counts)
    first = next(v for v in vals if not isinstance(v, str) or v not in ok)
    nfc = isinstance(first, str) and unicodedata.normalize("NFC", first) in ok
    raise BiaskitError(
        code,
        (
            f"{what}: {sum(bad_counts.values())} of {len(vals)} label(s) in {column!r} are outside {of}'s set"
            if of.endswith(" task")
            else f"{what}: {sum(bad_counts.values())} of {len(vals)} value(s) of {column!r} are not labels of {of}"
        )
        + (" (they are labels in another Unicode form)" if nfc else ""),
        value=_shown(bad),
        options=list(labels),
        fix=fix
        or (
            "normalise the labels to Unicode NFC"
            if nfc
            else f"map them to the declared labels (exact spelling, lower case); biaskit does not guess what {bad[0]} means"
        ),
    )


def check_task(values: Iterable[object], task, *, what: str, column: str = "label", fix: str | None = None) -> None:
    """E251 when ``values`` hold labels outside the task's labels (``task``: a TaskType)."""
    check_values(
        values,
        task.labels,
        what=what,
        column=column,
        code="E251",
        of=f"the {task.name} task",
        fix=fix or f"use the {task.name} task's labels, or pass the right --task",
    )
