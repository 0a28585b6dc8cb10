"""BBQ (Parrish et al., Findings of ACL 2022): reading the published template CSVs and vocabularies.

The bundled copy (``biaskit/data/bbq``, CC BY 4.0, see its ``LICENSE.md``) holds one CSV per category
(``new_templates - <Category>.csv``), ``vocabulary.csv`` (Category, Pilot_include, SubCat, Name, Info) and
``vocabulary_proper_names.csv`` (Name, First_last, gender, ethnicity). Every template row is checked here,
before anything is expanded: a slot that is not one of the category's slots, a ``NAME``/``WORD`` list that
does not parse, or a category missing from the vocabulary gives a coded error naming the file and the row.
"""

from __future__ import annotations

import ast
import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

from biaskit.errors import BiaskitError

#: the 11 categories of the paper, in the order of its Table 1
CATEGORIES: tuple[str, ...] = (
    "Age",
    "Disability_status",
    "Gender_identity",
    "Nationality",
    "Physical_appearance",
    "Race_ethnicity",
    "Race_x_SES",
    "Race_x_gender",
    "Religion",
    "SES",
    "Sexual_orientation",
)
INTERSECTIONAL = ("Race_x_SES", "Race_x_gender")
#: examples per category in the published dataset (paper, Table 1; 58,492 in all)
PUBLISHED_COUNTS: dict[str, int] = {
    "Age": 3680,
    "Disability_status": 1556,
    "Gender_identity": 5672,
    "Nationality": 3080,
    "Physical_appearance": 1576,
    "Race_ethnicity": 6880,
    "Race_x_SES": 11160,
    "Race_x_gender": 15960,
    "Religion": 1200,
    "SES": 6864,
    "Sexual_orientation": 864,
}
#: the "unknown" answer phrasings the BBQ generator draws from
UNKNOWN_OPTIONS: tuple[str, ...] = (
    "Unknown",
    "Cannot be determined",
    "Can't be determined",
    "Not answerable",
    "Not known",
    "Not enough info",
    "Not enough information",
    "Cannot answer",
    "Can't answer",
    "Undetermined",
)
TEXT_COLUMNS = (
    "Ambiguous_Context",
    "Disambiguating_Context",
    "Question_negative_stereotype",
    "Question_non_negative",
    "Answer_negative",
    "Answer_non_negative",
)
_SLOTS = {"NAME1", "NAME2", "WORD1", "WORD2"}
_SLOTS_INTERSECTIONAL = {"Race_x_gender": _SLOTS | {"GEN1", "GEN2"}, "Race_x_SES": _SLOTS | {"OCC1", "OCC2"}}
_SLOT = re.compile(r"\{\{([^{}]*)\}\}")
_LIST = re.compile(r"^\s*(?:\{\{)?(NAME1|NAME2|WORD1|WORD2)(?:\}\})?\s*:(.*)$", re.S)
_KEY = re.compile(r"^\s*(?:\{\{)?[A-Za-z_]+\d*(?:\}\})?\s*:\s*\[")


def bundled_dir() -> Path:
    """The bundled copy of BBQ's ``templates/`` folder."""
    return Path(__file__).resolve().parents[1] / "data" / "bbq"


@dataclass
class Template:
    """One row of a BBQ template CSV (a question template, ``Q_id``), with its source row for errors."""

    category: str
    row: dict[str, str]
    source_row: int
    file: str
    names: dict[str, list] = field(default_factory=dict)
    words: dict[str, list[str]] = field(default_factory=dict)
    groups: list[str] = field(default_factory=list)
    var2_info: list[str] = field(default_factory=list)

    def get(self, column: str) -> str:
        return self.row.get(column, "") or ""

    @property
    def proper_names(self) -> bool:
        return self.get("Proper_nouns_only").strip().upper() == "TRUE"

    @property
    def where(self) -> str:
        return f"{self.file} row {self.source_row} (Q_id {self.get('Q_id')!r})"


@dataclass
class BBQData:
    """Templates per category and the two vocabularies."""

    templates: dict[str, list[Template]]
    vocab: list[dict[str, str]]
    names: list[dict[str, str]]
    sources: list[str]
    notes: list[str] = field(default_factory=list)


