"""The state file of a resumable model run (``OUT.parts/run.json``, :mod:`biaskit.evaluate.runners.core`): the run's
fingerprint, what it was run on, and after a retry the units of the finished output that are run again.

:func:`read_run_state` is its one reader: the file goes through :func:`biaskit.jsonread.read_back` (depth and size
limits, UTF-8, no NaN) and :data:`RUN_STATE_FIELDS`; a file that is not JSON, not an object, lacks ``fingerprint``
or lists a retried unit that is not ``[prompt_id, sample_index]`` is E381 naming the file, the key and the fix
(``--overwrite`` starts the run over), never a ``JSONDecodeError`` or ``AttributeError``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.inputs import Field, check_record
from biaskit.jsonread import read_back

RUN_STATE_FIX = "the run's state file is damaged: pass --overwrite to start the run over (its partial rows are discarded)"
RUN_STATE_FIELDS = {
    "fingerprint": Field("str", required=True, nullable=False, fix=RUN_STATE_FIX),
    "run": Field("object", fix=RUN_STATE_FIX),
    "retry_of_finished": Field("list", fix=RUN_STATE_FIX),
}


def _unit(entry: Any, source: str, i: int) -> tuple[str, int]:
    ok = isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
    n = entry[1] if ok else None
    if not ok or isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise BiaskitError("E381", f"{source}: retry_of_finished[{i}] must be [prompt_id, sample_index]", value=entry, fix=RUN_STATE_FIX)
    return entry[0], n


def check_run_state(obj: Any, *, source: str) -> dict[str, Any]:
    """``obj`` checked against :data:`RUN_STATE_FIELDS`; ``retry_of_finished`` as a set of (prompt_id, sample_index)."""
    rec = check_record(obj, RUN_STATE_FIELDS, source=source, unknown="keep", fix=RUN_STATE_FIX)
    rec["run"] = rec.get("run") or {}
    rec["retry_of_finished"] = {_unit(e, source, i) for i, e in enumerate(rec.get("retry_of_finished") or [])}
    return rec


def read_run_state(path: str | Path) -> dict[str, Any]:
    """The state file at ``path``, read and checked (see the module docs)."""
    return check_run_state(read_back(path, what="run state file", fix=RUN_STATE_FIX), source=str(path))
