"""Writing a scores table: the table, its manifest and nothing else, the same for ``biaskit score``, the demo and
Python users (orchestration lives in the library; the CLI and the demo only choose what to score).

:func:`write_scores` builds the manifest every scores table carries (the metrics as they ran, with their versions
and settings; the engine; the cache's hits and misses; the tokens a judge spent, and those its cached rows saved) and writes both through the
output layer (:func:`biaskit.io.write_table`: redacted, atomic)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from biaskit.evaluate.metrics.cost import token_cost
from biaskit.io import write_table
from biaskit.manifest import new_manifest


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
