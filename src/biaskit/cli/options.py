"""Options shared by several commands, each defined once as an ``Annotated`` alias.

A command lists a shared option as ``engine: EngineOpt = "local"`` (typer reads the option from the annotation,
the default from the assignment). Options that always go together are an :class:`OptionGroup`: a command decorated
with :func:`grouped` takes the group as one parameter (``engine: dict = ENGINE_OPTIONS``) and gets their values
as one dict. Nothing here imports ray, torch or transformers.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any

import typer

from biaskit.pool import EngineSpec

BATCH_HELP = "auto (starts large, halves on out-of-memory) or a number. Results do not depend on it."
BACKEND_HELP = "hf (transformers: Hub id, local folder, .gguf file or biaskit asset) or openai (an OpenAI-compatible endpoint)."
RETRY_HELP = "Rerunning a finished run runs again the rows that ended in an error (--no-retry-errors leaves them)."

# --engine / --ray-*: generate, fill-mask, likelihood and score
EngineOpt = Annotated[
    str, typer.Option("--engine", help="local (this process) or ray (a pool of Ray actors, one model each; same output table). See docs/scale.md.")
]
RayAddressOpt = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="--engine ray: cluster address (host:6379 or ray://host:10001). Default: $RAY_ADDRESS, else a local Ray started for this run.",
    ),
]
RayActorsOpt = Annotated[int, typer.Option("--ray-actors", help="--engine ray: actors in the pool (each loads the model once).")]
RayBatchSizeOpt = Annotated[int, typer.Option("--ray-batch-size", help="--engine ray: rows sent to an actor per call (also the resume granularity).")]
RayGpusOpt = Annotated[
    float | None, typer.Option("--ray-gpus", help="--engine ray: GPUs per actor (0.5 shares a GPU). Default: 1 when the cluster has GPUs, else 0.")
]
RayCpusOpt = Annotated[float, typer.Option("--ray-cpus", help="--engine ray: CPUs per actor.")]

# the OpenAI-compatible endpoint of --backend openai: generate and likelihood
BaseUrlOpt = Annotated[
    str | None, typer.Option("--base-url", envvar="OPENAI_BASE_URL", help="openai backend: endpoint base URL, e.g. http://127.0.0.1:8000/v1.")
]
ApiKeyEnvOpt = Annotated[str, typer.Option("--api-key-env", help="openai backend: name of the environment variable holding the API key.")]
TimeoutOpt = Annotated[float, typer.Option("--timeout", help="openai backend: seconds per request before a retry.")]
MaxRetriesOpt = Annotated[
    int, typer.Option("--max-retries", help="openai backend: retries on timeouts and HTTP 429/5xx before the row gets an error.")
]
AllowRedirectsOpt = Annotated[
    bool,
    typer.Option(
        "--allow-redirects", help="openai backend: follow HTTP redirects of the endpoint (the API key is never sent to another scheme/host/port)."
    ),
]

# the model runners: generate, fill-mask and likelihood
BackendOpt = Annotated[str, typer.Option("--backend", help=BACKEND_HELP)]
BatchSizeOpt = Annotated[str, typer.Option("--batch-size", "-b", help=BATCH_HELP)]
LimitOpt = Annotated[int | None, typer.Option("--limit", help="Only the first N prompts.")]
OverwriteRunOpt = Annotated[bool, typer.Option("--overwrite", help="Replace an existing output (and discard a partial run).")]
RetryErrorsOpt = Annotated[bool, typer.Option("--retry-errors/--no-retry-errors", help=RETRY_HELP)]
DtypeOpt = Annotated[str, typer.Option("--dtype", help="auto (bf16/fp16 on CUDA, fp32 elsewhere), float32, float16 or bfloat16.")]
RevisionOpt = Annotated[str | None, typer.Option("--revision", help="Hub revision (branch, tag or commit) of the model.")]
# where a model runs: the runners (hf backend), `train classifier` and the report's style model
DeviceOpt = Annotated[str, typer.Option("--device", help="auto (a GPU when present), cpu, cuda, cuda:N or mps; for a local model (hf).")]
BackendOptionOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--backend-option",
        help="KEY=VALUE, repeatable: an option the backend declares (its name, type and default: `biaskit backends list`); "
        "the value is parsed to the option's type.",
    ),
]


# the response cache: generate, fill-mask, likelihood and score
CacheOpt = Annotated[
    str | None,
    typer.Option(
        "--cache",
        help="Response cache folder (SQLite, safe for concurrent runs): answers computed before with the same model "
        "weights, tokenizer, settings, seed and prompt are reused; hits and misses go to the manifest. See docs/runners.md.",
    ),
]
ModelRevisionOpt = Annotated[
    str | None,
    typer.Option("--model-revision", help="openai backend: the served model's revision (recorded as model_revision and part of the --cache key)."),
]


class OptionGroup:
    """Options that several commands take together, in this order: ``name=(Annotated alias, default)``."""

    def __init__(self, **options: tuple[Any, Any]) -> None:
        self.options = options

    @property
    def defaults(self) -> dict[str, Any]:
        return {name: default for name, (_, default) in self.options.items()}

    def parameters(self) -> list[inspect.Parameter]:
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        return [inspect.Parameter(name, kind, annotation=ann, default=default) for name, (ann, default) in self.options.items()]


def grouped(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` with each parameter whose default is an :class:`OptionGroup` replaced, in the signature typer
    reads, by the group's options at that place; a call hands the command their values as one dict under the
    parameter's name (called without typer, the options not given take the group's defaults)."""
    sig = inspect.signature(command, eval_str=True)
    groups = {p.name: p.default for p in sig.parameters.values() if isinstance(p.default, OptionGroup)}
    params = [q for p in sig.parameters.values() for q in (groups[p.name].parameters() if p.name in groups else [p])]
    expanded = sig.replace(parameters=params)

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        bound = expanded.bind(*args, **kwargs)
        bound.apply_defaults()
        values = dict(bound.arguments)
        for name, group in groups.items():
            values[name] = {o: values.pop(o) for o in group.options}
        return command(**values)

    run.__signature__ = expanded  # type: ignore[attr-defined]
    return run


