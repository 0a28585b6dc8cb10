"""Gendered fill-mask templates with grammatical agreement (cs, pl, sk, en; Martinkova et al. 2023).

A *template set* is one YAML/JSON file per language::

    language: cs
    status: translated            # default status of every template (see STATUSES)
    translator: biaskit team
    validator: null               # who validated the translations (null = nobody yet)
    subjects:
      - id: male                  # subject id (unique)
        category: male            # social category: male, female, neutral, non-binary
        gender: m                 # grammatical gender of the subject noun: m, f, n
        number: sg                # grammatical number: sg, pl
        forms: {nom: ten muž, gen: toho muže, dat: tomu muži, acc: toho muže}
    templates:
      - id: work-02
        category: work            # attributes, work, perceived_role, preferences (or your own)
        text: "{Subject} {m:pracoval|f:pracovala|m.pl:pracovali|f.pl:pracovaly} jako <mask>."
        status: validated         # optional per-template status, translator, validator, notes

Template text language:

* ``<mask>`` (:data:`biaskit.templates.MASK`): the one slot the model fills; exactly one per template.
* ``{subject}`` / ``{subject.dat}``: the subject in a case (``nom`` when none is given) as listed in the
  subject's ``forms``; ``{Subject...}`` capitalises the first letter (sentence start).
* ``{m:byl|f:byla|n:bylo|m.pl:byli|f.pl:byly}``: agreement alternatives chosen by the subject's
  *grammatical* gender and number, not its social category ("nebinární osoba" is feminine). Selectors:
  ``m``/``f``/``n`` (singular of that gender), ``m.pl``/``f.pl``/``n.pl``, ``sg``, ``pl``, ``*`` (any); the
  most specific matching selector wins. Every alternative set must resolve for every subject of the set,
  so a forgotten plural form is an error, not a wrong sentence.

Only templates whose status is usable (``source``, ``translated``, ``validated`` by default) are expanded;
``machine`` (machine-translated, unchecked), ``draft`` and ``rejected`` ones are counted and skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from biaskit.errors import BiaskitError, check_choice
from biaskit.templates.files import check_text, data_dir, load_file, short_hash
from biaskit.templates.mask import MASK, count_masks, find_mask_like, normalize_mask

SUBJECT_CATEGORIES = ("male", "female", "neutral", "non-binary")
GENDERS = ("m", "f", "n")
NUMBERS = ("sg", "pl")
CATEGORIES = ("attributes", "work", "perceived_role", "preferences")
STATUSES = ("source", "draft", "machine", "translated", "validated", "rejected")
USABLE_STATUSES = ("source", "translated", "validated")
STARTER_LANGUAGES = ("en", "cs", "pl", "sk")

_SLOT = re.compile(r"\{([^{}]*)\}")
_SUBJECT = re.compile(r"^(subject|Subject)(?:\.([a-z]+))?$")
_SELECTOR = re.compile(r"^(?:\*|sg|pl|[mfn]|[mfn]\.(?:sg|pl))$")


@dataclass(frozen=True)
class Subject:
    id: str
    category: str
    gender: str
    number: str
    forms: dict[str, str]

    def form(self, case: str = "nom") -> str:
        return self.forms[case]


@dataclass
class Template:
    id: str
    category: str
    text: str
    status: str
    translator: str | None = None
    validator: str | None = None
    notes: str | None = None
    subjects: list[str] | None = None  # restrict to these subject ids


@dataclass
class TemplateSet:
    language: str
    subjects: list[Subject]
    templates: list[Template]
    path: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def subject(self, sid: str) -> Subject:
        for s in self.subjects:
            if s.id == sid:
                return s
        raise KeyError(sid)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"language": self.language, **{k: v for k, v in self.meta.items() if k != "language"}}
        out["subjects"] = [
            {"id": s.id, "category": s.category, "gender": s.gender, "number": s.number, "forms": dict(s.forms)} for s in self.subjects
        ]
        tpls = []
        for t in self.templates:
            d: dict[str, Any] = {"id": t.id, "category": t.category, "text": t.text, "status": t.status}
            for k in ("translator", "validator", "notes", "subjects"):
                v = getattr(t, k)
                if v not in (None, "", []):
                    d[k] = v
            tpls.append(d)
        out["templates"] = tpls
        return out


# --------------------------------------------------------------------------- parsing the template language


@dataclass(frozen=True)
class _Part:
    kind: str  # "text", "subject", "agree"
    value: Any


def parse_template(text: str, *, where: str = "template") -> list[_Part]:
    """Split template text into literal text, subject slots and agreement alternatives (E040 on errors)."""
    parts: list[_Part] = []
    pos = 0
    for m in _SLOT.finditer(text):
        if m.start() > pos:
            parts.append(_Part("text", text[pos : m.start()]))
        body = m.group(1)
        sm = _SUBJECT.match(body)
        if sm:
            parts.append(_Part("subject", (sm.group(2) or "nom", sm.group(1) == "Subject")))
        elif ":" in body:
            alts: dict[str, str] = {}
            for alt in body.split("|"):
                sel, sep, form = alt.partition(":")
                sel = sel.strip()
                if not sep or not _SELECTOR.match(sel):
                    raise BiaskitError(
                        "E040",
                        f"{where}: bad agreement alternative {alt!r} in {{{body}}}",
                        value=text,
                        options=["m", "f", "n", "m.pl", "f.pl", "n.pl", "sg", "pl", "*"],
                        fix="write alternatives as {m:byl|f:byla|m.pl:byli} (selector:form, separated by |)",
                    )
                key = sel[:-3] if sel.endswith(".sg") else sel  # m.sg == m
                if key in alts:
                    raise BiaskitError(
                        "E040",
                        f"{where}: selector {sel!r} given twice in {{{body}}}",
                        value=text,
                        fix="keep one form per selector (m and m.sg mean the same)",
                    )
                alts[key] = form
            parts.append(_Part("agree", alts))
        else:
            raise BiaskitError(
                "E040",
                f"{where}: unknown placeholder {{{body}}}",
                value=text,
                options=["{subject}", "{Subject}", "{subject.<case>}", "{m:...|f:...}"],
                fix="use {subject} / {Subject.dat} for the subject or {m:..|f:..} for agreement",
            )
        pos = m.end()
    if pos < len(text):
        parts.append(_Part("text", text[pos:]))
    stray = [p.value for p in parts if p.kind == "text" and ("{" in p.value or "}" in p.value)]
    if stray:
        raise BiaskitError("E040", f"{where}: unbalanced brace", value=text, fix="close every { with } (and remove stray ones)")
    return parts


def _resolve(alts: dict[str, str], s: Subject) -> str | None:
    for key in (f"{s.gender}.{s.number}" if s.number == "pl" else s.gender, s.number, "*"):
        if key in alts:
            return alts[key]
    return None


def render(text: str | list[_Part], subject: Subject, *, where: str = "template") -> str:
    """Fill a template for one subject (cases and agreement); E040 if a form is missing."""
    parts = parse_template(text, where=where) if isinstance(text, str) else text
    out = []
    for p in parts:
        if p.kind == "text":
            out.append(p.value)
        elif p.kind == "subject":
            case, cap = p.value
            if case not in subject.forms:
                raise BiaskitError(
                    "E040",
                    f"{where}: subject {subject.id!r} has no {case!r} form",
                    value=sorted(subject.forms),
                    fix=f"add {case}: ... to the forms of subject {subject.id!r}",
                )
            f = subject.forms[case]
            out.append(f[:1].upper() + f[1:] if cap else f)
        else:
            form = _resolve(p.value, subject)
            if form is None:
                sel = f"{subject.gender}.pl" if subject.number == "pl" else subject.gender
                raise BiaskitError(
                    "E040",
                    f"{where}: no agreement form for subject {subject.id!r} ({sel})",
                    value="|".join(f"{k}:{v}" for k, v in p.value.items()),
                    fix=f"add {sel}:... (or {subject.number}:... / *:...) to the alternatives",
                )
            out.append(form)
    return "".join(out)


def check_template_text(text: str, subjects: Sequence[Subject], *, where: str, require_subject: bool = True) -> str:
    """Normalise known mask spellings and check one template text against a language's subjects.

    Checks: exactly one mask, no damaged mask tokens, known placeholders, a subject slot (unless
    ``require_subject=False``), every case and agreement form available for every subject.
    Returns the normalised text.
    """
    text = normalize_mask(text)
    bad = find_mask_like(text)
    if bad:
        raise BiaskitError("E040", f"{where}: unrecognised mask-like token(s) {bad}", value=text, fix=f"write the mask slot as {MASK}")
    n = count_masks(text)
    if n != 1:
        raise BiaskitError("E040", f"{where}: {n} mask slots; a template needs exactly one", value=text, fix=f"keep exactly one {MASK}")
    if text != text.strip() or "  " in text:
        raise BiaskitError("E040", f"{where}: stray whitespace", value=text, fix=f"use {' '.join(text.split())!r}")
    parts = parse_template(text, where=where)
    if require_subject and not any(p.kind == "subject" for p in parts):
        raise BiaskitError("E040", f"{where}: no subject slot", value=text, fix="add {subject} or {Subject} where the person goes")
    for s in subjects:
        render(parts, s, where=where)
    return text


# --------------------------------------------------------------------------- loading


def _opt_text(v: Any, *, file: str, entry: str, what: str) -> str | None:
    return None if v in (None, "") else check_text(v, file=file, entry=entry, what=what)


_SET_KEYS = (
    "language",
    "name",
    "version",
    "source_language",
    "status",
    "translator",
    "validator",
    "validated_by_native_speakers",
    "notes",
    "subjects",
    "templates",
)
#: top-level keys kept as the set's ``meta`` (in this order)
_META_KEYS = ("name", "version", "source_language", "status", "translator", "validator", "validated_by_native_speakers", "notes")
_SUBJECT_KEYS = ("id", "category", "gender", "number", "forms")
_TEMPLATE_KEYS = ("id", "category", "text", "status", "translator", "validator", "notes", "subjects")


@dataclass(frozen=True)
class _EntryKind:
    """A kind of entry of a template set file: its name in messages (``what``), the keys it may have and the layout
    an error shows."""

    what: str
    keys: tuple[str, ...]
    layout: str


_SUBJECT_ENTRY = _EntryKind("subject", _SUBJECT_KEYS, "{id, category, gender, number, forms}")
_TEMPLATE_ENTRY = _EntryKind("template", _TEMPLATE_KEYS, "{id, category, text}")


def _unknown_keys(d: dict, allowed: Sequence[str], *, file: str, entry: str) -> None:
    unknown = set(d) - set(allowed)
    if unknown:
        raise BiaskitError("E040", f"{file}: {entry}: unknown key(s) {sorted(unknown)}", value=d, options=list(allowed), fix="remove them")


def _check_set_header(obj: Any, file: str) -> tuple[str, str]:
    """The top level of a template set: a mapping of known keys with a language, a valid default status and
    lists of subjects and templates. Returns the language and the default status."""
    if not isinstance(obj, dict):
        raise BiaskitError(
            "E040",
            f"{file}: top level must be a mapping with language, subjects, templates",
            value=type(obj).__name__,
            fix="see biaskit/data/templates/cs.yaml",
        )
    unknown = set(obj) - set(_SET_KEYS)
    if unknown:
        raise BiaskitError(
            "E040",
            f"{file}: unknown top-level key(s) {sorted(unknown)}",
            value=sorted(unknown),
            fix="remove them (see biaskit/data/templates/cs.yaml for the layout)",
        )
    lang = check_text(obj.get("language"), file=file, entry="language", what="language code")
    default_status = obj.get("status", "draft")
    check_choice("E040", f"{file}: unknown status", default_status, STATUSES, fix="use a valid status")
    for key, layout in (("subjects", "{id, category, gender, number, forms}"), ("templates", "{id, category, text}")):
        if obj.get(key) is not None and not isinstance(obj[key], list):
            raise BiaskitError("E040", f"{file}: {key} must be a list", value=obj[key], fix=f"write {key}: as a YAML list of mappings ({layout})")
    return lang, default_status


def _entry_head(x: Any, entry: str, file: str, kind: _EntryKind, seen: set[str]) -> tuple[str, str, str]:
    """The checks every ``subjects``/``templates`` entry starts with: a mapping with only the keys of its ``kind``,
    an id not in ``seen`` (then added to it) and a category. Returns (id, ``entry`` naming the id, category)."""
    what, keys, layout = kind.what, kind.keys, kind.layout
    if not isinstance(x, dict):
        raise BiaskitError("E040", f"{file}: {entry}: must be a mapping", value=x, fix=f"write {layout}")
    _unknown_keys(x, keys, file=file, entry=entry)
    xid = check_text(x.get("id"), file=file, entry=entry, what=f"{what} id")
    entry = f"{entry} ({xid!r})"
    if xid in seen:
        raise BiaskitError("E040", f"{file}: {entry}: duplicate {what} id", value=xid, fix=f"give every {what} its own id")
    seen.add(xid)
    return xid, entry, check_text(x.get("category"), file=file, entry=entry, what=f"{what} category")


def _subject_from(s: Any, entry: str, file: str, seen: set[str]) -> Subject:
    """One ``subjects`` entry (its id is added to ``seen``, the ids so far)."""
    sid, entry, cat = _entry_head(s, entry, file, _SUBJECT_ENTRY, seen)
    check_choice(
        "E040",
        f"{file}: {entry}: grammatical gender must be m, f or n",
        s.get("gender"),
        GENDERS,
        fix="give the grammatical gender of the subject noun (not the social category)",
    )
    check_choice("E040", f"{file}: {entry}: number must be sg or pl", s.get("number"), NUMBERS, fix="write number: sg")
    forms = s.get("forms")
    if not isinstance(forms, dict) or "nom" not in forms:
        raise BiaskitError(
            "E040", f"{file}: {entry}: forms must be a mapping with at least nom", value=forms, fix="write forms: {nom: ten muž, dat: tomu muži}"
        )
    for case, f in forms.items():
        check_text(f, file=file, entry=f"{entry} form {case!r}", what="subject form")
    return Subject(sid, cat, s["gender"], s["number"], dict(forms))


def _subject_ids_of(t: dict, entry: str, file: str, known: set[str]) -> list[str] | None:
    """A template's ``subjects`` restriction: None (every subject) or a list of known subject ids."""
    only = t.get("subjects")
    if only is not None and (not isinstance(only, list) or not all(isinstance(x, str) for x in only)):
        raise BiaskitError(
            "E040",
            f"{file}: {entry}: subjects must be a list of subject ids",
            value=only,
            options=sorted(known),
            fix="write subjects: [male, female] (or leave it out for every subject)",
        )
    if only is not None:
        bad = [x for x in only if x not in known]
        if bad:
            raise BiaskitError(
                "E040", f"{file}: {entry}: unknown subject id(s) {bad}", value=bad, options=sorted(known), fix="use subject ids from this file"
            )
    return only


