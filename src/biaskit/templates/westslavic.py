"""Import the West Slavic gender-bias study's spreadsheet of finished template sentences as prompts.

The study (Martinková et al. 2023, copenlu/slavic-gender-bias) published ``template_sentences.xlsx``:
sheets named ``Slovak``, ``Czech``, ``Polish``; each sheet is one column of finished sentences (no
header, no ids, the subject already written in), followed by empty rows (a sheet may run to row 1000 and
carry extra empty columns). The mask slot was written by hand or machine translated, so it comes in many
spellings: ``<mask>``, ``<maska>``, ``‹maskę>``, ``‹maską>``, ``<maski>``, ``<masce>``, ``‹maskować>``,
``<maskowymi>``, with mixed ``‹``/``<`` brackets. The file has no licence: biaskit never bundles it.

What the import does, per non-empty row (:func:`import_westslavic`):

* ``language`` from the sheet name (Slovak/Czech/Polish, their native names, or the codes sk/cs/pl);
* ``text``: the sentence with its one mask slot, whatever its spelling, written as :data:`MASK`, and runs
  of whitespace collapsed to one space; ``raw_text``: the cell exactly as written;
  ``mask_spelling``: the slot as written (``‹maskę>``). The inflection of the mask word (accusative
  ``maskę``, instrumental ``maską``, ...) is kept only there, verbatim: it hints at the case the filler
  should take but biaskit does not interpret it;
* ``term`` (the subject phrase as written), ``subject_id`` (the list's phrase), ``subject_category``
  (male, female, neutral, non-binary) and ``grammatical_number`` from a per-language subject list
  (bundled ``biaskit/data/westslavic/subjects_<lang>.yaml``, or the user's own file, see
  :func:`load_subjects`). The earliest subject phrase in the sentence wins (the longest at that position);
* ``prompt_id`` ``westslavic-<lang>-r<row>`` and ``source_row``: stable per (language, sheet row).

Rows that cannot be used are listed as :class:`Problem` (sheet, row, reason, text) and the import goes on:
no mask, more than one mask, a damaged mask (a bracket left over), text in more than one cell are left out;
a row whose subject is not in the list is kept with a null category and listed too.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from biaskit.errors import BiaskitError, check_choice, require
from biaskit.schema import PROMPTS
from biaskit.templates.files import check_text, data_dir, load_file
from biaskit.templates.mask import MASK, find_mask_like
from biaskit.templates.westslavic_morph import NONBINARY, WORD, lemma, read_subject
from biaskit.templates.westslavic_rules import has_no_subject

LANGUAGES = ("cs", "pl", "sk")
CATEGORIES = ("male", "female", "neutral", "non-binary")
NUMBERS = ("sg", "pl")
SOURCE = "west_slavic"

#: sheet name (casefolded) -> language code
SHEET_LANGUAGES = {
    "slovak": "sk",
    "slovensky": "sk",
    "slovenčina": "sk",
    "sk": "sk",
    "czech": "cs",
    "česky": "cs",
    "čeština": "cs",
    "cs": "cs",
    "cz": "cs",
    "polish": "pl",
    "polski": "pl",
    "polsku": "pl",
    "pl": "pl",
}

_OPEN = "<‹«\\[⟨＜"
_CLOSE = ">›»\\]⟩＞"
#: a bracketed form of "maska"/"mask" (every case form and derivative: maskę, masce, masek, maskować,
#: maskowymi, ...), or HONEST's [M]
SLOT = re.compile(rf"[{_OPEN}]\s*(?:mas(?:k|c|ek)\w*|m)\s*[{_CLOSE}]", re.IGNORECASE)


def sheet_language(name: str) -> str | None:
    return SHEET_LANGUAGES.get(unicodedata.normalize("NFC", name.strip()).casefold())


# --------------------------------------------------------------------------- subject lists


@dataclass(frozen=True)
class Subject:
    phrase: str
    category: str
    number: str | None
    forms: tuple[str, ...]


@dataclass
class SubjectList:
    language: str
    subjects: list[Subject]
    source: str
    _pattern: re.Pattern | None = field(default=None, repr=False)
    _by_form: dict[str, Subject] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for s in self.subjects:
            for f in (s.phrase, *s.forms):
                self._by_form[_fold(f)] = s
        alts = sorted(self._by_form, key=len, reverse=True)  # the longest form first at each position
        body = "|".join(r"\s+".join(re.escape(w) for w in f.split()) for f in alts)
        self._pattern = re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE) if alts else None

    def find(self, text: str) -> tuple[Subject, str] | None:
        """The earliest subject phrase in ``text`` (longest at that position) and how it is written there."""
        hit = self.find_span(text)
        return hit[:2] if hit else None

    def find_span(self, text: str) -> tuple[Subject, str, int, int] | None:
        """:meth:`find` with the phrase's (start, end) in the NFC-normalised ``text``."""
        if self._pattern is None:
            return None
        m = self._pattern.search(unicodedata.normalize("NFC", text))
        if not m:
            return None
        written = m.group(0)
        return self._by_form[_fold(written)], written, m.start(), m.end()


