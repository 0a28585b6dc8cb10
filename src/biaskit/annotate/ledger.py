"""A local ledger of annotation rounds: one JSON line per event (sample, push, pull, agreement, validate).

Default file: ``annotation-rounds.jsonl`` in the biaskit user cache (``$BIASKIT_CACHE``, default
``~/.cache/biaskit``), not the working directory (``--ledger`` or ``BIASKIT_ANNOTATION_LEDGER`` to change; the
demo keeps its ledger in its run folder). A ledger an earlier biaskit left in the working directory is still
used when it is there, so no recorded round is lost.

The history belongs to a project, not to the ledger file: every entry names its ``project`` (the resolved path of
the table the round's items were drawn from, so two unrelated ``r1`` rounds of different folders never merge), and
a round is one draw of one sample (``samples_sha256``): drawing a round name again for a different sample warns and
keeps both (:func:`history` shows each). Entries are scrubbed with :func:`biaskit.secrets.scrub`; URLs
are recorded without credentials and tokens are never written. :func:`history` folds the events into one
summary row per round (sizes, annotators, agreement, validation figures), shown by
``biaskit annotate rounds``.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from biaskit import assets
from biaskit.arrow import to_arrow
from biaskit.errors import BiaskitError
from biaskit.io import acquire_output_lock, read_json_lines, read_table, release_output_lock
from biaskit.manifest import utcnow
from biaskit.output import clean_obj
from biaskit.secrets import scrub

DEFAULT = "annotation-rounds.jsonl"


def ledger_path(path: str | Path | None = None) -> Path:
    """``path``, else ``$BIASKIT_ANNOTATION_LEDGER``, else ``annotation-rounds.jsonl`` in the working directory when
    one is there (written by an earlier biaskit), else that name in the user cache (:func:`biaskit.assets.cache_dir`)."""
    if path or os.environ.get("BIASKIT_ANNOTATION_LEDGER"):
        return Path(path or os.environ["BIASKIT_ANNOTATION_LEDGER"])
    if Path(DEFAULT).is_file():
        return Path(DEFAULT)

    return assets.cache_dir() / DEFAULT


def project_of(pool: str | Path) -> str:
    """The project key of a round drawn from the table ``pool``: its resolved path."""
    return str(Path(pool).resolve())


def project_for(samples: str | Path | None, path: str | Path | None = None) -> str | None:
    """The project of the round whose samples table is ``samples`` (from its ``sample`` entry); None if unknown."""
    if samples is None:
        return None
    want = str(Path(samples).resolve())
    found = None
    for e in events(path):
        if e.get("event") == "sample" and e.get("samples_path") == want:
            found = e.get("project")
    return found


def round_ref(samples: str | Path | None, path: str | Path | None = None) -> dict[str, Any]:
    """The keys that tie an event to its round: the samples table and the round's project ({} without samples)."""
    if samples is None:
        return {}
    return {"samples_path": str(Path(samples).resolve()), "project": project_for(samples, path)}


def record_push(round_: str, path: str | Path | None, samples: str | Path, rep: Any, **data: Any) -> dict[str, Any]:
    """Record the ``push`` of the round of ``samples``: where its tasks went (``rep``, the push report), then ``data``."""
    return record(
        "push",
        round_,
        path,
        **round_ref(samples, path),
        url=rep.url,
        title=rep.title,
        project_id=rep.project_id,
        total=rep.total,
        imported=rep.imported,
        **data,
    )


def record(event: str, round_: str, path: str | Path | None = None, **data: Any) -> dict[str, Any]:
    """Append one event to the ledger (atomic per line: a single write of one line in append mode). Every
    string (keys too) is scrubbed and cleaned by the output layer (:func:`biaskit.output.clean_obj`)."""
    entry = clean_obj(scrub({"at": utcnow(), "round": round_, "event": event, **data}))
    p = ledger_path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(entry, ensure_ascii=False, default=str) + "\n"
    with _ledger_lock(p):  # the output lock (<ledger>.lock): one writer at a time, as for every other output
        fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
    return entry


#: seconds a ledger write waits for another process's (short) ledger write before E140
LOCK_WAIT = 10.0