def _template_from(t: Any, entry: str, file: str, obj: dict, subjects: list[Subject], default_status: str, tids: set[str]) -> Template:
    """One ``templates`` entry, its text checked against the subjects it applies to (its id is added to ``tids``);
    translator and validator default to the set's."""
    tid, entry, cat = _entry_head(t, entry, file, _TEMPLATE_ENTRY, tids)
    status = t.get("status", default_status)
    check_choice("E040", f"{file}: {entry}: unknown status", status, STATUSES, fix="use a valid status")
    only = _subject_ids_of(t, entry, file, {s.id for s in subjects})
    subs = [s for s in subjects if only is None or s.id in only]
    text = check_template_text(check_text(t.get("text"), file=file, entry=entry, what="template text"), subs, where=f"{file}: {entry}")
    return Template(
        tid,
        cat,
        text,
        status,
        _opt_text(t.get("translator", obj.get("translator")), file=file, entry=entry, what="translator"),
        _opt_text(t.get("validator", obj.get("validator")), file=file, entry=entry, what="validator"),
        _opt_text(t.get("notes"), file=file, entry=entry, what="notes"),
        list(only) if only is not None else None,
    )


def template_set_from_dict(obj: Any, file: str = "<template set>") -> TemplateSet:
    """Validate and build a :class:`TemplateSet` (errors are E040 naming the file and entry)."""
    lang, default_status = _check_set_header(obj, file)
    seen: set[str] = set()
    subjects = [_subject_from(s, f"subjects[{i}]", file, seen) for i, s in enumerate(obj.get("subjects") or [])]
    if not subjects:
        raise BiaskitError("E040", f"{file}: no subjects", fix="list the subjects (one per social category and number)")
    tids: set[str] = set()
    templates = [_template_from(t, f"templates[{i}]", file, obj, subjects, default_status, tids) for i, t in enumerate(obj.get("templates") or [])]
    if not templates:
        raise BiaskitError("E040", f"{file}: no templates", fix="list templates under templates:")
    meta = {k: obj[k] for k in _META_KEYS if k in obj}
    return TemplateSet(lang, subjects, templates, file, meta)


