"""Shared helpers of the statistics modules: table conversion, column checks, null handling."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Any

from biaskit.arrow import to_arrow
from biaskit.errors import BiaskitError, check_choice

#: how a null value of a grouping column is shown in result tables (rows are never dropped)
NULL_KEY = "(null)"


def to_frame(table: Any):
    """Any table biaskit accepts (pyarrow, datasets, pandas, list of dicts) -> a pandas DataFrame copy."""
    import pandas as pd

    if isinstance(table, pd.DataFrame):
        return table.copy()

    try:
        t = to_arrow(table)
    except TypeError as exc:
        raise BiaskitError(
            "E080",
            "cannot read this object as a table",
            value=type(table).__name__,
            fix="pass a pyarrow.Table, datasets.Dataset, pandas.DataFrame or a list of dicts",
        ) from exc
    return t.to_pandas()


def as_list(cols: str | Iterable[str] | None) -> list[str]:
    if cols is None:
        return []
    if isinstance(cols, str):
        return [c.strip() for c in cols.split(",") if c.strip()]
    return list(cols)


def require_columns(df, cols: Sequence[str], what: str, hint: str = "") -> None:
    """Raise E080 naming the missing columns, the columns present and the fix."""
    missing = [c for c in cols if c not in df.columns]
    if missing:
        have = sorted(map(str, df.columns))
        matches = {c: difflib.get_close_matches(str(c), have, n=1, cutoff=0.6) for c in missing}
        close = {c: m[0] for c, m in matches.items() if m}
        # a near miss is a typo (--group grup): say what was meant before suggesting to score the table
        mean = "; ".join(f"did you mean {m!r} for {c!r}?" for c, m in close.items())
        raise BiaskitError(
            "E080",
            f"{what} needs column(s) {', '.join(repr(c) for c in missing)} which the table lacks",
            value=have,
            fix=(mean + " " if mean else "")
            + (hint or "score the table with the metric that writes these columns (see docs/CONTRACTS.md) or rename columns"),
        )


def error_column(df, column: str) -> str | None:
    """The ``<metric>_error`` column belonging to a metric column (``vader_label`` -> ``vader_error``)."""
    prefix = column.split("_", 1)[0]
    cand = f"{prefix}_error"
    if cand in df.columns and cand != column:
        return cand
    return None


def fill_keys(df, by: Sequence[str]):
    """Return df with null values of the grouping columns replaced by :data:`NULL_KEY` (as strings)."""
    df = df.copy()
    for c in by:
        col = df[c]
        df[c] = col.astype(object).where(col.notna(), NULL_KEY)
        df[c] = df[c].map(lambda v: v if isinstance(v, str) else str(v))
    return df


def groups_of(df, by: Sequence[str]):
    """(key tuple, rows) of every group of the ``by`` columns in sorted order (null keys kept as a group), or
    the one group ``((), df)`` when ``by`` is empty."""
    for key, g in df.groupby(by, sort=True, dropna=False) if by else [((), df)]:
        yield (key if isinstance(key, tuple) else (key,)), g


def column_counts(g, miss, err_col: str | None, *, valid: str = "n_valid") -> dict[str, int]:
    """``n``, ``valid`` (``n_valid`` unless named otherwise), ``n_null`` and ``n_error`` of one column in one
    group (``miss``: its null rows; ``err_col``: the metric's error column, None when there is none)."""
    n = len(g)
    n_null = int(miss.sum())
    return {"n": n, valid: n - n_null, "n_null": n_null, "n_error": int(g[err_col].notna().sum()) if err_col else 0}


def lacking_columns(df, problem: str, fix: str) -> BiaskitError:
    """E080 for a table with none of the columns an analysis reads: ``problem``, the table's columns and the fix."""
    return BiaskitError("E080", problem, value=sorted(map(str, df.columns)), fix=fix)


def is_missing(series):
    """True where a value is null (None/NaN) or an empty string."""
    s = series
    miss = s.isna()
    if s.dtype == object:
        miss = miss | s.map(lambda v: isinstance(v, str) and v.strip() == "")
    return miss


def check_alpha(alpha: float) -> float:
    if not (0.0 < float(alpha) < 1.0):
        raise BiaskitError("E080", "significance level must be between 0 and 1", value=alpha, fix="use e.g. alpha=0.05")
    return float(alpha)


def check_ci(ci: float) -> float:
    if not (0.0 < float(ci) < 1.0):
        raise BiaskitError("E080", "confidence level must be between 0 and 1", value=ci, fix="use e.g. ci=0.95")
    return float(ci)


def require_groups(df, group: str, groups: Sequence[str]) -> None:
    """Raise E080 when one of ``groups`` is not a value of column ``group``."""
    present = set(df[group])
    for g in groups:
        check_choice(
            "E080",
            f"group {g!r} is not in column {group!r}",
            g,
            present,
            fix="name the group exactly as in the table",
            options=sorted(map(str, present)),
        )