def parse_slot_lists(text: str, where: str, column: str, *, strict: bool = False, notes: list[str] | None = None) -> dict[str, list[str]]:
    """``"WORD1: [a, b]; WORD2: [c]"`` -> ``{"WORD1": ["a", "b"], "WORD2": ["c"]}``, read as BBQ's generator reads it.

    The generator splits on ``;`` and keeps a ``NAME2``/``WORD2`` list only when no segment after it names
    another list, so a ``;`` inside a list (Disability_status Q_id 4) or ``NAME2`` written before ``NAME1``
    (Q_id 19) leaves the second list empty and the row gives no examples; the published counts depend on it.
    Such readings are added to ``notes``; ``strict=True`` makes them errors (E411). A segment naming no known
    list (``WORD3: [...]``) or a text without a first list is E411 always.
    """
    out: dict[str, list[str]] = {}
    dropped: list[str] = []
    for part in text.split(";"):
        m = _LIST.match(part)
        if m:
            items = [w.strip() for w in m.group(2).replace("[", "").replace("]", "").split(",") if w.strip()]
            if not items:
                raise BiaskitError("E411", f"{where}: the {column} list {m.group(1)} is empty", value=part.strip(), fix="give at least one item")
            out[m.group(1)] = items
        elif _KEY.match(part) or (part.strip() and strict):
            raise BiaskitError(
                "E411",
                f"{where}: the {column} list does not parse",
                value=part.strip(),
                options=["NAME1: [a, b]", "NAME2: [c, d]", "WORD1: [x, y]", "WORD2: [z]"],
                fix="write each list as SLOT: [item, item] and separate the lists with ';' (never inside a list)",
            )
        elif part.strip():
            dropped.append(f"fragment {part.strip()!r} ignored")
        if not (m and m.group(1)[-1] == "2"):
            for key in ("NAME2", "WORD2"):
                if key in out:
                    dropped.append(key)
                    del out[key]
    if not any(k in out for k in ("NAME1", "WORD1")):
        raise BiaskitError(
            "E411",
            f"{where}: the {column} text has no NAME1 or WORD1 list",
            value=text,
            fix="give NAME1: [...] (Names) or WORD1: [...] (Lexical_diversity)",
        )
    if dropped:
        note = f"{where}: {column} read as BBQ's generator reads it: {'; '.join(d if d.startswith('fragment') else d + ' left empty by a later segment' for d in dict.fromkeys(dropped))}"
        if strict:
            raise BiaskitError("E411", note, value=text, fix="put the second list last and use ',' inside lists")
        if notes is not None:
            notes.append(note)
    return out


def _is_words(v: object) -> bool:
    return isinstance(v, str) or (isinstance(v, list) and bool(v) and all(isinstance(w, str) for w in v))


def _literal_list(text: str, where: str, column: str, *, nested: bool = False) -> list:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = None
    if not isinstance(value, list) or not all((_is_words if nested else lambda v: isinstance(v, str))(v) for v in value):
        raise BiaskitError(
            "E411", f"{where}: {column} is not a list of strings", value=text, options=['["old"]', '["F"]'], fix='write it as ["group", ...]'
        )
    return value