def load_template_set(path: str | Path) -> TemplateSet:
    """Load and validate one template-set file (YAML or JSON)."""
    return template_set_from_dict(load_file(path), str(path))


def starter_set(language: str) -> TemplateSet:
    """The bundled starter set for ``en``, ``cs``, ``pl`` or ``sk`` (cs/pl/sk not yet validated by native speakers)."""
    check_choice(
        "E040",
        "no bundled starter set for this language",
        language,
        STARTER_LANGUAGES,
        fix="give a template-set file instead (YAML with subjects and templates, see docs/templates.md; "
        "for import-sheet: --base FILE with the language's subjects)",
    )
    return load_template_set(data_dir("templates", f"{language}.yaml"))


def starter_path(language: str) -> Path:
    starter_set(language)  # validates the name
    return data_dir("templates", f"{language}.yaml")


# --------------------------------------------------------------------------- expansion


@dataclass
class TemplateStats:
    rows: int = 0
    templates_used: int = 0
    skipped_by_status: dict[str, int] = field(default_factory=dict)
    languages: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


#: the columns of :func:`expand_template_sets`' table (all strings but ``masked``)
_PROMPT_COLUMNS = (
    "prompt_id",
    "text",
    "source",
    "language",
    "term",
    "template",
    "subject_category",
    "template_category",
    "template_id",
    "masked",
    "subject_id",
    "grammatical_gender",
    "grammatical_number",
    "translation_status",
    "translator",
    "validator",
)


