"""BBQ templates in the translation-sheet workflow (``templates export-sheet --bbq`` / ``import-sheet --bbq``).

Every translatable cell of BBQ's templates folder is one sheet row (the layout of :mod:`biaskit.templates.sheet`,
written and read by its ``write_sheet``/``read_sheet``): ``template_id`` is ``bbq/<file stem>/<record>/<column>``
(``bbq/Age/2/Ambiguous_Context``; ``bbq/vocabulary/7/Name`` for a vocabulary word), ``category`` the BBQ
category, ``source`` the English text. The translated cells are the contexts, questions and answers, the
``Names`` and ``Lexical_diversity`` lists and the vocabulary words; proper names, groups and notes stay as they
are (the stereotyped groups that name vocabulary words follow the words' translations, so that the targeted
words are still found).

Import checks every filled cell against its source (E417 naming the sheet row): a text keeps exactly the slots
of its source (``{{NAME1}}``, ``{{WORD1}}``, ... each as often), a ``NAME1: [...]; NAME2: [...]`` list keeps its
lists (each non-empty), an intersectional ``Names`` list keeps its length, and its agreement markers
(``{NAME1=m:šel|f:šla}``) resolve for every gender that can fill their slot (:mod:`biaskit.templates.bbq_agree`;
the translated ``vocabulary.csv`` gets the declared ``gender`` column). It then writes a translated copy of
the folder, which ``biaskit expand bbq DIR`` reads and checks like the original (same counts: the same rows and
list sizes). Cells without a translation, or whose status is not ``translated``/``validated``, keep the source.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.output import write_text
from biaskit.ownership import claim_folder, write_owned_folder
from biaskit.templates.bbq_agree import check_agreement, slot_genders, word_gender
from biaskit.templates.bbq_data import CATEGORIES, INTERSECTIONAL, TEXT_COLUMNS, bundled_dir, parse_slot_lists
from biaskit.templates.sheet import read_sheet

LIST_COLUMNS = ("Names", "Lexical_diversity")
USED = ("translated", "validated")
MARKER = "bbq_translation.json"
_SLOT = re.compile(r"\{\{[^{}]*\}\}")


def _read(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        rows = [{k: (v or "") for k, v in r.items() if k is not None} for r in reader]
        return list(reader.fieldnames or []), rows


def _files(root: Path) -> dict[str, Path]:
    files = {cat: root / f"new_templates - {cat}.csv" for cat in CATEGORIES}
    missing = [p.name for p in files.values() if not p.is_file()] + ([] if (root / "vocabulary.csv").is_file() else ["vocabulary.csv"])
    if missing:
        raise BiaskitError("E413", f"BBQ templates folder {root} lacks files", value=missing, fix="give BBQ's templates/ folder whole")
    return {**files, "vocabulary": root / "vocabulary.csv"}


def bbq_sheet_rows(templates_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """One sheet row per translatable cell of the folder (default: the bundled copy), in file and row order."""
    root = Path(templates_dir) if templates_dir else bundled_dir()
    rows: list[dict[str, Any]] = []
    for stem, path in _files(root).items():
        _, records = _read(path)
        columns = ("Name",) if stem == "vocabulary" else (*TEXT_COLUMNS, *LIST_COLUMNS)
        for n, r in enumerate(records, start=2):
            if stem != "vocabulary" and not r.get("Ambiguous_Context"):
                continue
            for c in columns:
                if r.get(c, "").strip():
                    rows.append({"template_id": f"bbq/{stem}/{n}/{c}", "category": r.get("Category", stem), "source": r[c]})
    return rows


def template_genders(templates_dir: str | Path | None = None) -> dict[str, dict[str, set[str]]]:
    """``bbq/<file>/<record>`` -> the genders that can fill each gendered slot of that template row
    (:func:`biaskit.templates.bbq_agree.slot_genders`); rows without one are left out."""
    root = Path(templates_dir) if templates_dir else bundled_dir()
    files = _files(root)
    _, vocab = _read(files["vocabulary"])
    names = _read(root / "vocabulary_proper_names.csv")[1] if (root / "vocabulary_proper_names.csv").is_file() else []
    out: dict[str, dict[str, set[str]]] = {}
    for stem, path in files.items():
        if stem == "vocabulary" or stem in INTERSECTIONAL:
            continue
        for n, r in enumerate(_read(path)[1], start=2):
            proper = r.get("Proper_nouns_only", "").strip().upper() == "TRUE"
            genders = slot_genders(stem, proper, len(r.get("Names", "").strip()) > 1, vocab, names)
            if genders:
                out[f"bbq/{stem}/{n}"] = genders
    return out


def _check(where: str, column: str, source: str, text: str, genders: dict[str, set[str]] | None = None) -> None:
    if column in TEXT_COLUMNS or column == "Name":
        want, got = Counter(_SLOT.findall(source)), Counter(_SLOT.findall(text))
        if want != got:
            raise BiaskitError(
                "E417",
                f"{where}: the translation does not keep the slots of the source",
                value={"source": sorted(want.elements()), "translation": sorted(got.elements())},
                fix="keep every {{...}} slot of the source, as often, spelled as in the source",
            )
        check_agreement(text, genders or {}, where)
        return
    if source.lstrip().startswith("["):  # an intersectional Names list: ["man", "woman"]
        try:
            ok = isinstance(ast.literal_eval(text), list) and len(ast.literal_eval(text)) == len(ast.literal_eval(source))
        except (ValueError, SyntaxError):
            ok = False
        if not ok:
            raise BiaskitError("E417", f"{where}: the list does not keep the source's form", value=text, fix=f"write it like {source}")
        return
    try:
        want_keys, got_keys = set(parse_slot_lists(source, where, column)), set(parse_slot_lists(text, where, column, strict=True))
    except BiaskitError as exc:
        raise BiaskitError("E417", exc.what, value=exc.value, options=exc.options, fix=exc.fix) from None
    if want_keys != got_keys:
        raise BiaskitError(
            "E417", f"{where}: the translation does not keep the lists of the source", value=sorted(got_keys), options=sorted(want_keys)
        )


def read_translations(sheet: str | Path, language: str, base: str | Path | None = None) -> tuple[dict[str, str], Counter]:
    """``template_id -> translated text`` of the cells to use (status translated/validated), each checked."""
    rows = read_sheet(sheet)
    if rows and language not in rows[0]:
        raise BiaskitError("E417", f"{sheet}: no column for language {language!r}", value=sorted(rows[0]), fix="pick a language column of the sheet")
    sources = {r["template_id"]: r["source"] for r in bbq_sheet_rows(base)}
    genders = template_genders(base)
    out: dict[str, str] = {}
    counts: Counter = Counter()
    for i, r in enumerate(rows, start=2):
        tid, text = r.get("template_id", ""), r.get(language, "")
        where = f"{sheet}: row {i} ({tid}, {language})"
        if tid not in sources:
            raise BiaskitError("E417", f"{where}: not a cell of the BBQ templates", value=tid, fix="export a fresh sheet and keep template_id")
        status = r.get(f"{language}_status", "") or "draft"
        counts[status if text else "empty"] += 1
        if not text or status not in USED:
            continue
        _check(where, tid.rsplit("/", 1)[1], sources[tid], text, genders.get(tid.rsplit("/", 1)[0]))
        out[tid] = text
    return out, counts


def _translated_csv(path: Path, stem: str, cells: dict[str, str], groups: dict[str, str]) -> str:
    fields, records = _read(path)
    if stem == "vocabulary" and "gender" not in fields:  # declared, so that expand bbq and the translator see it
        fields = [*fields, "gender"]
        for r in records:
            r["gender"] = word_gender(r) or ""
    for n, r in enumerate(records, start=2):
        for c in fields:
            tid = f"bbq/{stem}/{n}/{c}"
            if tid in cells:
                r[c] = cells[tid]
        for c in ("Known_stereotyped_groups", "Known_stereotyped_race"):  # groups that name vocabulary words
            if stem != "vocabulary" and r.get(c, "").startswith("["):
                try:
                    old = ast.literal_eval(r[c])
                except (ValueError, SyntaxError):
                    continue
                if isinstance(old, list) and any(g in groups for g in old):
                    r[c] = json.dumps([groups.get(g, g) for g in old], ensure_ascii=False)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    w.writerows(records)
    return buf.getvalue()


def import_bbq_sheet(sheet: str | Path, language: str, out: str | Path, base: str | Path | None = None, *, overwrite: bool = False) -> Counter:
    """Write the ``language`` copy of the BBQ templates folder ``base`` (default: the bundled one) into ``out``."""
    root = Path(base) if base else bundled_dir()
    cells, counts = read_translations(sheet, language, root)
    _, vocab = _read(root / "vocabulary.csv")
    groups = {r["Name"]: cells[f"bbq/vocabulary/{n}/Name"] for n, r in enumerate(vocab, start=2) if f"bbq/vocabulary/{n}/Name" in cells}
    files = _files(root)

    def fill(tmp: Path) -> None:
        for stem, path in files.items():
            write_text(tmp / path.name, _translated_csv(path, stem, cells, groups))
        for extra in sorted(root.iterdir()):
            if extra.is_file() and extra.name not in {p.name for p in files.values()} and not extra.name.startswith("."):
                write_text(tmp / extra.name, extra.read_text(encoding="utf-8"))

    claim = claim_folder(out, MARKER, "bbq translation", overwrite=overwrite)
    write_owned_folder(claim, fill, {"language": language, "sheet": str(sheet), "cells": len(cells)})
    counts["used"] = len(cells)
    return counts