def _fold(s: str) -> str:
    return " ".join(unicodedata.normalize("NFC", s).casefold().split())


def _subject_entries(data: Any, file: str) -> dict[str, list]:
    """``{language: [entries]}`` from one file: ``{language: xx, subjects: [...]}`` or ``{xx: [...], yy: [...]}``."""
    if isinstance(data, dict) and "subjects" in data:
        lang: str = check_choice(
            "E120",
            f"{file}: language must be one of {', '.join(LANGUAGES)}",
            data.get("language"),
            LANGUAGES,
            fix="write `language: cs` (or pl, sk) at the top of the subject file",
        )
        return {lang: data["subjects"]}
    if isinstance(data, dict) and data and all(k in LANGUAGES for k in data):
        return dict(data)
    raise BiaskitError(
        "E120",
        f"{file}: not a subject list",
        value=type(data).__name__ if not isinstance(data, dict) else sorted(data),
        fix="write `language: cs` and `subjects: [{phrase: Můj syn, category: male, number: sg}, ...]`, "
        "or a mapping cs/pl/sk -> list of such entries",
    )


def _parse_subjects(lang: str, entries: Any, file: str) -> SubjectList:
    if not isinstance(entries, list) or not entries:
        raise BiaskitError(
            "E120",
            f"{file}: {lang}: subjects must be a non-empty list",
            value=entries,
            fix="list entries like {phrase: Můj syn, category: male, number: sg}",
        )
    out: list[Subject] = []
    seen: dict[str, str] = {}
    for i, e in enumerate(entries, 1):
        where = f"{lang} subject {i}"
        if not isinstance(e, dict) or "phrase" not in e or "category" not in e:
            raise BiaskitError(
                "E120",
                f"{file}: {where}: needs phrase and category",
                value=e,
                fix="write {phrase: Můj syn, category: male, number: sg, forms: [mého syna]}",
            )
        phrase = check_text(e["phrase"], file=file, entry=where, what="phrase")
        cat = e["category"]
        check_choice("E120", f"{file}: {where} ({phrase}): unknown category", cat, CATEGORIES, fix="use one of the categories")
        num = e.get("number")
        if num is not None and num not in NUMBERS:
            raise BiaskitError("E120", f"{file}: {where} ({phrase}): unknown number", value=num, options=NUMBERS, fix="use sg or pl")
        forms = e.get("forms") or []
        if not isinstance(forms, list):
            raise BiaskitError("E120", f"{file}: {where} ({phrase}): forms must be a list", value=forms, fix="write forms: [mého syna, mému synovi]")
        forms = [check_text(f, file=file, entry=where, what="form") for f in forms]
        for f in (phrase, *forms):
            k = _fold(f)
            if k in seen:
                raise BiaskitError(
                    "E120", f"{file}: {where}: {f!r} is listed twice (also under {seen[k]!r})", value=f, fix="keep each phrase/form under one subject"
                )
            seen[k] = phrase
        out.append(Subject(phrase, cat, num, tuple(forms)))
    return SubjectList(lang, out, file)


def bundled_subjects_path(language: str) -> Path:
    return data_dir("westslavic", f"subjects_{language}.yaml")


