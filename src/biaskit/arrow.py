"""Turn any table-like value into a pyarrow Table. Below :mod:`biaskit.io` and :mod:`biaskit.schema`,
which both use it; imports nothing of biaskit."""

from __future__ import annotations

from typing import Any

import pyarrow as pa


def to_arrow(table: Any) -> pa.Table:
    """Accept a pyarrow Table, datasets.Dataset, pandas DataFrame, list of dicts or dict of lists."""
    if isinstance(table, pa.Table):
        return table
    if hasattr(table, "data") and hasattr(table, "features"):  # datasets.Dataset
        t = table.data
        t = getattr(t, "table", t)
        if getattr(table, "_indices", None) is not None:
            t = table.flatten_indices().data
            t = getattr(t, "table", t)
        return t
    if hasattr(table, "to_dict") and hasattr(table, "columns"):  # pandas
        return pa.Table.from_pandas(table, preserve_index=False)
    if isinstance(table, dict):
        return pa.table(table)
    if isinstance(table, list):
        return pa.Table.from_pylist(table)
    raise TypeError(f"cannot turn {type(table).__name__} into an Arrow table")