def check_template(t: Template, vocab_categories: set[str], *, strict: bool = False, notes: list[str] | None = None) -> None:
    """The checks of one template row (E410 unknown slot, E411 list, E412 vocabulary category missing)."""
    allowed = _SLOTS_INTERSECTIONAL.get(t.category, _SLOTS)
    for column in TEXT_COLUMNS:
        for slot in _SLOT.findall(t.get(column)):
            if slot not in allowed:
                raise BiaskitError(
                    "E410",
                    f"{t.where}: unknown slot {{{{{slot}}}}} in {column}",
                    value=slot,
                    options=sorted(allowed),
                    fix="use one of the category's slots (or fix the spelling)",
                )
    if t.category in INTERSECTIONAL:
        if t.get("Names").strip():
            t.names = {"pair": _literal_list(t.get("Names"), t.where, "Names", nested=True)}
            t.var2_info = _literal_list(t.get("Var2_info"), t.where, "Var2_info")
            if len(t.names["pair"]) != 2 or len(t.var2_info) != 2 or t.get("Known_stereotyped_var2") not in t.var2_info:
                raise BiaskitError(
                    "E411",
                    f"{t.where}: Names and Var2_info need two entries each, Known_stereotyped_var2 one of Var2_info",
                    value=[t.get("Names"), t.get("Var2_info"), t.get("Known_stereotyped_var2")],
                    fix="give the two values of the second variable and their groups",
                )
        t.groups = _literal_list(t.get("Known_stereotyped_race"), t.where, "Known_stereotyped_race") if t.get("Known_stereotyped_race") else []
    else:
        if len(t.get("Names")) > 1:
            t.names = parse_slot_lists(t.get("Names"), t.where, "Names", strict=strict, notes=notes)
            if "NAME1" not in t.names or "NAME2" not in t.get("Names"):
                raise BiaskitError(
                    "E411", f"{t.where}: Names needs both NAME1 and NAME2", value=t.get("Names"), fix="give NAME1: [...]; NAME2: [...]"
                )
        t.groups = _literal_list(t.get("Known_stereotyped_groups"), t.where, "Known_stereotyped_groups")
    if len(t.get("Lexical_diversity")) > 1:
        t.words = parse_slot_lists(t.get("Lexical_diversity"), t.where, "Lexical_diversity", strict=strict, notes=notes)
        if "WORD1" not in t.words:
            raise BiaskitError("E411", f"{t.where}: Lexical_diversity has no WORD1 list", value=t.get("Lexical_diversity"), fix="give WORD1: [...]")
    needs_vocab = "Race_ethnicity" if t.category in INTERSECTIONAL else t.category
    uses_vocab = t.category in INTERSECTIONAL or not t.names
    if uses_vocab and not t.proper_names and needs_vocab not in vocab_categories:
        raise BiaskitError(
            "E412",
            f"{t.where}: the template takes its words from vocabulary category {needs_vocab!r}, which vocabulary.csv lacks",
            value=needs_vocab,
            options=sorted(vocab_categories),
            fix="add the category's words to vocabulary.csv or give the template a Names list",
        )


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8-sig") as fh:
        return [{k: (v or "") for k, v in row.items() if k is not None} for row in csv.DictReader(fh)]


def load_bbq(templates_dir: str | Path | None = None, categories: list[str] | None = None, *, strict: bool = False) -> BBQData:
    """Read and check the templates of ``categories`` (default: all 11) from ``templates_dir`` (default: the bundled copy).

    ``strict=True`` refuses (E411) the lists that BBQ's generator reads in part (see :func:`parse_slot_lists`);
    by default they are read as it reads them, so that the counts equal the published files, and
    ``BBQData.notes`` names each such row."""
    root = Path(templates_dir) if templates_dir is not None else bundled_dir()
    if not root.is_dir():
        raise BiaskitError("E413", "BBQ templates folder not found", value=str(root), fix="give the templates/ folder of BBQ (or leave it out)")
    wanted = list(categories or CATEGORIES)
    for cat in wanted:
        if cat not in CATEGORIES:
            raise BiaskitError("E414", "unknown BBQ category", value=cat, options=CATEGORIES, fix="pick categories from the list")
    paths = {"vocabulary.csv": root / "vocabulary.csv", "vocabulary_proper_names.csv": root / "vocabulary_proper_names.csv"}
    paths |= {cat: root / f"new_templates - {cat}.csv" for cat in wanted}
    missing = [name for name, p in paths.items() if not p.is_file()]
    if missing:
        raise BiaskitError(
            "E413", f"BBQ templates folder {root} lacks files", value=missing, fix="copy BBQ's templates/ folder whole (templates and vocabularies)"
        )
    vocab = [r for r in _read_csv(paths["vocabulary.csv"]) if r.get("Pilot_include", "") != "No"]
    names = _read_csv(paths["vocabulary_proper_names.csv"])
    vocab_categories = {r.get("Category", "") for r in vocab}
    templates: dict[str, list[Template]] = {}
    notes: list[str] = []
    for cat in wanted:
        rows = []
        for n, row in enumerate(_read_csv(paths[cat]), start=2):
            if not row.get("Ambiguous_Context", ""):
                continue  # the generator skips rows without a context (notes, blank lines)
            t = Template(cat, row, n, paths[cat].name)
            check_template(t, vocab_categories, strict=strict, notes=notes)
            rows.append(t)
        templates[cat] = rows
    return BBQData(templates, vocab, names, [str(p) for p in paths.values()], notes)
