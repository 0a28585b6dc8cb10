"""Saving an annotation round: the samples table with its manifest, the optional task file, and the round's
ledger entry keyed by project (:mod:`biaskit.annotate.ledger`). ``biaskit annotate sample`` and the demo both call
:func:`save_round`, so both write the same files and the same ledger record through the output layer."""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path
from typing import Any

from biaskit.annotate import ledger as led
from biaskit.annotate.files import export_tasks
from biaskit.arrow import to_arrow
from biaskit.io import write_table
from biaskit.manifest import new_manifest


class RoundReuseWarning(UserWarning):
    """A round name of a project was drawn again for a different sample (both draws stay in the ledger)."""


def save_round(
    table: Any,
    rep: Any,
    config: dict[str, Any],
    *,
    out: Path,
    pool: Path,
    seed: int,
    ledger: Path | None,
    tasks_out: Path | None = None,
    command: str = "biaskit annotate sample",
) -> dict[str, Any]:
    """Write the samples ``table`` to ``out`` (manifest: ``config`` with the draw's report), the task file and
    guidelines to ``tasks_out`` when given, and the ``sample`` entry of the round in ``ledger``. ``pool`` is the
    table the items were drawn from: it names the round's project. Returns the ledger entry (with ``tasks``:
    the task and guideline files written, if any)."""
    round_, task = config["round"], config["task"]
    man = new_manifest(command, config={**config, "report": rep.as_dict()}, seed=seed, inputs=[pool], stage="samples")
    write_table(table, out, stage="samples", manifest=man)
    files = None
    if tasks_out:
        files = export_tasks(table, tasks_out)
    project, sha = led.project_of(pool), sample_fingerprint(table)
    _warn_reuse(led.events(ledger), project, round_, sha)
    entry = led.record(
        "sample",
        round_,
        ledger,
        project=project,
        task_type=task,
        samples=rep.chosen,
        gold=rep.gold,
        samples_path=str(Path(out).resolve()),
        samples_sha256=sha,  # (of the items drawn: see sample_fingerprint)
        seed=seed,
        strata=len(rep.strata),
    )
    return {**entry, "tasks": files}


def sample_fingerprint(table: Any) -> str:
    """What identifies a round's sample: the sha256 of its sorted ``sample_id`` values (the items drawn)."""
    ids = sorted(str(x) for x in to_arrow(table).column("sample_id").to_pylist())
    return hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()


def _warn_reuse(events: list[dict[str, Any]], project: str, round_: str, sha: str) -> None:
    same = [e for e in events if e.get("event") == "sample" and e.get("project") == project and e.get("round") == round_]
    earlier = [e for e in same if e.get("samples_sha256") != sha]
    if earlier and not any(e.get("samples_sha256") == sha for e in same):  # (the same sample drawn again: the same round)
        warnings.warn(
            f"round {round_!r} of {project} was drawn before for a different sample ({earlier[-1].get('samples_path')}, "
            f"{earlier[-1].get('at')}); both are kept in the ledger, as separate rounds (give the new one another --round name to tell them apart)",
            RoundReuseWarning,
            stacklevel=2,
        )
