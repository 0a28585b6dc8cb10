"""Saving an annotation round: the samples table with its manifest, the optional task file, and the round's
ledger entry keyed by project (:mod:`biaskit.annotate.ledger`). ``biaskit annotate sample`` and the demo both call
:func:`save_round`, so both write the same files and the same ledger record through the output layer."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from biaskit.annotate import ledger as led
from biaskit.annotate.files import export_tasks
from biaskit.errors import BiaskitError
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
    overwrite: bool = False,
) -> dict[str, Any]:
    """Write the samples ``table`` to ``out`` (manifest: ``config`` with the draw's report), the task file and
    guidelines to ``tasks_out`` when given, and the ``sample`` entry of the round in ``ledger``. ``pool`` is the
    table the items were drawn from: it names the round's project. Returns the ledger entry (with ``tasks``:
    the task and guideline files written, if any). ``out`` holding another draw's samples (the ledger's) is E389
    unless ``overwrite``."""
    round_, task = config["round"], config["task"]
    project, sha = led.project_of(pool), sample_fingerprint(table)
    history = led.events(ledger)
    if not overwrite:
        _refuse_replacing_a_round(history, out, round_, sha)
    man = new_manifest(command, config={**config, "report": rep.as_dict()}, seed=seed, inputs=[pool], stage="samples")
    write_table(table, out, stage="samples", manifest=man)
    files = None
    if tasks_out:
        files = export_tasks(table, tasks_out)
    _warn_reuse(history, project, round_, sha)
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


#: (defined with the ledger, which checks it when it reads a round's samples back)
sample_fingerprint = led.sample_fingerprint


def _refuse_replacing_a_round(events: list[dict[str, Any]], out: Path, round_: str, sha: str) -> None:
    """E389 when ``out`` is the samples table the ledger recorded for another draw (an earlier round, or the same
    round with other items): writing there would change which items that round excludes."""
    if not Path(out).exists():
        return
    where = str(Path(out).resolve())
    held = [e for e in events if e.get("event") == "sample" and e.get("samples_path") == where]
    if held and (held[-1].get("round"), held[-1].get("samples_sha256")) != (round_, sha):  # (its last draw is what it holds)
        e = held[-1]
        raise BiaskitError(
            "E389",
            f"{out} holds the samples of round {e.get('round')!r} ({e.get('samples')} items, {e.get('at')}); "
            f"writing round {round_!r} there would replace them, and the ledger's round history with them",
            value=str(out),
            fix="give this round its own --out (e.g. r2/samples.parquet), or pass --overwrite to replace that round's samples",
        )


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