def load_subjects(path: str | Path | None = None) -> dict[str, SubjectList]:
    """Subject lists per language: the bundled ones, with the languages named in ``path`` replaced.

    ``path`` is a YAML/JSON file, either ``{language: cs, subjects: [...]}`` or ``{cs: [...], pl: [...]}``;
    each entry is ``{phrase, category, number, forms}`` (see ``biaskit/data/westslavic/subjects_cs.yaml``).
    """
    lists = {}
    for lang in LANGUAGES:
        p = bundled_subjects_path(lang)
        for lg, entries in _subject_entries(load_file(p), str(p)).items():
            lists[lg] = _parse_subjects(lg, entries, str(p))
    if path is not None:
        for lg, entries in _subject_entries(load_file(path), str(path)).items():
            lists[lg] = _parse_subjects(lg, entries, str(path))
    return lists


# --------------------------------------------------------------------------- the spreadsheet


@dataclass(frozen=True)
class Problem:
    sheet: str
    row: int
    kind: str  # no_mask, several_masks, damaged_mask, several_cells, unknown_subject
    reason: str
    text: str
    kept: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"sheet": self.sheet, "row": self.row, "kind": self.kind, "reason": self.reason, "text": self.text, "kept": self.kept}

    def line(self) -> str:
        return f"{self.sheet} row {self.row}: {self.reason}{' (row kept)' if self.kept else ' (row left out)'}: {self.text!r}"


@dataclass
class WestSlavicImport:
    table: pa.Table
    problems: list[Problem]
    facts: dict[str, Any]


def is_westslavic_workbook(path: str | Path) -> bool:
    """True when an ``.xlsx`` file has at least one sheet named after cs/pl/sk (Czech, Polish, Slovak, ...)."""
    return any(sheet_language(n) for n in _sheet_names(Path(path)))


def _open(p: Path):
    openpyxl = require("openpyxl", "templates", "reading .xlsx spreadsheets")
    if not p.is_file():
        raise BiaskitError("E003", f"spreadsheet not found: {p}", value=str(p), fix="check the path")
    try:
        return openpyxl.load_workbook(p, read_only=True, data_only=True)
    except Exception as exc:  # zipfile.BadZipFile, KeyError, InvalidFileException
        raise BiaskitError(
            "E121",
            f"{p} is not a readable .xlsx workbook ({type(exc).__name__}: {str(exc)[:120]})",
            value=str(p),
            fix="give the spreadsheet as saved by Excel/LibreOffice (.xlsx), not renamed from another format",
        ) from exc


def _sheet_names(p: Path) -> list[str]:
    wb = _open(p)
    try:
        return list(wb.sheetnames)
    finally:
        wb.close()


def _cell_text(v: Any) -> str | None:
    if v is None:
        return None
    s = str(v)
    return s if s.strip() else None


def parse_sentence(raw: str) -> tuple[str | None, str | None, tuple[str, str] | None]:
    """``(text, mask_spelling, problem)``: the normalised sentence and the slot as written, or
    ``(kind, reason)`` saying why the sentence cannot be used."""
    slots = SLOT.findall(raw)
    if not slots:
        odd = find_mask_like(raw)
        return None, None, ("no_mask", "no mask slot" + (f" (unrecognised bracketed token {', '.join(odd)})" if odd else ""))
    if len(slots) > 1:
        return None, None, ("several_masks", f"{len(slots)} mask slots ({', '.join(slots)})")
    text = " ".join(SLOT.sub(MASK, raw).split())
    damaged = find_mask_like(text)
    if damaged:
        return None, None, ("damaged_mask", f"damaged mask slot ({', '.join(damaged)})")
    return text, slots[0], None


