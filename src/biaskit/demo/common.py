"""What the demo stages share: the table an earlier stage recorded, and a model run a stage skips when the model
cannot be loaded. Both say why a stage skipped in its note (``ctx.note``), never by failing the demo."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa

from biaskit.errors import BiaskitError
from biaskit.io import read_table

#: the errors of a model that is not there: asset not found (E010), dependency missing (E011), model loading (E060)
MODEL_UNAVAILABLE = ("E010", "E011", "E060")


def input_table(ctx: Any, stage: str, name: str, why: str) -> pa.Table | None:
    """The table an earlier stage recorded as ``name``; without one (or its file), None and the note
    ``skipped: no <name> table <why>``."""
    path = ctx.tables.get(name)
    if path is None or not Path(path).exists():
        ctx.note(stage, f"skipped: no {name} table {why}")
        return None
    return read_table(path)


def run_model(
    ctx: Any,
    stage: str,
    name: str,
    runner: Callable[..., pa.Table],
    prompts: pa.Table,
    *,
    model: str,
    unavailable: Callable[[BiaskitError], str],
    **settings: Any,
) -> tuple[pa.Table, float] | None:
    """``runner`` (a :mod:`biaskit.evaluate.runners` function) on ``prompts`` with ``settings``, batched
    automatically, writing ``<name>.parquet`` of the run folder over an earlier run's; the table is recorded as
    ``name`` and returned with the seconds it took. When the model is not there (:data:`MODEL_UNAVAILABLE`)
    nothing is recorded: the note is ``skipped: <unavailable(error)>``, ``ctx.info[stage]`` holds the error and
    the result is None."""
    out = Path(ctx.run_dir) / f"{name}.parquet"
    t0 = time.perf_counter()
    try:
        table = runner(prompts, model=model, out=out, batch_size="auto", overwrite=True, **settings)
    except BiaskitError as exc:
        if exc.code not in MODEL_UNAVAILABLE:
            raise
        ctx.note(stage, f"skipped: {unavailable(exc)}")
        ctx.info[stage] = {"skipped": str(exc)}
        return None
    secs = round(time.perf_counter() - t0, 1)
    ctx.add(name, out)
    return table, secs
