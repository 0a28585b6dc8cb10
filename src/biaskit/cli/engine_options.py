"""The ``--engine`` / ``--ray-*`` options shared by generate, fill-mask, likelihood and score.

Each command lists them in its signature as ``engine: str = ENGINE_OPTIONS["engine"]`` (typer reads options
from the signature) and turns them into an :class:`~biaskit.evaluate.engine.EngineSpec` with
:func:`engine_from_options`. Nothing here imports ray.
"""

from __future__ import annotations

from typing import Any, Optional

import typer

ENGINE_OPTIONS: dict[str, Any] = dict(
    engine=typer.Option("local", "--engine", help="local (this process) or ray (a pool of Ray actors, one model each; "
                                                  "same output table). See docs/scale.md."),
    ray_address=typer.Option(None, "--ray-address", help="--engine ray: cluster address (host:6379 or ray://host:10001). "
                                                         "Default: $RAY_ADDRESS, else a local Ray started for this run."),
    ray_actors=typer.Option(1, "--ray-actors", help="--engine ray: actors in the pool (each loads the model once)."),
    ray_batch_size=typer.Option(64, "--ray-batch-size", help="--engine ray: rows sent to an actor per call (also the resume granularity)."),
    ray_gpus=typer.Option(None, "--ray-gpus", help="--engine ray: GPUs per actor (0.5 shares a GPU). Default: 1 when the cluster has GPUs, else 0."),
    ray_cpus=typer.Option(1.0, "--ray-cpus", help="--engine ray: CPUs per actor."),
)


def engine_from_options(engine: str, ray_address: Optional[str], ray_actors: int, ray_batch_size: int,
                        ray_gpus: Optional[float], ray_cpus: float):
    """The checked :class:`EngineSpec` for the CLI options (a one-line E160 error when they do not fit)."""
    from biaskit.evaluate.engine import EngineSpec

    return EngineSpec(name=engine, address=ray_address, actors=ray_actors, batch_size=ray_batch_size,
                      num_gpus=ray_gpus, num_cpus=ray_cpus).check()
