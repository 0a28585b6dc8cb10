"""Response-cache entries (:mod:`biaskit.evaluate.cache`, ``cache.sqlite``): what a stored value must be for biaskit
to use it instead of computing it again.

* Every stored value is read through the one JSON reader (:func:`read_entry`: :func:`biaskit.jsonread.loads_json`,
  its depth and size limits, NaN and Infinity refused).
* A **metric's entry** (:mod:`biaskit.evaluate.metrics.cached`) is a JSON object of output columns: string keys,
  values that are JSON scalars or lists of them (:func:`columns_entry`).
* A **model call's entry** (:mod:`biaskit.evaluate.runners.cache`) is a non-empty list of row objects, each keeping
  the types of the generations table (:data:`biaskit.schema.GENERATIONS`) for the columns it holds (a string where
  the table has a string, a whole number for an ``int64``, a number for a ``double``, true/false for a ``bool``),
  and no ``error``: a failed call is never stored (:func:`rows_entry`).

An entry that breaks its schema is :data:`DAMAGED`: the cache treats it as a miss, deletes it, counts it
(``cache.damaged`` in the manifest) and warns with E311; the caller computes and stores it again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pyarrow as pa

from biaskit.errors import BiaskitError
from biaskit.jsonread import loads_json
from biaskit.schema import GENERATIONS

#: what :func:`read_entry` returns for a stored value that is not a JSON document biaskit accepts
DAMAGED = object()


def read_entry(text: Any, *, source: str) -> Any:
    """A stored value read back through the one JSON reader; :data:`DAMAGED` when it is not a JSON document biaskit
    accepts (not text, not JSON, NaN or Infinity, too deep, too large)."""
    if not isinstance(text, str):
        return DAMAGED
    try:
        return loads_json(text, source=source)
    except BiaskitError:
        return DAMAGED


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, bool, int, float))


def _typed(v: Any, want: tuple[type, ...] | None) -> bool:
    """``v`` (not null) holds one of the JSON types ``want`` (None: any scalar or list of scalars)."""
    if want is None:
        return _scalar(v) or (isinstance(v, list) and all(_scalar(x) for x in v))
    if isinstance(v, bool) and bool not in want:
        return False
    return isinstance(v, want)


def _kind_of(t: pa.DataType) -> tuple[type, ...] | None:
    """The JSON types a value of Arrow type ``t`` is stored as (None: not checked)."""
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return (str,)
    if pa.types.is_integer(t):
        return (int,)
    if pa.types.is_floating(t):
        return (int, float)
    if pa.types.is_boolean(t):
        return (bool,)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return (list,)
    return None


def columns_entry(value: Any, kinds: Mapping[str, tuple[type, ...] | None] | None = None) -> bool:
    """The shape of a metric's entry: a JSON object of output columns (scalars, or lists of scalars); with ``kinds``
    (:func:`columns_shape`) each column it names holds its type or null, and no ``*_error`` is set (a failed row is
    never stored)."""
    if not isinstance(value, dict) or not all(_typed(v, None) for v in value.values()):
        return False
    if kinds is None:
        return True
    if any(v is not None and k.endswith("_error") for k, v in value.items()):
        return False
    return all(value.get(k) is None or _typed(value[k], want) for k, want in kinds.items())


def columns_shape(columns: Mapping[str, Any] | Iterable[str]) -> Callable[[Any], bool]:
    """The shape check of one metric's entries: :func:`columns_entry` with the JSON types of its output columns
    (``columns``: the metric's :meth:`~biaskit.evaluate.metrics.base.Metric.output_columns`, name -> Arrow type; a
    column without an Arrow type is checked as any scalar)."""
    pairs = columns.items() if isinstance(columns, Mapping) else ((c, None) for c in columns)
    kinds = {str(c): (_kind_of(t) if isinstance(t, pa.DataType) else None) for c, t in pairs}
    return lambda value: columns_entry(value, kinds)


#: column -> the JSON types a stored row may hold for it (the generations table's types)
ROW_TYPES = {c.name: k for c in GENERATIONS.columns if (k := _kind_of(c.type)) is not None}


def row_ok(row: Any) -> bool:
    """One stored row: an object whose known columns hold their table type (or null), without an error."""
    if not isinstance(row, dict) or row.get("error") is not None:
        return False
    return all(v is None or k not in ROW_TYPES or _typed(v, ROW_TYPES[k]) for k, v in row.items())


def rows_entry(value: Any) -> bool:
    """The shape of a model call's entry: a non-empty list of rows that each pass :func:`row_ok`."""
    return isinstance(value, list) and bool(value) and all(row_ok(r) for r in value)
