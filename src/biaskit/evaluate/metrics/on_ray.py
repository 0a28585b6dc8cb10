"""Metric scoring on the Ray engine: the metric's work handed to :class:`biaskit.pool.RayCluster`.

Each actor builds and sets up the metric once and returns its typed output columns; the driver merges them
back in row order.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from biaskit.errors import BiaskitError
from biaskit.pool import RayCluster


class MetricActor:
    """A Ray actor holding one metric (set up once); scores batches and returns its typed columns."""

    def __init__(self, factory: Any, spec: str, text_column: str, params: dict[str, Any] | None) -> None:
        self.metric = factory(spec, text_column, params)
        self.metric.setup()
        self.sent_describe = False

    def __call__(self, batch):
        m = self.metric
        data = {c: batch.column(c).to_pylist() for c in m.input_columns if c in batch.column_names}
        res = m.score(data)
        cols = m.output_columns()
        arrays = {"__row": batch.column("__row")}
        for c, typ in cols.items():
            arrays[c] = pa.array(res[c], type=typ)
        desc = [None] * batch.num_rows
        if batch.num_rows and not self.sent_describe:
            desc[0] = json.dumps(m.describe(), default=str)
            self.sent_describe = True
        arrays["__describe"] = pa.array(desc, pa.string())
        return pa.table(arrays)


def score_metric_on_ray(cluster: RayCluster, metric: Any, table, params: dict[str, Any] | None = None, progress: Any = None, *, factory: Any):
    """Score ``table`` (pyarrow) with ``metric`` (not set up here) on the actor pool; each actor builds its
    own copy with ``factory(name, text_column, params)`` (:func:`biaskit.evaluate.metrics.base.make_metric`).

    Returns ``{output column: Arrow array}`` in the table's row order; ``metric.info`` gets the facts the
    actors found at set-up (resolved model, lexicon size, ...).
    """
    needed = [c for c in metric.input_columns if c in table.column_names]
    src = table.select(needed).append_column("__row", pa.array(range(table.num_rows), pa.int64()))
    spec = type(metric).name
    parts = []
    for out in cluster.map_pool(
        src, MetricActor, {"factory": factory, "spec": spec, "text_column": metric.text_column, "params": dict(params or {})}
    ):
        for d in out.column("__describe").to_pylist():
            if d is not None:
                info = json.loads(d).get("info") or {}
                metric.info.update(info)
        parts.append(out.drop_columns(["__describe"]))
        if progress is not None:
            progress.advance(out.num_rows)
    if not parts:
        return {}
    merged = pa.concat_tables(parts)
    merged = merged.take(pa.compute.sort_indices(merged, [("__row", "ascending")]))
    rows = merged.column("__row").to_pylist()
    if rows != list(range(table.num_rows)):
        raise BiaskitError(
            "E162",
            "the Ray run returned a different set of rows than it was given",
            value=f"{len(rows)} of {table.num_rows}",
            fix="rerun; if it persists, report it with the Ray version",
        )
    return {c: merged.column(c).combine_chunks() for c in merged.column_names if c != "__row"}