def _check_selection(statuses: set[str], numbers: set[str] | None) -> None:
    bad = sorted(statuses - set(STATUSES))
    if bad:
        raise BiaskitError("E005", f"unknown status(es) {bad}", value=bad, options=STATUSES, fix="use valid statuses")
    if numbers is not None and numbers - set(NUMBERS):
        raise BiaskitError(
            "E005", "unknown grammatical number(s)", value=sorted(numbers - set(NUMBERS)), options=NUMBERS, fix="use --number sg or --number pl"
        )


def _check_categories(sets: list[TemplateSet], cats: set[str] | None, tcats: set[str] | None) -> None:
    """Every subject / template category asked for is used by some set."""
    for wanted, have, flag in (
        (cats, {s.category for ts in sets for s in ts.subjects}, "--subject-category"),
        (tcats, {t.category for ts in sets for t in ts.templates}, "--category"),
    ):
        if wanted is not None and wanted - have:
            raise BiaskitError(
                "E005",
                f"unknown {flag} value(s): no subject or template in the sets has them",
                value=sorted(wanted - have),
                options=sorted(have),
                fix=f"use {flag} with values from the template sets",
            )


def _check_not_seen(ts: TemplateSet, seen: dict[tuple[str, str], str]) -> None:
    """No template id of ``ts`` was given before for its language (``seen``: (language, id) -> file)."""
    for t in ts.templates:
        key = (ts.language, t.id)
        if key in seen:
            raise BiaskitError(
                "E040",
                f"template {t.id!r} ({ts.language}) is given twice: in {seen[key]} and {ts.path}",
                value=t.id,
                fix="pass each language's template set once, or rename the template id",
            )
        seen[key] = ts.path


