"""How a run is done apart from its model settings: :class:`RunOptions`, built once (by the CLI command, the Python
API or the demo) and passed down whole to :func:`biaskit.evaluate.runners.core.run`.

Its fields are typed (no ``Any``): the engine is a name or a :class:`biaskit.pool.EngineSpec`, the cache a folder or
a :class:`biaskit.evaluate.cache.ResponseCache`, a ready backend object a :class:`~.backend.Backend`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, replace
from pathlib import Path

from biaskit.evaluate.cache import ResponseCache
from biaskit.evaluate.runners.backend import Backend
from biaskit.evaluate.runners.common import split_served_model
from biaskit.pool import EngineSpec


@dataclass
class RunOptions:
    """How a run is done, apart from its model settings.

    ``backend_options`` go to the backend's constructor (checked against its declared options, E312), with
    ``device``/``dtype`` when set (not ``auto``) and ``backend_option``: ``key=value`` texts (the CLI's
    ``--backend-option``), parsed to the types the backend declares (E318). ``engine`` is ``local``, ``ray`` or an
    :class:`~biaskit.pool.EngineSpec` (None: local); ``cache`` is a :class:`~biaskit.evaluate.cache.ResponseCache` or
    its folder (None: no cache); ``backend_obj`` a ready backend used instead of building one from ``backend``.
    Every field but ``model`` is given by name."""

    model: str
    _: KW_ONLY
    backend: str = "hf"
    out: str | Path | None = None
    batch_size: int | str | None = None
    device: str | None = "auto"
    dtype: str | None = "auto"
    overwrite: bool = False
    limit: int | None = None
    backend_options: dict[str, object] | None = None
    backend_option: Sequence[str] = ()
    progress: bool | None = None
    retry_errors: bool = True
    engine: str | EngineSpec | None = None
    cache: str | Path | ResponseCache | None = None
    backend_obj: Backend | None = None


def public_run_options(options: RunOptions) -> RunOptions:
    """``options`` with the recorded model made public (:func:`~.common.split_served_model`): the one place every run
    (Python API, CLI, demo) passes through, so a served local path never reaches a table or a manifest."""
    public, opts = split_served_model(options.model, options.backend, options.backend_options)
    return options if public == options.model else replace(options, model=public, backend_options=opts)