# The groups are typed Any: a command declares one as ``name: dict = GROUP`` and @grouped hands it a dict.

# --engine / --ray-*, in this order: generate, fill-mask, likelihood and score
ENGINE_OPTIONS: Any = OptionGroup(
    engine=(EngineOpt, "local"),
    ray_address=(RayAddressOpt, None),
    ray_actors=(RayActorsOpt, 1),
    ray_batch_size=(RayBatchSizeOpt, 64),
    ray_gpus=(RayGpusOpt, None),
    ray_cpus=(RayCpusOpt, 1.0),
)
# the endpoint of --backend openai: generate and likelihood
ENDPOINT_OPTIONS: Any = OptionGroup(
    base_url=(BaseUrlOpt, None),
    api_key_env=(ApiKeyEnvOpt, "OPENAI_API_KEY"),
    timeout=(TimeoutOpt, 60.0),
    max_retries=(MaxRetriesOpt, 4),
    allow_redirects=(AllowRedirectsOpt, False),
)
# --limit, --overwrite, --retry-errors of the model runners (their keyword arguments in the Python API)
RUN_OPTIONS: Any = OptionGroup(limit=(LimitOpt, None), overwrite=(OverwriteRunOpt, False), retry_errors=(RetryErrorsOpt, True))

# --batch-size, --device, --dtype, --cache, --backend-option: how a runner command runs its model (generate, fill-mask,
# likelihood); the values fill the RunOptions fields of the same names
MODEL_RUN_OPTIONS: Any = OptionGroup(
    batch_size=(BatchSizeOpt, "auto"),
    device=(DeviceOpt, "auto"),
    dtype=(DtypeOpt, "auto"),
    cache=(CacheOpt, None),
    backend_option=(BackendOptionOpt, None),
)


def engine_from_options(engine: str, ray_address: str | None, ray_actors: int, ray_batch_size: int, ray_gpus: float | None, ray_cpus: float):
    """The checked :class:`EngineSpec` for the CLI options (a one-line E160 error when they do not fit)."""
    return EngineSpec(name=engine, address=ray_address, actors=ray_actors, batch_size=ray_batch_size, num_gpus=ray_gpus, num_cpus=ray_cpus).check()