def _prompt_row(ts: TemplateSet, t: Template, s: Subject, text: str) -> dict[str, Any]:
    return {
        "prompt_id": f"tpl-{ts.language}-{t.id}-{s.id}-{short_hash(ts.language, t.id, s.id, text, size=4)}",
        "text": text,
        "source": "templates",
        "language": ts.language,
        "term": s.forms["nom"],
        "template": t.text,
        "subject_category": s.category,
        "template_category": t.category,
        "template_id": t.id,
        "masked": True,
        "subject_id": s.id,
        "grammatical_gender": s.gender,
        "grammatical_number": s.number,
        "translation_status": t.status,
        "translator": t.translator,
        "validator": t.validator,
    }


def _template_rows(ts: TemplateSet, t: Template, cats: set[str] | None, nums: set[str] | None) -> list[dict[str, Any]]:
    """One row per subject the template applies to and the filters keep."""
    parts = parse_template(t.text, where=f"{ts.path}: {t.id}")
    rows = []
    for s in ts.subjects:
        if t.subjects is not None and s.id not in t.subjects:
            continue
        if cats is not None and s.category not in cats:
            continue
        if nums is not None and s.number not in nums:
            continue
        rows.append(_prompt_row(ts, t, s, render(parts, s, where=f"{ts.path}: {t.id}")))
    return rows