@contextmanager
def _ledger_lock(p: Path):
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            acquire_output_lock(p, command="biaskit annotate (round ledger)")
            break
        except BiaskitError as exc:
            if exc.code != "E140" or time.monotonic() >= deadline:
                raise
            time.sleep(0.05)
    try:
        yield
    finally:
        release_output_lock(p)


def events(path: str | Path | None = None) -> list[dict[str, Any]]:
    p = ledger_path(path)
    if not p.exists():
        return []

    def bad_line(i: int, line: str, parsed: bool) -> BiaskitError:
        if not parsed:
            return BiaskitError(
                "E092",
                f"line {i} of the round ledger {p} is not JSON",
                value=line[:80],
                fix="repair or remove that line (the ledger is plain JSON lines)",
            )
        return BiaskitError(
            "E092",
            f"line {i} of {p} is not a round ledger entry (at, round, event)",
            value=line[:80],
            fix="pass the ledger biaskit annotate writes (--ledger, default annotation-rounds.jsonl), not a table",
        )

    return read_json_lines(p, "round ledger", bad_line, _is_entry)


def earlier_items(
    exclude: Sequence[str | Path], path: str | Path | None, *, round_: str, pool: str | Path, previous: bool = True
) -> tuple[set[str], list[str]]:
    """The sample ids earlier rounds drew, and the files they came from: those of the ``exclude`` samples tables
    and, when ``previous``, of the ledger's earlier rounds of the same project (drawn from the same ``pool``
    table; an entry of an older biaskit that names no project counts). Each earlier round's file is checked
    against the ledger's checksum (:func:`round_samples`, E388 naming a changed file)."""
    excl: set[str] = set()
    used = []
    for e in exclude:
        excl.update(read_table(e, "samples").column("sample_id").to_pylist())
        used.append(str(e))
    if previous:
        project = project_of(pool)
        latest = {
            ev.get("round"): ev
            for ev in events(path)
            if ev.get("event") == "sample" and ev.get("round") != round_ and ev.get("samples_path") and ev.get("project", project) == project
        }
        for ev in latest.values():
            excl.update(round_samples(ev).column("sample_id").to_pylist())
            used.append(ev["samples_path"])
    return excl, used


def sample_fingerprint(table: Any) -> str:
    """What identifies a round's sample: the sha256 of its sorted ``sample_id`` values (the items drawn)."""
    ids = sorted(str(x) for x in to_arrow(table).column("sample_id").to_pylist())
    return hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()


def round_samples(entry: dict[str, Any]) -> Any:
    """The samples table a ``sample`` entry recorded (``samples_path``), checked against the entry's checksum
    (``samples_sha256``): a table whose items changed since (another round's sample written over it) is E388
    naming the file and the round, never read as if it were that round's. A missing file is E092."""
    p, round_ = entry["samples_path"], entry.get("round")
    if not Path(p).exists():  # its items would silently be drawn again
        raise BiaskitError(
            "E092",
            f"the samples table of earlier round {round_!r} (from the ledger) is gone, so its items cannot be excluded",
            value=p,
            fix="restore the file at that path, or pass --include-previous (and --exclude FILE for each earlier round to keep out)",
        )
    t = read_table(p, "samples")
    want = entry.get("samples_sha256")
    if isinstance(want, str) and sample_fingerprint(t) != want:
        raise BiaskitError(
            "E388",
            f"{p}, the samples table of round {round_!r} in the ledger, changed since the ledger recorded it "
            f"({t.num_rows} items now, {entry.get('samples')} then): it was replaced or edited",
            value=p,
            fix="restore that round's samples table (or pass --include-previous and --exclude the right files); "
            "give each round its own --out (r1/samples.parquet, r2/samples.parquet)",
        )
    return t


def _is_entry(entry: Any) -> bool:
    return isinstance(entry, dict) and all(isinstance(entry.get(k), str) for k in ("at", "round", "event"))


def _round_key(e: dict[str, Any]) -> tuple:
    return (e.get("project"), e["round"], e.get("samples_sha256") or e.get("samples_path"))


