"""Model cost of a scoring run: tokens in and out, per row and in total, for metrics that call a model.

A metric that spends tokens writes ``<name>_tokens_in`` / ``<name>_tokens_out`` columns (the judge does) and
may offer ``estimate_cost(texts)`` for ``biaskit score --dry-run`` (an estimate made without loading a model).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def token_columns(m: Any) -> tuple[str, str]:
    """The names of metric ``m``'s token columns (in, out)."""
    return f"{m.name}_tokens_in", f"{m.name}_tokens_out"


def _counted(values: Iterable[Any]) -> list[int]:
    return [x for x in values if x is not None]


def count_cached_tokens(cache: Any, m: Any, cols: Mapping[str, Sequence[Any]], rows: Iterable[int]) -> None:
    """Add the tokens of ``rows`` (indices into ``cols``, metric ``m``'s output columns) that ``cache`` answered
    to ``cache.hit_tokens``; a metric without token columns adds nothing."""
    cin, cout = token_columns(m)
    if cin not in cols or cout not in cols:
        return
    rows = list(rows)
    cache.count_hit_tokens(m.name, sum(_counted(cols[cin][i] for i in rows)), sum(_counted(cols[cout][i] for i in rows)))


def token_cost(table: Any, metrics: list[Any], cache: Any = None) -> dict[str, dict[str, Any]]:
    """``{metric: {rows, tokens_in, tokens_out, tokens_in_per_row, tokens_out_per_row, rows_without_count}}``
    from the token columns of ``table`` (a pyarrow Table); metrics without such columns are left out.

    With ``cache`` (the :class:`~biaskit.evaluate.cache.ResponseCache` that scored ``table``, in this run only)
    ``tokens_in`` / ``tokens_out`` are what the run spent (the rows the model answered) and ``cached_tokens_in``
    / ``cached_tokens_out`` what the rows answered from the cache cost when first asked; the per-row figures
    are over all the table's rows, cached or not (what a row costs)."""
    out: dict[str, dict[str, Any]] = {}
    for m in metrics:
        cin, cout = token_columns(m)
        if cin not in table.column_names or cout not in table.column_names:
            continue
        tin = _counted(table.column(cin).to_pylist())
        tout = _counted(table.column(cout).to_pylist())
        hit = cache.hit_tokens.get(m.name, {}) if cache is not None else {}
        out[m.name] = {
            "rows": table.num_rows,
            "tokens_in": int(sum(tin)) - hit.get("tokens_in", 0),
            "tokens_out": int(sum(tout)) - hit.get("tokens_out", 0),
            "tokens_in_per_row": (sum(tin) / len(tin)) if tin else None,
            "tokens_out_per_row": (sum(tout) / len(tout)) if tout else None,
            "rows_without_count": table.num_rows - len(tin),
        }
        if cache is not None:
            out[m.name].update({"cached_tokens_in": hit.get("tokens_in", 0), "cached_tokens_out": hit.get("tokens_out", 0)})
    return out


def estimate(metrics: list[Any], texts: list[Any]) -> dict[str, dict[str, Any]]:
    """``{metric: estimate}`` of each metric that can estimate its cost (no model is loaded)."""
    return {m.name: m.estimate_cost(texts) for m in metrics if hasattr(m, "estimate_cost")}
