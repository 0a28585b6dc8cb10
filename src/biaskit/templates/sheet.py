"""Translation sheets: export source templates for translators (CSV/XLSX), import the filled sheet back.

Sheet layout (one row per template)::

    template_id | category | source | cs | cs_status | cs_translator | cs_validator | cs_notes | pl | pl_status | ...

``source`` is the source-language text (``{Subject}``, ``{sg:is|pl:are}``, ``<mask>`` kept as they are);
translators write the target text with the same slot syntax and the target language's own agreement
alternatives (see :mod:`biaskit.templates.gendered`). ``<lang>_status`` is one of
:data:`~biaskit.templates.gendered.STATUSES`; only ``translated``/``validated`` rows are used by default.

On import every non-empty translation is checked (known mask spellings such as ``<maska>``, ``‹maskę>``,
``[M]`` are normalised; anything else mask-like, a missing subject slot, a broken agreement marker or a
form missing for a subject is an E041 error naming the sheet row, template id and language).

Machine translation is a pluggable step: a :class:`Translator` (``translate(texts, source, target)``);
:class:`CommandTranslator` runs any command that reads lines on stdin and writes translated lines on
stdout (e.g. a local Argos/Marian/llama.cpp wrapper). Machine output gets status ``machine`` and is never
used until a person changes the status.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml

from biaskit.errors import BiaskitError, check_choice, require
from biaskit.io import read_text_utf8, write_text_atomic
from biaskit.output import atomic_path, write_text
from biaskit.schema import check_columns
from biaskit.spreadsheet import neutralize, unneutralize
from biaskit.templates.gendered import STATUSES, Template, TemplateSet, check_template_text, load_template_set
from biaskit.templates.mask import MASK

FIELDS = ("status", "translator", "validator", "notes")
BASE_COLUMNS = ("template_id", "category", "source")


def sheet_columns(languages: Sequence[str]) -> list[str]:
    cols = list(BASE_COLUMNS)
    for lang in languages:
        cols.append(lang)
        cols += [f"{lang}_{f}" for f in FIELDS]
    return cols


# --------------------------------------------------------------------------- machine translation


class Translator(Protocol):
    """Anything that translates a batch of lines (used only to pre-fill sheets, status ``machine``)."""

    name: str

    def translate(self, texts: list[str], source: str, target: str) -> list[str]: ...


@dataclass
class CommandTranslator:
    """Translate by running a command: one line per text on stdin, one translated line per text on stdout.

    ``{source}`` and ``{target}`` in the command are replaced by the language codes, e.g.
    ``CommandTranslator("argos-translate --from {source} --to {target}")``.
    """

    command: str
    name: str = "command"
    timeout: float = 600.0

    def translate(self, texts: list[str], source: str, target: str) -> list[str]:
        cmd = shlex.split(self.command.replace("{source}", source).replace("{target}", target))
        try:
            proc = subprocess.run(cmd, input="\n".join(texts) + "\n", capture_output=True, text=True, timeout=self.timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise self._error(f"command failed: {exc}") from exc
        if proc.returncode != 0:
            raise self._error(f"command exited with {proc.returncode}: {proc.stderr.strip()[:200]}")
        lines = proc.stdout.splitlines()
        if len(lines) != len(texts):
            raise self._error(f"returned {len(lines)} lines for {len(texts)} texts", "the command must print exactly one line per input line")
        return lines

    def _error(self, problem: str, fix: str = "check the command runs on its own: echo 'Hello' | <command>") -> BiaskitError:
        """E041 "machine translation ``problem``" naming the command."""
        return BiaskitError("E041", f"machine translation {problem}", value=self.command, fix=fix)


_PROTECT = re.compile(r"\{[^{}]*\}|" + re.escape(MASK))


def _protect(text: str) -> tuple[str, list[str]]:
    slots: list[str] = []

    def sub(m: re.Match) -> str:
        slots.append(m.group(0))
        return f"⟦{len(slots)}⟧"

    return _PROTECT.sub(sub, text), slots


def _restore(text: str, slots: list[str]) -> str | None:
    for i, s in enumerate(slots, 1):
        tok = f"⟦{i}⟧"
        if text.count(tok) != 1:
            return None
        text = text.replace(tok, s)
    return text


def machine_translate(rows: list[dict[str, Any]], language: str, translator: Translator, *, source_language: str = "en") -> int:
    """Fill empty ``language`` cells of sheet ``rows`` with machine translations (status ``machine``).

    Slots and the mask are shielded as ``⟦n⟧`` tokens; if the output loses one, the translation goes
    to the notes column and the cell stays empty. Returns how many cells were filled.
    """
    todo = [r for r in rows if not (r.get(language) or "").strip()]
    if not todo:
        return 0
    protected = [_protect(r["source"]) for r in todo]
    out = translator.translate([p[0] for p in protected], source_language, language)
    filled = 0
    for r, (_, slots), mt in zip(todo, protected, out):
        restored = _restore(mt, slots)
        if restored is None:
            r[f"{language}_notes"] = f"machine translation lost a slot: {mt}"
            r[f"{language}_status"] = "draft"
            continue
        r[language] = restored
        r[f"{language}_status"] = "machine"
        r[f"{language}_translator"] = f"mt:{translator.name}"
        filled += 1
    return filled


# --------------------------------------------------------------------------- export


def sheet_rows(source: TemplateSet, targets: Sequence[TemplateSet | str] = ()) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows of a translation sheet: source templates, pre-filled from existing target sets.

    ``targets`` are template sets (their translations fill the cells) or bare language codes (empty columns).
    """
    langs = [t.language if isinstance(t, TemplateSet) else t for t in targets]
    rows = []
    for tpl in source.templates:
        row: dict[str, Any] = {"template_id": tpl.id, "category": tpl.category, "source": tpl.text}
        for t, lang in zip(targets, langs):
            existing = None
            if isinstance(t, TemplateSet):
                existing = next((x for x in t.templates if x.id == tpl.id), None)
            row[lang] = existing.text if existing else ""
            for f in FIELDS:
                row[f"{lang}_{f}"] = (getattr(existing, f) or "") if existing else ""
        rows.append(row)
    return rows, langs


