"""Model cost of a scoring run: tokens in and out, per row and in total, for metrics that call a model.

A metric that spends tokens writes ``<name>_tokens_in`` / ``<name>_tokens_out`` columns (the judge does) and
may offer ``estimate_cost(texts)`` for ``biaskit score --dry-run`` (an estimate made without loading a model).
"""

from __future__ import annotations

from typing import Any


def token_cost(table: Any, metrics: list[Any]) -> dict[str, dict[str, Any]]:
    """``{metric: {rows, tokens_in, tokens_out, tokens_in_per_row, tokens_out_per_row, rows_without_count}}``
    from the token columns of ``table`` (a pyarrow Table); metrics without such columns are left out."""
    out: dict[str, dict[str, Any]] = {}
    for m in metrics:
        cin, cout = f"{m.name}_tokens_in", f"{m.name}_tokens_out"
        if cin not in table.column_names or cout not in table.column_names:
            continue
        tin = [x for x in table.column(cin).to_pylist() if x is not None]
        tout = [x for x in table.column(cout).to_pylist() if x is not None]
        out[m.name] = {
            "rows": table.num_rows,
            "tokens_in": int(sum(tin)),
            "tokens_out": int(sum(tout)),
            "tokens_in_per_row": (sum(tin) / len(tin)) if tin else None,
            "tokens_out_per_row": (sum(tout) / len(tout)) if tout else None,
            "rows_without_count": table.num_rows - len(tin),
        }
    return out


def estimate(metrics: list[Any], texts: list[Any]) -> dict[str, dict[str, Any]]:
    """``{metric: estimate}`` of each metric that can estimate its cost (no model is loaded)."""
    return {m.name: m.estimate_cost(texts) for m in metrics if hasattr(m, "estimate_cost")}
