"""BBQ's published JSON Lines files (``data/<Category>.jsonl``) read into the table of ``biaskit expand bbq``.

A published row nests ``answer_info`` and ``additional_metadata`` (``subcategory``, ``stereotyped_groups``,
``version``, ``source``); they become the flat columns of :data:`biaskit.templates.bbq.COLUMNS`. Any other
key (a model's prediction, lm-eval's fields, ...) is kept as a column of its own: scalars as they are, lists
and objects as JSON text. ``target_loc`` is not in the published files: it is the option whose group is one
of the stereotyped groups (by its group, else by its text: Nationality's groups are regions), null where none or both match (the intersectional contrasts that keep the race);
``label_type`` is ``name`` when an answer is a first name of BBQ's name vocabulary, else ``label``.
"""

from __future__ import annotations

import csv
import json
from functools import cache
from pathlib import Path
from typing import Any

import pyarrow as pa

from biaskit.errors import BiaskitError
from biaskit.jsonread import loads_json
from biaskit.templates.bbq import COLUMNS, target_option
from biaskit.templates.bbq_data import bundled_dir

_NESTED = ("answer_info", "additional_metadata")
_REQUIRED = (
    "example_id",
    "question_index",
    "question_polarity",
    "context_condition",
    "category",
    "context",
    "question",
    "ans0",
    "ans1",
    "ans2",
    "label",
)


def is_bbq_jsonl(path: str | Path) -> bool:
    """True when the first row of ``path`` (a .jsonl file, or the first .jsonl of a folder) has BBQ's keys."""
    p = Path(path)
    if p.is_dir():
        p = next(iter(sorted(p.glob("*.jsonl"))), p)
    if not (p.is_file() and p.name.lower().endswith(".jsonl")):
        return False
    with p.open("rb") as fh:
        first = fh.readline()
    try:
        row = json.loads(first.decode("utf-8"))
    except (ValueError, RecursionError):  # not UTF-8 (a ValueError), not JSON, or nested too deeply: not BBQ's file
        return False  # (the reader of the kind it is then says what is wrong with it)
    return isinstance(row, dict) and {"context_condition", "question_polarity", "answer_info"} <= set(row)


@cache
def _first_names() -> frozenset[str]:
    with (bundled_dir() / "vocabulary_proper_names.csv").open(encoding="utf-8-sig", newline="") as fh:
        return frozenset(r["Name"] for r in csv.DictReader(fh) if r.get("First_last") in {"first", "first_only"})


def _label_type(info: dict[str, Any]) -> str:
    """``name`` when an answer is a person's first name from BBQ's name vocabulary, else ``label``."""
    texts = [str(v[0]) for v in info.values() if isinstance(v, list) and len(v) == 2 and v[1] != "unknown"]
    return "name" if any(t.split(" ")[0] in _first_names() for t in texts if t) else "label"


def _json(value: Any, where: str) -> Any:
    if not isinstance(value, str):
        return value
    return loads_json(value, source=f"{where}: answer_info/stereotyped_groups", code="E415", fix="give the value as JSON")


def from_published(row: dict[str, Any], where: str) -> dict[str, Any]:
    """One published row -> one row of the examples table (extra keys kept)."""
    missing = [k for k in _REQUIRED if k not in row]
    if missing:
        raise BiaskitError(
            "E415", f"{where}: not a BBQ example (missing keys)", value=missing, options=_REQUIRED, fix="give BBQ's data/<Category>.jsonl"
        )
    info = _json(row.get("answer_info"), where) or {}
    # a published row nests its metadata; a table written by biaskit (expand bbq) has it flat
    meta = row.get("additional_metadata") or {k: row[k] for k in ("subcategory", "version", "source") if k in row}
    groups = [str(g) for g in (_json(row.get("stereotyped_groups", meta.get("stereotyped_groups")), where) or [])]
    people = [(i, [str(v[1]), str(v[0])]) for i in range(3) if (v := info.get(f"ans{i}")) and len(v) == 2 and v[1] != "unknown"]
    target = row["target_loc"] if "target_loc" in row else target_option(people, groups)
    out: dict[str, Any] = {
        "example_id": int(row["example_id"]),
        "category": str(row["category"]),
        "question_index": str(row["question_index"]),
        "question_polarity": row["question_polarity"],
        "context_condition": row["context_condition"],
        "context": row["context"],
        "question": row["question"],
        "ans0": row["ans0"],
        "ans1": row["ans1"],
        "ans2": row["ans2"],
        "answer_info": json.dumps(info, ensure_ascii=False),
        "stereotyped_groups": json.dumps(groups, ensure_ascii=False),
        "stereotyped_var2": row.get("stereotyped_var2", meta.get("Known_stereotyped_var2")),
        "label": int(row["label"]),
        "target_loc": target,
        "label_type": row.get("label_type") or _label_type(info),
        "subcategory": str(meta.get("subcategory", "None")),
        "version": str(meta.get("version", "None")),
        "source": meta.get("source"),
        "template_row": row.get("template_row"),
    }
    for k, v in row.items():
        if k not in out and k not in _NESTED:
            out[k] = json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v
    return out


def read_published(source: str | Path) -> pa.Table:
    """A BBQ .jsonl file, or a folder of them (every ``*.jsonl``, sorted by name), as an examples table."""
    p = Path(source)
    files = sorted(p.glob("*.jsonl")) if p.is_dir() else [p]
    if not files:
        raise BiaskitError("E415", "no .jsonl files in the folder", value=str(p), fix="give BBQ's data/ folder or one of its files")
    rows: list[dict[str, Any]] = []
    for f in files:
        with f.open("rb") as fh:
            for n, raw in enumerate(fh, start=1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise BiaskitError(
                        "E415", f"{f.name} line {n} is not UTF-8 text", value=raw[:80], fix="give BBQ's JSON Lines files as UTF-8"
                    ) from exc
                if not line.strip():
                    continue
                row = loads_json(line, source=f.name, line=n, code="E415", fix="give BBQ's JSON Lines files")
                rows.append(from_published(row, f"{f.name} line {n}"))
    known = dict(COLUMNS)
    extra = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in known]
    table = pa.Table.from_pylist(rows, schema=pa.schema([*COLUMNS])) if rows else pa.schema([*COLUMNS]).empty_table()
    for k in extra:
        table = table.append_column(k, pa.array([r.get(k) for r in rows]))
    return table