def write_sheet(rows: list[dict[str, Any]], languages: Sequence[str], path: str | Path) -> Path:
    """Write a sheet atomically as ``.csv`` (UTF-8 with BOM, opens in Excel) or ``.xlsx``."""
    p = Path(path)
    cols = sheet_columns(languages)
    suffix = p.suffix.lower()
    if suffix == ".csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({c: neutralize(r.get(c, "")) for c in cols})

        return write_text(p, buf.getvalue(), encoding="utf-8-sig")
    if suffix == ".xlsx":
        openpyxl = require("openpyxl", "templates", "XLSX translation sheets")
        wb = openpyxl.Workbook()
        ws = wb.active
        ws.title = "templates"
        ws.append(cols)
        for r in rows:
            ws.append([neutralize(r.get(c, "") or "") for c in cols])  # openpyxl stores "=..." as a formula otherwise
        ws.freeze_panes = "D2"
        help_ws = wb.create_sheet("README")
        for line in _HELP.strip().splitlines():
            help_ws.append([line])
        with atomic_path(p) as tmp:
            wb.save(tmp)
        return p
    raise BiaskitError("E041", "unsupported sheet type", value=str(p), options=[".csv", ".xlsx"], fix="name the sheet .csv or .xlsx")


_HELP = f"""
biaskit translation sheet
One row per template. Write the translation in the column named by the language code.
Keep the slots: {MASK} (exactly once), {{Subject}} / {{subject.dat}} (subject in a case), and write agreement
alternatives for the target language, e.g. {{m:byl|f:byla|m.pl:byli|f.pl:byly}}.
Status column: draft, machine, translated, validated, rejected. Only translated/validated are used.
Put your name in the translator column; the native speaker who checked a row goes in the validator column.
"""