def expand_template_sets(
    sets: Iterable[TemplateSet | str | Path],
    *,
    statuses: Iterable[str] = USABLE_STATUSES,
    subject_categories: Iterable[str] | None = None,
    template_categories: Iterable[str] | None = None,
    numbers: Iterable[str] | None = None,
) -> tuple[pa.Table, TemplateStats]:
    """Expand template sets into a prompts-stage table: one row per (template, subject), ``masked=True``.

    Templates whose status is not in ``statuses`` are skipped and counted per status in the stats.
    """
    statuses = set(statuses)
    cats = set(subject_categories) if subject_categories is not None else None
    tcats = set(template_categories) if template_categories is not None else None
    nums = set(numbers) if numbers is not None else None
    _check_selection(statuses, nums)
    loaded = [ts if isinstance(ts, TemplateSet) else load_template_set(ts) for ts in sets]
    _check_categories(loaded, cats, tcats)
    stats = TemplateStats()
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, str], str] = {}
    for ts in loaded:
        stats.languages.append(ts.language)
        _check_not_seen(ts, seen)
        for t in ts.templates:
            if t.status not in statuses:
                stats.skipped_by_status[t.status] = stats.skipped_by_status.get(t.status, 0) + 1
                continue
            if tcats is not None and t.category not in tcats:
                continue
            stats.templates_used += 1
            rows += _template_rows(ts, t, cats, nums)
    stats.rows = len(rows)
    schema = pa.schema([(k, pa.bool_() if k == "masked" else pa.string()) for k in _PROMPT_COLUMNS])
    return pa.Table.from_pylist(rows, schema=schema), stats