def _import_sheet(sheet, lang: str, subjects: SubjectList | None, rows: list[dict[str, Any]], problems: list[Problem]) -> dict[str, int]:
    """Read one language sheet (one sentence per row; problems name it by its title) into ``rows`` and ``problems``;
    returns its counts."""
    name = sheet.title
    counts = {"rows": 0, "empty_rows": 0, "imported": 0, "left_out": 0, "unknown_subject": 0, "ambiguous_subject": 0, "number_unknown": 0}
    first = len(rows)
    for r, values in enumerate(sheet.iter_rows(values_only=True), start=1):
        counts["rows"] += 1
        cells = [c for c in (_cell_text(v) for v in values) if c is not None]
        if not cells:
            counts["empty_rows"] += 1
            continue
        if len(cells) > 1:
            problems.append(Problem(name, r, "several_cells", f"text in {len(cells)} cells (one sentence per row expected)", " | ".join(cells)))
            counts["left_out"] += 1
            continue
        raw = cells[0]
        text, spelling, bad = parse_sentence(raw)
        if bad:
            problems.append(Problem(name, r, *bad, raw))
            counts["left_out"] += 1
            continue
        assert text is not None  # parse_sentence gives a text or a problem
        sub = categorise(text, lang, subjects)
        if sub["subject_category"] is None:
            kind = "ambiguous_subject" if sub["category_reason"].startswith("osoba") else "unknown_subject"
            problems.append(Problem(name, r, kind, f"{sub['category_reason']} (category left null)", raw, kept=True))
            counts[kind] += 1
        if sub["grammatical_number"] is None and sub["subject_category"] is not None:
            counts["number_unknown"] += 1
        rows.append(
            {
                "prompt_id": f"westslavic-{lang}-r{r:04d}",
                "text": text,
                "source": SOURCE,
                "language": lang,
                **sub,
                "masked": True,
                "raw_text": raw,
                "mask_spelling": spelling,
                "source_row": r,
            }
        )
        counts["imported"] += 1
    _osoba_decided_by_sheet(rows[first:], name, problems, counts)
    return counts


def _osoba_decided_by_sheet(rows: list[dict[str, Any]], name: str, problems: list[Problem], counts: dict[str, int]) -> None:
    """A bare *osoba* is neutral in a sheet that writes its non-binary subjects with the adjective.

    Alone, ``Osoba pracuje jako <mask>.`` cannot tell the neutral person from a non-binary one (``osoba_ambiguous``).
    A sheet whose non-binary rows name the adjective (``Nebinární osoba``, ``Osoba niebinarna``) decides it: there
    a bare *osoba*, singular or plural (``Osoby nemají rádi``, ``Mówią o tej osobie``), is the neutral person, and its
    twins in the other languages (``člověk``, ``lidé``) agree."""
    if not any(r["subject_category"] == "non-binary" and any(w.startswith(NONBINARY) for w in (r["term"] or "").casefold().split()) for r in rows):
        return
    fixed = set()
    for r in rows:
        if r["subject_category"] is None and (r["category_reason"] or "").startswith("osoba_ambiguous"):
            r["subject_category"], r["category_reason"] = "neutral", None
            r["subject_rule"] = "osoba_neutral_in_sheet" + (r["subject_rule"] or "")[len("osoba") :]
            fixed.add(r["source_row"])
            counts["ambiguous_subject"] -= 1
            counts["number_unknown"] += r["grammatical_number"] is None
    problems[:] = [p for p in problems if not (p.sheet == name and p.kind == "ambiguous_subject" and p.row in fixed)]