def read_sheet(path: str | Path) -> list[dict[str, Any]]:
    """Read a CSV or XLSX sheet into row dicts (all cells as stripped strings, ``""`` for empty)."""
    p = Path(path)
    if not p.is_file():
        raise BiaskitError("E041", "sheet not found", value=str(p), fix="check the path")
    suffix = p.suffix.lower()
    if suffix == ".csv":
        text = read_text_utf8(p, "translation sheet")
        rows = list(csv.DictReader(io.StringIO(text)))
        header = next(csv.reader(io.StringIO(text)), [])
    elif suffix == ".xlsx":
        openpyxl = require("openpyxl", "templates", "XLSX translation sheets")
        wb = openpyxl.load_workbook(p, read_only=True, data_only=True)
        ws = wb["templates"] if "templates" in wb.sheetnames else wb.worksheets[0]
        it = ws.iter_rows(values_only=True)
        header = [str(h).strip() if h is not None else "" for h in next(it, [])]
        rows = [{h: ("" if v is None else str(v)) for h, v in zip(header, vals)} for vals in it if any(v not in (None, "") for v in vals)]
        wb.close()
    else:
        raise BiaskitError("E041", "unsupported sheet type", value=str(p), options=[".csv", ".xlsx"], fix="give a .csv or .xlsx sheet")
    fix = "export a fresh sheet with `biaskit templates export-sheet` and keep its header row"
    check_columns(header, BASE_COLUMNS, f"{p}: sheet lacks column(s)", fix=fix, code="E041")

    return [{k: unneutralize((v or "").strip()) if isinstance(v, str) else v for k, v in r.items() if k is not None} for r in rows]


def import_sheet(path: str | Path, language: str, base: TemplateSet | str | Path) -> tuple[TemplateSet, dict[str, int]]:
    """Build the ``language`` template set from a filled sheet, using the subjects of ``base``.

    ``base`` is an existing template set for the language (the bundled starter set or your own file);
    its subjects and metadata are kept, its templates replaced by the sheet's non-empty translations.
    Returns the new set and counts (``imported``, ``empty``, per status).
    """
    if not isinstance(base, TemplateSet):
        base = load_template_set(base)
    if base.language != language:
        raise BiaskitError(
            "E041",
            f"the base template set is for {base.language!r}, not {language!r}",
            value=base.path,
            fix=f"pass a {language} template file as the base (it provides the subject forms)",
        )
    rows = read_sheet(path)
    if rows and language not in rows[0]:
        langs = [c for c in rows[0] if c not in BASE_COLUMNS and "_" not in c]
        raise BiaskitError(
            "E041", f"{path}: no column for language {language!r}", value=langs, options=langs, fix="pick a language column of the sheet"
        )
    counts: dict[str, int] = {"imported": 0, "empty": 0}
    templates: list[Template] = []
    seen: set[str] = set()
    for i, r in enumerate(rows, start=2):  # row 1 is the header
        tid = r.get("template_id", "")
        where = f"{path}: row {i} (template {tid!r}, {language})"
        if not tid:
            raise BiaskitError("E041", f"{where}: empty template_id", value=r, fix="keep the template_id column filled")
        if tid in seen:
            raise BiaskitError("E041", f"{where}: duplicate template_id", value=tid, fix="keep one row per template")
        seen.add(tid)
        text = r.get(language, "")
        if not text:
            counts["empty"] += 1
            continue
        status = r.get(f"{language}_status", "") or "draft"
        check_choice("E041", f"{where}: unknown status", status, STATUSES, fix="use one of the valid statuses")
        try:
            text = check_template_text(text, base.subjects, where=where)
        except BiaskitError as exc:
            raise BiaskitError("E041", exc.what, value=exc.value, options=exc.options, fix=exc.fix) from None
        templates.append(
            Template(
                tid,
                r.get("category") or "uncategorised",
                text,
                status,
                r.get(f"{language}_translator") or None,
                r.get(f"{language}_validator") or None,
                r.get(f"{language}_notes") or None,
            )
        )
        counts["imported"] += 1
        counts[status] = counts.get(status, 0) + 1
    if not templates:
        raise BiaskitError(
            "E041",
            f"{path}: no {language} translations in the sheet",
            value=counts,
            fix=f"fill the {language!r} column (and {language}_status) first",
        )
    meta = {k: v for k, v in base.meta.items() if k in ("name", "version", "source_language")}
    meta["status"] = "draft"  # rows without a status in the sheet
    meta["notes"] = f"imported from translation sheet {Path(path).name}; translator/validator/status per template"
    return TemplateSet(language, base.subjects, templates, str(path), meta), counts


def save_template_set(ts: TemplateSet, path: str | Path) -> Path:
    """Write a template set as YAML (or JSON by suffix), atomically."""
    p = Path(path)
    d = ts.to_dict()
    if p.suffix.lower() == ".json":
        return write_text_atomic(p, json.dumps(d, ensure_ascii=False, indent=2) + "\n")
    return write_text_atomic(p, yaml.safe_dump(d, allow_unicode=True, sort_keys=False, width=200))
