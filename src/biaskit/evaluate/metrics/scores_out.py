"""Writing a scores table: the table, its manifest and nothing else, the same for ``biaskit score``, the demo and
Python users (orchestration lives in the library; the CLI and the demo only choose what to score).

:func:`write_scores` builds the manifest every scores table carries (the metrics as they ran, with their versions
and settings; the engine; the cache's hits and misses; the tokens a judge spent, and those its cached rows saved) and writes both through the
output layer (:func:`biaskit.io.write_table`: redacted, atomic)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from biaskit.evaluate.metrics.cost import token_cost
from biaskit.io import write_table
from biaskit.manifest import new_manifest
from biaskit.schema import validate

#: the row key of a scores table; a table to score without one gets ``row-1``, ``row-2``, ... (its row numbers)
ROW_ID = "prompt_id"


def scoring_input(t: pa.Table, *, source: str) -> tuple[pa.Table, bool]:
    """The table ``biaskit score`` reads, made ready to score: any table with a text column is scored (a user's CSV
    of sentences, Sheng et al.'s labelled sentences), every column is carried, and a table without a row key gets
    one (``prompt_id`` = ``row-1``, ``row-2``, ..., first). Returns (table, whether the id was added). The checks the
    output gets (types, a null or duplicated key) are made here, before any scoring, naming ``source`` as the
    table to score."""
    added = ROW_ID not in t.column_names
    if added:
        t = t.add_column(0, ROW_ID, pa.array([f"row-{i + 1}" for i in range(t.num_rows)], pa.string()))
    validate(t, "scores", where=f"{source} (the table to score)", keys=True)
    return t, added


def params_as_used(params: dict, used: Sequence[Any]) -> dict:
    """The -p parameters as the metrics took them (converted to their types, and a server's local model path cut to
    its file name by the judge: the directory never reaches the manifest)."""
    by_name = {m.name: m for m in used}
    out = {}
    for name, given in (params or {}).items():
        m = by_name.get(name)
        out[name] = {k: (m.config[k] if m is not None and k in m.config else v) for k, v in given.items()} if isinstance(given, dict) else given
    return out


def write_scores(
    scored: Any,
    out: str | Path,
    used: Sequence[Any],
    *,
    command: str = "biaskit score",
    config: dict | None = None,
    inputs: Sequence[Any] = (),
    engine_facts: dict | None = None,
    cache: Any = None,
    seed: int | None = None,
) -> Path:
    """Write ``scored`` (a table :func:`~biaskit.evaluate.metrics.base.score_table` returned, scored by the metric
    objects ``used``) to ``out`` with its manifest; ``config``: what the caller asked for (metrics, text column,
    parameters, ...); ``cache``: the :class:`~biaskit.evaluate.cache.ResponseCache` the scoring used, if any."""
    cost = token_cost(scored, list(used), cache)
    manifest = new_manifest(
        command,
        config=config or {},
        inputs=[p for p in inputs if p],
        stage="scores",
        seed=seed,
        extra={
            "metrics": [m.describe() for m in used],
            "engine": engine_facts or {"engine": "local"},
            **({"cache": cache.stats()} if cache else {}),
            **({"cost": cost} if cost else {}),
        },
    )
    write_table(scored, out, stage="scores", manifest=manifest)
    return Path(out)
