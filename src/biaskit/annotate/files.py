"""File-based rounds for other crowd platforms (Prolific/MTurk/Toloka forms, spreadsheets, ...).

:func:`export_tasks` writes the round's tasks as CSV or JSONL (``sample_id, round, task_type, text,
choices``) plus the guidelines as Markdown next to them (``<file>.guidelines.md``). Only the masked text
leaves; the original text and the mask mapping stay in the samples table.

:func:`read_results` reads a result file (CSV or JSONL with at least ``sample_id, annotator, label``;
optional ``lead_time``, ``created_at``) and sends it through the same validation path as Label Studio
exports (:func:`biaskit.annotate.results.validate_records`).
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import pyarrow as pa

from biaskit.annotate.results import PullReport, samples_info, validate_records
from biaskit.annotate.tasks import get_task_type
from biaskit.arrow import to_arrow
from biaskit.errors import BiaskitError
from biaskit.io import read_json_lines, read_text_utf8, write_text_atomic
from biaskit.output import write_text
from biaskit.schema import check_columns
from biaskit.spreadsheet import neutralize

TASK_COLUMNS = ("sample_id", "round", "task_type", "text", "choices")


def text_sources(samples) -> str:
    """Where this round's texts come from, counted from the samples' ``model`` column (``wikipedia`` = a
    Wikipedia sentence, any other model = a language-model text), for the annotation guidelines."""
    models = samples.column("model").to_pylist() if "model" in samples.column_names else [None] * samples.num_rows
    wiki = sum(1 for m in models if m == "wikipedia")
    gen = sum(1 for m in models if m is not None and m != "wikipedia")
    other = len(models) - wiki - gen
    parts = [
        f"{wiki} are sentences from Wikipedia" if wiki else "",
        f"{gen} were written by language models" if gen else "",
        f"{other} come from other sources (e.g. templates or imported data)" if other else "",
    ]
    return f"**Where these texts come from:** of the {len(models)} texts of this round, " + ", ".join(p for p in parts if p) + "."


def export_tasks(samples: Any, path: str | Path) -> tuple[Path, Path]:
    """Write the tasks file (``.csv`` or ``.jsonl``) and its guidelines; returns both paths."""
    s = to_arrow(samples)
    round_, spec, _ = samples_info(s)
    task = get_task_type(spec)
    p = Path(path)
    fmt = p.suffix.lower()
    if fmt not in (".csv", ".jsonl"):
        raise BiaskitError("E002", "unsupported task file type", value=str(p), options=[".csv", ".jsonl"], fix="name the tasks file *.csv or *.jsonl")
    rows = [
        {"sample_id": r["sample_id"], "round": r["round"], "task_type": r["task_type"], "text": r["text"], "choices": "|".join(task.labels)}
        for r in s.select(["sample_id", "round", "task_type", "text"]).to_pylist()
    ]
    fh = io.StringIO(newline="")
    if fmt == ".csv":  # opened in spreadsheets: text cells that would be formulas get a leading ' (OWASP)
        w = csv.DictWriter(fh, fieldnames=TASK_COLUMNS)
        w.writeheader()
        w.writerows({k: neutralize(v) for k, v in r.items()} for r in rows)
    else:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    write_text(p, fh.getvalue())  # the output layer: cleaned, atomic
    g = p.parent / (p.name + ".guidelines.md")
    write_text_atomic(
        g,
        task.guidelines_markdown()
        + "\n"
        + text_sources(s)
        + "\n"
        + f"\n---\nRound `{round_}`, {len(rows)} items. Return a CSV or JSONL file with one row per "
        "label: `sample_id, annotator, label` (optional `lead_time` in seconds, `created_at` ISO 8601).\n",
    )
    return p, g


def _read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise BiaskitError("E003", "result file not found", value=str(path), fix="check the path")
    fmt = path.suffix.lower()

    if fmt == ".csv":
        text = read_text_utf8(path, "result file")
        try:
            return [dict(r) for r in csv.DictReader(io.StringIO(text, newline=""))]
        except csv.Error as exc:
            raise BiaskitError(
                "E091", f"{path} is not a readable CSV file: {exc}", value=str(path), fix="give a CSV with a header row sample_id,annotator,label"
            ) from None
    if fmt in (".jsonl", ".json"):

        def bad_line(i: int, line: str, parsed: bool) -> BiaskitError:
            if not parsed:
                return BiaskitError("E091", f"line {i} of {path} is not JSON", value=line[:80], fix="one JSON object per line")
            return BiaskitError(
                "E091",
                f"line {i} of {path} is not a JSON object",
                value=line[:80],
                fix='one object per line, e.g. {"sample_id": "s-1", "annotator": "w1", "label": "positive"}',
            )

        return read_json_lines(path, "result file", bad_line, lambda obj: isinstance(obj, dict))
    raise BiaskitError("E002", "unsupported result file type", value=str(path), options=[".csv", ".jsonl"], fix="give a .csv or .jsonl file")


def read_results(path: str | Path, samples: Any, *, platform: str = "file") -> tuple[pa.Table, pa.Table, PullReport]:
    """Annotations, rejected records and the report from a result file of another platform."""
    p = Path(path)
    rows = _read_rows(p)
    if not rows:  # a 0-byte or header-only file: no annotations (and no ledger entry), not an empty round
        raise BiaskitError(
            "E211",
            f"the result file {p} has no records",
            value=str(p),
            fix="export the platform's results again (columns sample_id, annotator, label); nothing was written",
        )
    if rows:
        fix = "give columns sample_id, annotator, label (optional lead_time, created_at)"
        check_columns(rows[0], ("sample_id", "annotator", "label"), f"the result file {p} lacks column(s)", fix=fix)
    round_, spec, ids = samples_info(samples)
    recs = []
    for i, r in enumerate(rows, 1):
        for col in ("sample_id", "annotator", "label", "created_at"):
            v = r.get(col)
            if v is not None and not isinstance(v, str):
                raise BiaskitError(
                    "E153",
                    f"{p}: record {i} has a {type(v).__name__} {col!r}; ids and labels are text",
                    value=v,
                    fix=f'write it as a string, e.g. "{col}": "{v}" (CSV cells are always text)',
                )
        lt = r.get("lead_time")
        try:
            lt = float(lt) if lt not in (None, "") else None
        except (TypeError, ValueError):
            raise BiaskitError(
                "E091", f"{p}: record {i}: lead_time is not a number", value=lt, fix="give seconds as a number, or leave it empty"
            ) from None
        if lt is not None and not (math.isfinite(lt) and lt >= 0):
            raise BiaskitError(
                "E091",
                f"{p}: record {i}: lead_time must be a finite number of seconds >= 0",
                value=r.get("lead_time"),
                fix="give the seconds the annotator spent (e.g. 12.5), or leave it empty",
            )
        recs.append(
            {
                "sample_id": r.get("sample_id"),
                "annotator": (r.get("annotator") or "").strip() or None,
                "label": r.get("label"),
                "lead_time": lt,
                "created_at": r.get("created_at") or None,
                "updated_at": r.get("updated_at") or None,
            }
        )
    return validate_records(recs, task=spec, round=round_, platform=platform, sample_ids=ids)
