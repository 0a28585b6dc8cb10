"""A released train/validation/test split read from a column of the labelled table (``--split-column``).

Datasets such as Sheng et al.'s regard data ship their own split; comparing with the paper needs exactly that
split, not a new stratified one. The column's values are ``train``, ``validation`` and ``test`` (case and
surrounding spaces ignored); every labelled row that training uses must carry one of them, and each part needs
at least one row. ``validation`` is the dev part of the protocol (early stopping and the saved run).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from biaskit.errors import BiaskitError

#: the split column's values, in the order of the protocol's (train, dev, test)
PARTS = ("train", "validation", "test")


def _norm(v: Any) -> str | None:
    return v.strip().lower() if isinstance(v, str) else None


def check_split_values(values: Sequence[Any], column: str) -> list[str]:
    """The split column's value of every used row, normalised; any value other than train/validation/test
    (a null included) is E172 naming the values found."""
    parts = [_norm(v) for v in values]
    bad = Counter(repr(v) for v, p in zip(values, parts) if p not in PARTS)
    if bad:
        found = Counter("None" if p is None else repr(p) for p in parts)
        raise BiaskitError(
            "E172",
            f"the split column {column!r} holds values other than train, validation, test: "
            + ", ".join(f"{k} ({n} rows)" for k, n in sorted(bad.items())),
            value={"found": dict(sorted(found.items()))},
            options=list(PARTS),
            fix=f"rename the values of {column!r} to train/validation/test (e.g. dev -> validation) and give every "
            "labelled row one, or leave out --split-column for a stratified --split",
        )
    return [str(p) for p in parts]


def missing_split_column(column: str, columns: Sequence[str]) -> BiaskitError:
    """E171 for a ``--split-column`` the table does not have, naming the columns it has."""
    return BiaskitError(
        "E171",
        f"the labelled table has no split column {column!r}",
        value=sorted(columns)[:30],
        fix="pass --split-column with the column that holds train/validation/test, or leave it out for a stratified --split",
    )


def predefined_split(parts: Sequence[str], column: str) -> tuple[list[int], list[int], list[int]]:
    """Row indices (train, dev, test) from the parts; a part with no row is E172."""
    out = tuple([i for i, p in enumerate(parts) if p == name] for name in PARTS)
    empty = [name for name, ix in zip(PARTS, out) if not ix]
    if empty:
        raise BiaskitError(
            "E172",
            f"the split column {column!r} has no labelled row in: {', '.join(empty)}",
            value=dict(Counter(parts)),
            options=list(PARTS),
            fix="every part needs at least one labelled row (check --drop-label and null labels), or leave out --split-column",
        )
    return out[0], out[1], out[2]