def history(path: str | Path | None = None) -> list[dict[str, Any]]:
    """One summary per round of a project (one draw of a sample), in order of first appearance; later events
    overwrite earlier figures. An event other than ``sample`` belongs to the round of its samples table
    (``samples_path``), else to the latest round of that name in its project."""
    rounds: dict[tuple, dict[str, Any]] = {}
    latest: dict[tuple, tuple] = {}  # (project, round) -> key of its latest draw
    by_path: dict[str, tuple] = {}
    for e in events(path):
        if e.get("event") == "sample":
            key = _round_key(e)
            latest[(e.get("project"), e["round"])] = key
            if e.get("samples_path"):
                by_path[e["samples_path"]] = key
        else:
            key = by_path.get(e.get("samples_path") or "") or latest.get((e.get("project"), e["round"])) or (e.get("project"), e["round"], None)
        r = rounds.setdefault(key, {"round": e["round"], "project": e.get("project"), "first": e["at"], "events": 0})
        r["events"] += 1
        r["last"] = e["at"]
        _fold(r, e)
    return list(rounds.values())


def _fold(r: dict[str, Any], e: dict[str, Any]) -> None:
    ev = e.get("event")
    if ev == "sample":
        r.update({k: e.get(k) for k in ("task_type", "samples", "gold", "samples_path", "seed") if k in e})
    elif ev == "push":
        r.update({"project_title": e.get("title"), "server": e.get("url"), "pushed": e.get("total"), "annotators_per_task": e.get("annotators")})
    elif ev == "pull":
        r.update(
            {
                "annotations": e.get("kept"),
                "dropped": e.get("dropped"),
                "annotators": e.get("annotators"),
                "items_annotated": e.get("items"),
                "platform": e.get("platform"),
            }
        )
    elif ev == "agreement":
        r.update(
            {
                k: e.get(k)
                for k in ("fleiss_kappa", "krippendorff_alpha_nominal", "krippendorff_alpha_ordinal", "cohen_kappa_mean", "careless")
                if k in e
            }
        )
    elif ev == "validate":
        for m, figs in (e.get("metrics") or {}).items():
            for k, v in figs.items():
                r[f"{m}.{k}"] = v
        for m, widths in (e.get("group_ci") or {}).items():
            r[f"{m}.accuracy_ci_width_by_{e.get('group_by') or 'group'}"] = widths


#: the figures of a metric's validation the ledger keeps (``biaskit annotate rounds`` shows them)
VALIDATION_FIGURES = ("spearman_rho", "accuracy", "f1_weighted", "calibrated_accuracy", "cv_calibrated_accuracy")


def record_validation(path: str | Path | None, samples: str | Path, validations: Mapping[str, Any], *, by: str | None) -> dict[str, Any]:
    """Record a ``validate`` event for the round of ``samples``: per metric the :data:`VALIDATION_FIGURES` of its
    validation table (``validations``: metric -> :class:`~biaskit.annotate.validation.Validation`), and with ``by``
    the group column and each metric's group CI widths. The round is the one the tables name ("?" when all are empty)."""
    tables = {m: v.table for m, v in validations.items()}
    round_ = next((t.column("round")[0].as_py() for t in tables.values() if t.num_rows), "?")
    groups = {"group_by": by, "group_ci": {m: group_ci_widths(t) for m, t in tables.items()}} if by else {}
    metrics = {m: figures(t, VALIDATION_FIGURES) for m, t in tables.items()}
    return record("validate", round_, path, **round_ref(samples, path), metrics=metrics, **groups)


def figures(table: Any, measures: tuple[str, ...]) -> dict[str, float | None]:
    """{measure: value} of the round-level rows (no annotator) of an agreement table."""
    out: dict[str, float | None] = {}
    for r in to_arrow(table).to_pylist():
        if r["measure"] in measures and not r.get("annotator"):
            out[r["measure"]] = None if r["estimate"] is None else round(float(r["estimate"]), 4)
    return out


def group_ci_widths(table: Any) -> dict[str, float | None]:
    """{group: width of the 95% CI of the per-group accuracy} of a validation table (annotate validate --by)."""
    out: dict[str, float | None] = {}
    for r in to_arrow(table).to_pylist():
        if r["measure"] == "group_accuracy" and r.get("group") is not None:
            lo, hi = r.get("ci_low"), r.get("ci_high")
            out[r["group"]] = None if lo is None or hi is None else round(float(hi - lo), 4)
    return out