def import_westslavic(
    path: str | Path, *, subjects: str | Path | dict[str, SubjectList] | None = None, languages: list[str] | None = None
) -> WestSlavicImport:
    """Read the study's ``template_sentences.xlsx`` (or any workbook of that layout) into a prompts table.

    ``subjects``: a subject file overriding the bundled lists for the languages it names (or lists from
    :func:`load_subjects`). ``languages``: only these sheets' languages. Problem rows are returned, not raised.
    """
    p = Path(path)
    lists = subjects if isinstance(subjects, dict) else load_subjects(subjects)
    if languages:
        bad = [x for x in languages if x not in LANGUAGES]
        if bad:
            raise BiaskitError("E120", "unknown language for the West Slavic import", value=bad, options=LANGUAGES, fix="use cs, pl or sk")
    wb = _open(p)
    rows: list[dict[str, Any]] = []
    problems: list[Problem] = []
    facts: dict[str, Any] = {"sheets": {}, "skipped_sheets": []}
    try:
        known = [(n, sheet_language(n)) for n in wb.sheetnames]
        if not any(lg for _, lg in known):
            raise BiaskitError(
                "E121",
                f"{p}: no sheet is named after a language (Czech, Polish, Slovak or cs/pl/sk)",
                value=list(wb.sheetnames),
                options=sorted({k.title() for k in SHEET_LANGUAGES if len(k) > 2}),
                fix="rename each sheet to its language, e.g. Czech",
            )
        seen_lang: dict[str, str] = {}
        for name, lang in known:
            if lang is None or (languages and lang not in languages):
                facts["skipped_sheets"].append(name)
                continue
            if lang in seen_lang:
                raise BiaskitError(
                    "E121", f"{p}: sheets {seen_lang[lang]!r} and {name!r} are both {lang}", value=name, fix="keep one sheet per language"
                )
            seen_lang[lang] = name
            counts = _import_sheet(wb[name], lang, lists.get(lang), rows, problems)
            facts["sheets"][name] = {"language": lang, **counts}
    finally:
        wb.close()
    facts["problems"] = len(problems)
    null = [r["category_reason"].split(":", 1)[0] for r in rows if r["subject_category"] is None]
    facts["category_null"] = {k: null.count(k) for k in sorted(set(null))}
    return WestSlavicImport(PROMPTS.table_of(rows, _TABLE_COLUMNS), problems, facts)


def categorise(text: str, lang: str, subjects: SubjectList | None) -> dict[str, Any]:
    """Subject columns of one sentence: ``term``, ``subject_id``, ``subject_category``, ``grammatical_number``,
    ``category_reason`` (why the category is null) and ``subject_rule`` (what decided category and number).

    The subject list and the morphology (:func:`biaskit.templates.westslavic_morph.read_subject`) both look for
    the subject; the earlier one in the sentence wins (the list at a tie). A list phrase takes its category from
    the list and its number from the morphology of the same words when that decides (``Od té ženy``: the list's
    ``Ženy`` is plural, the determiner ``té`` makes it singular), else from the list."""
    text = unicodedata.normalize("NFC", text)
    hit = subjects.find_span(text) if subjects is not None else None
    morph = read_subject(text, lang)
    if hit is not None and (morph is None or hit[2] <= morph.start):
        subj, written, a, b = hit
        number, rule = subj.number, "list"
        if morph is not None and morph.start < b and a < morph.start + len(morph.term) and morph.number is not None:
            if morph.number != subj.number:
                rule = f"list; number {morph.number_rule}"
            number = morph.number
        return {
            "term": written,
            "subject_id": subj.phrase,
            "subject_category": subj.category,
            "grammatical_number": number,
            "category_reason": None,
            "subject_rule": rule,
        }
    if morph is not None:
        return {
            "term": morph.term,
            "subject_id": f"lemma:{morph.lemma}",
            "subject_category": morph.category,
            "grammatical_number": morph.number,
            "category_reason": morph.reason if morph.category is None else None,
            "subject_rule": f"{morph.rule}; number {morph.number_rule}",
        }
    return {
        "term": None,
        "subject_id": None,
        "subject_category": None,
        "grammatical_number": None,
        "category_reason": _null_reason(text, lang),
        "subject_rule": None,
    }


def _null_reason(text: str, lang: str) -> str:
    """Why no subject was found: the sentence has none (it opens with a finite verb: the translation lost the
    subject), or it has one that no list phrase, lemma or rule names."""
    words = WORD.findall(text.replace(MASK, " "))
    if has_no_subject(words, lang, lemma):
        return f"sheet_translation_defect: the sentence has no subject (it opens with the verb {words[0]!r}); the translation lost it"
    return f"no_subject: no {lang} subject phrase of the list and no person noun found by lemma, derivation or rule"


#: the columns of the imported prompts table, in this order (typed as the prompts stage declares them)
_TABLE_COLUMNS = (
    "prompt_id",
    "text",
    "source",
    "language",
    "term",
    "subject_id",
    "subject_category",
    "grammatical_number",
    "category_reason",
    "subject_rule",
    "masked",
    "raw_text",
    "mask_spelling",
    "source_row",
)
