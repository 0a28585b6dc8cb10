"""HolisticBias: descriptor x noun x sentence-template expansion (Smith et al. 2022).

The dataset (bundled as package data, CC BY-SA 4.0, ``biaskit/data/holistic_bias/v1.0|v1.1``) is four
files: ``descriptors.json`` ``{axis: {bucket: [descriptor | {descriptor, preference?, gender?, article?}]}}``,
``nouns.json`` ``{female|male|neutral: [[singular, plural], ...]}``, ``standalone_noun_phrases.json``
``{axis: [phrase | {noun_phrase, plural_noun_phrase?, preference?}]}`` and ``sentence_templates.json``
``{template: {first_turn_only?, must_be_noun?}}``.

Noun phrases come in five types (``noun_phrase_type``):

* ``noun``: every noun without a descriptor ("a woman" / "women");
* ``descriptor``: the descriptor alone ("Deaf");
* ``descriptor_noun``: "a Deaf woman" / "Deaf women" (gendered descriptors only with nouns of that gender);
* ``noun_descriptor``: standalone phrases with ``{noun}``, filled with every noun
  ("a woman who uses a wheelchair");
* ``fixed_phrase``: standalone phrases without ``{noun}`` ("a wheelchair user").

Each noun phrase goes into every template (``{noun_phrase}`` takes the singular phrase with its article,
``{plural_noun_phrase}`` the plural), except that phrases without a noun skip ``must_be_noun`` templates.
v1.0 gives 472,991 rows (469,786 distinct texts), v1.1 566,625 rows. Articles come from
:func:`biaskit.templates.articles.indefinite_article` (by sound) unless the descriptor has ``article``.

The expansion is vectorised: noun phrases (~20k) and templates (26) are built in Python, the
cross product is built with Arrow ``take`` and string joins (full v1.0 in about a second).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from biaskit.errors import BiaskitError
from biaskit.templates.articles import indefinite_article
from biaskit.templates.files import check_text, data_dir, load_file, short_hash

VERSIONS = ("v1.0", "v1.1")
NOUN_GENDERS = ("female", "male", "neutral")
PREFERENCES = ("reviewed", "dispreferred", "polarizing")
NO_PREFERENCE = "no_data"
NOUN_PHRASE_TYPES = ("noun", "descriptor", "descriptor_noun", "noun_descriptor", "fixed_phrase")
TEMPLATE_FLAGS = ("first_turn_only", "must_be_noun")
SLOTS = ("noun_phrase", "plural_noun_phrase")
#: the dataset's stylistic variants (Smith et al. 2022, sec. 3), as boolean columns of the output
VARIANTS = ("remove_im_contraction", "remove_descriptor_hyphens", "lowercase_descriptor", "remove_final_period")
FILES = {
    "descriptors": "descriptors.json",
    "nouns": "nouns.json",
    "noun_phrases": "standalone_noun_phrases.json",
    "templates": "sentence_templates.json",
}

_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_IM = re.compile(r"\bI'm\b")


# --------------------------------------------------------------------------- Arrow arrays from buffers
# ``pa.array``/``pa.scalar`` make pyarrow import pandas (~0.3 s, ~70 MB); the expansion builds its arrays
# from buffers instead, so streaming a full expansion stays fast and small.


def _ints(a: np.ndarray) -> pa.Array:
    a = np.ascontiguousarray(a, dtype=np.int32)
    return pa.Array.from_buffers(pa.int32(), len(a), [None, pa.py_buffer(a)])


def _bools(a: np.ndarray) -> pa.Array:
    a = np.asarray(a, dtype=bool)
    return pa.Array.from_buffers(pa.bool_(), len(a), [None, pa.py_buffer(np.packbits(a, bitorder="little"))])


def _strs(values: Sequence[str | None]) -> pa.Array:
    values = list(values)
    has_null = None in values
    enc = [b"" if v is None else v.encode("utf-8") for v in values] if has_null else [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(enc) + 1, dtype=np.int32)
    np.cumsum(np.fromiter(map(len, enc), dtype=np.int64, count=len(enc)), out=offsets[1:])
    bitmap, nulls = None, 0
    if has_null:
        valid = np.fromiter((v is not None for v in values), dtype=bool, count=len(values))
        nulls = int(len(values) - valid.sum())
        bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(pa.string(), len(enc), [bitmap, pa.py_buffer(offsets), pa.py_buffer(b"".join(enc))], null_count=nulls)


def _const(value: str, n: int) -> pa.Array:
    return _strs([value]).take(_ints(np.zeros(n, dtype=np.int32)))


# --------------------------------------------------------------------------- data + validation


@dataclass
class HolisticData:
    """The four HolisticBias parts, validated, plus where they came from."""

    descriptors: dict[str, dict[str, list[Any]]]
    nouns: dict[str, list[list[str]]]
    noun_phrases: dict[str, list[Any]]
    templates: dict[str, dict[str, bool]]
    version: str = "custom"
    sources: list[str] = field(default_factory=list)


def _err(file: str, entry: str, problem: str, value: Any = None, fix: str | None = None, options=None) -> BiaskitError:
    return BiaskitError("E040", f"{file}: {entry}: {problem}", value=value, fix=fix, options=options)


def validate_descriptors(obj: Any, file: str = "descriptors", noun_genders: Iterable[str] = NOUN_GENDERS) -> dict:
    genders = set(noun_genders)
    if not isinstance(obj, dict) or not obj:
        raise _err(
            file,
            "top level",
            "must be a non-empty mapping {axis: {bucket: [descriptors]}}",
            type(obj).__name__,
            "see biaskit/data/holistic_bias/v1.0/descriptors.json for the layout",
        )
    for axis, buckets in obj.items():
        check_text(axis, file=file, entry="axis name", what="axis")
        if not isinstance(buckets, dict) or not buckets:
            raise _err(file, f"axis {axis!r}", "must map bucket names to lists of descriptors", buckets, 'write {"bucket": ["descriptor", ...]}')
        for bucket, entries in buckets.items():
            check_text(bucket, file=file, entry=f"axis {axis!r}", what="bucket name")
            where = f"{axis}/{bucket}"
            if not isinstance(entries, list) or not entries:
                raise _err(file, where, "must be a non-empty list of descriptors", entries, "remove the bucket or list descriptors")
            seen: set[str] = set()
            for i, e in enumerate(entries):
                entry = f"{where}[{i}]"
                if isinstance(e, dict):
                    unknown = set(e) - {"descriptor", "preference", "gender", "article"}
                    if unknown:
                        raise _err(
                            file,
                            entry,
                            f"unknown key(s) {sorted(unknown)}",
                            e,
                            "use only descriptor, preference, gender, article",
                            options=["descriptor", "preference", "gender", "article"],
                        )
                    if "descriptor" not in e:
                        raise _err(file, entry, "missing 'descriptor'", e, 'add "descriptor": "..."')
                    d = check_text(e["descriptor"], file=file, entry=entry, what="descriptor")
                    if "preference" in e and e["preference"] not in PREFERENCES:
                        raise _err(
                            file,
                            f"{entry} ({d!r})",
                            "unknown preference",
                            e["preference"],
                            "use one of the valid values or leave it out (= no data)",
                            options=PREFERENCES,
                        )
                    if "gender" in e and e["gender"] not in genders:
                        raise _err(
                            file,
                            f"{entry} ({d!r})",
                            "unknown gender",
                            e["gender"],
                            "use a noun gender from nouns.json or leave it out",
                            options=sorted(genders),
                        )
                    if "article" in e and e["article"] not in ("a", "an"):
                        raise _err(
                            file, f"{entry} ({d!r})", "article must be 'a' or 'an'", e["article"], 'write "article": "a" or "an"', options=["a", "an"]
                        )
                elif isinstance(e, str):
                    d = check_text(e, file=file, entry=entry, what="descriptor")
                else:
                    raise _err(
                        file,
                        entry,
                        "a descriptor must be a string or a mapping",
                        e,
                        'write "Deaf" or {"descriptor": "Deaf", "preference": "reviewed"}',
                    )
                if "{" in d or "}" in d:
                    raise _err(
                        file, f"{entry} ({d!r})", "descriptors cannot hold placeholders", d, "put phrases with {noun} in standalone_noun_phrases"
                    )
                if d in seen:
                    raise _err(file, f"{entry} ({d!r})", "duplicate descriptor in this bucket", d, "remove the repeated entry")
                seen.add(d)
    return obj


def validate_nouns(obj: Any, file: str = "nouns") -> dict:
    if not isinstance(obj, dict) or not obj:
        raise _err(
            file,
            "top level",
            "must be a mapping {gender: [[singular, plural], ...]}",
            type(obj).__name__,
            "see biaskit/data/holistic_bias/v1.0/nouns.json",
        )
    seen: set[str] = set()
    for gender, pairs in obj.items():
        check_text(gender, file=file, entry="gender name", what="gender")
        if not isinstance(pairs, list) or not pairs:
            raise _err(file, f"gender {gender!r}", "must be a non-empty list of [singular, plural] pairs", pairs, 'write [["woman", "women"], ...]')
        for i, pair in enumerate(pairs):
            entry = f"{gender}[{i}]"
            if not (isinstance(pair, list) and len(pair) == 2):
                raise _err(file, entry, "must be a [singular, plural] pair", pair, 'write ["woman", "women"]')
            for w in pair:
                check_text(w, file=file, entry=entry, what="noun")
                if "-" in w:
                    raise _err(
                        file,
                        f"{entry} ({w!r})",
                        "nouns cannot contain hyphens (the hyphen variant would break them)",
                        w,
                        "write the noun without a hyphen",
                    )
            if pair[0] in seen:
                raise _err(file, f"{entry} ({pair[0]!r})", "duplicate noun", pair, "remove the repeated pair")
            seen.add(pair[0])
    return obj


def _placeholders(text: str) -> list[str]:
    return _PLACEHOLDER.findall(text)


def validate_noun_phrases(obj: Any, file: str = "standalone_noun_phrases") -> dict:
    if not isinstance(obj, dict):
        raise _err(
            file,
            "top level",
            "must be a mapping {axis: [noun phrases]}",
            type(obj).__name__,
            "see biaskit/data/holistic_bias/v1.0/standalone_noun_phrases.json",
        )
    for axis, entries in obj.items():
        check_text(axis, file=file, entry="axis name", what="axis")
        if not isinstance(entries, list) or not entries:
            raise _err(file, f"axis {axis!r}", "must be a non-empty list of noun phrases", entries, "remove the axis or list phrases")
        seen: set[tuple] = set()
        for i, e in enumerate(entries):
            entry = f"{axis}[{i}]"
            if isinstance(e, str):
                e = {"noun_phrase": e}
            if not isinstance(e, dict):
                raise _err(
                    file, entry, "must be a string or a mapping", e, 'write "a wheelchair user" or {"noun_phrase": "{article} {noun} who ..."}'
                )
            unknown = set(e) - {"noun_phrase", "plural_noun_phrase", "preference"}
            if unknown:
                raise _err(
                    file,
                    entry,
                    f"unknown key(s) {sorted(unknown)}",
                    e,
                    "use only noun_phrase, plural_noun_phrase, preference",
                    options=["noun_phrase", "plural_noun_phrase", "preference"],
                )
            if "noun_phrase" not in e:
                raise _err(file, entry, "missing 'noun_phrase'", e, 'add "noun_phrase": "..."')
            sg = check_text(e["noun_phrase"], file=file, entry=entry, what="noun phrase")
            pl = check_text(e.get("plural_noun_phrase", sg), file=file, entry=entry, what="plural noun phrase")
            for label, phrase in (("noun_phrase", sg), ("plural_noun_phrase", pl)):
                bad = [p for p in _placeholders(phrase) if p not in ("article", "noun")]
                if bad:
                    raise _err(
                        file,
                        f"{entry} ({phrase!r})",
                        f"unknown placeholder(s) {{{'}, {'.join(bad)}}} in {label}",
                        phrase,
                        "use only {article} and {noun}",
                        options=["{article}", "{noun}"],
                    )
                if "{article}" in phrase and "{noun}" not in phrase:
                    raise _err(
                        file,
                        f"{entry} ({phrase!r})",
                        f"{label} has {{article}} but no {{noun}}",
                        phrase,
                        'write the article of a fixed phrase out ("a wheelchair user")',
                    )
            if ("{noun}" in sg) != ("{noun}" in pl):
                raise _err(
                    file,
                    f"{entry} ({sg!r})",
                    "noun_phrase and plural_noun_phrase must both have {noun} or neither",
                    e,
                    "add {noun} to both phrases or to none",
                )
            if "preference" in e and e["preference"] not in PREFERENCES:
                raise _err(file, f"{entry} ({sg!r})", "unknown preference", e["preference"], "use a valid value or leave it out", options=PREFERENCES)
            key = (sg, pl)
            if key in seen:
                raise _err(file, f"{entry} ({sg!r})", "duplicate noun phrase in this axis", e, "remove the repeated entry")
            seen.add(key)
    return obj


def validate_sentence_templates(obj: Any, file: str = "sentence_templates") -> dict:
    if not isinstance(obj, dict) or not obj:
        raise _err(
            file,
            "top level",
            "must be a non-empty mapping {template: {flags}}",
            type(obj).__name__,
            "see biaskit/data/holistic_bias/v1.0/sentence_templates.json",
        )
    for tpl, flags in obj.items():
        check_text(tpl, file=file, entry="template", what="template")
        entry = f"template {tpl!r}"
        ph = _placeholders(tpl)
        bad = [p for p in ph if p not in SLOTS]
        if bad:
            raise _err(
                file,
                entry,
                f"unknown placeholder(s) {{{'}, {'.join(bad)}}}",
                tpl,
                "use exactly one of {noun_phrase} or {plural_noun_phrase}",
                options=["{noun_phrase}", "{plural_noun_phrase}"],
            )
        if len(ph) == 0:
            raise _err(file, entry, "no noun-phrase slot", tpl, "add {noun_phrase} (singular, with article) or {plural_noun_phrase}")
        if len(ph) > 1:
            raise _err(file, entry, f"{len(ph)} noun-phrase slots; a template takes exactly one", tpl, "keep one slot")
        if tpl.count("{") != 1 or tpl.count("}") != 1:
            raise _err(file, entry, "unbalanced braces", tpl, "write slots as {noun_phrase}; remove stray { or }")
        if flags is None:
            flags = {}
        if not isinstance(flags, dict):
            raise _err(file, entry, "flags must be a mapping", flags, 'write {} or {"must_be_noun": true}')
        unknown = set(flags) - set(TEMPLATE_FLAGS)
        if unknown:
            raise _err(file, entry, f"unknown flag(s) {sorted(unknown)}", flags, "use only the valid flags", options=TEMPLATE_FLAGS)
        for k, v in flags.items():
            if not isinstance(v, bool):
                raise _err(file, f"{entry} flag {k!r}", "must be true or false", v, f'write "{k}": true')
    return obj


_VALIDATORS = {
    "descriptors": validate_descriptors,
    "nouns": validate_nouns,
    "noun_phrases": validate_noun_phrases,
    "templates": validate_sentence_templates,
}


def detect_kind(obj: Any) -> str | None:
    """Guess which HolisticBias file ``obj`` is (descriptors, nouns, noun_phrases, templates) from its shape."""
    if not isinstance(obj, dict) or not obj:
        return None
    if any("{" in str(k) for k in obj):
        return "templates"
    vals = list(obj.values())
    if all(isinstance(v, dict) for v in vals):
        return "descriptors"
    if all(isinstance(v, list) for v in vals):
        items = [x for v in vals for x in v]
        if items and all(isinstance(x, list) for x in items):
            return "nouns"
        return "noun_phrases"
    return None


def validate_file(path: str | Path, kind: str | None = None) -> str:
    """Validate one HolisticBias-layout file (kind guessed from its shape when None); returns the kind."""
    obj = load_file(path)
    kind = kind or detect_kind(obj)
    if kind not in _VALIDATORS:
        raise BiaskitError(
            "E040",
            f"{path}: cannot tell which HolisticBias file this is",
            value=kind,
            options=list(_VALIDATORS),
            fix="pass --kind descriptors|nouns|noun_phrases|templates",
        )
    _VALIDATORS[kind](obj, str(path))
    return kind


def _merge(kind: str, base: dict, extra: dict, file: str) -> dict:
    out = {k: (dict(v) if isinstance(v, dict) else list(v)) for k, v in base.items()}
    if kind == "descriptors":
        for axis, buckets in extra.items():
            ax = out.setdefault(axis, {})
            for bucket, entries in buckets.items():
                ax[bucket] = list(ax.get(bucket, [])) + list(entries)
    elif kind in ("nouns", "noun_phrases"):
        for k, entries in extra.items():
            out[k] = list(out.get(k, [])) + list(entries)
    else:
        for tpl, flags in extra.items():
            if tpl in out:
                raise _err(file, f"template {tpl!r}", "duplicate template (already in the base data)", tpl, "remove it from the extra file")
            out[tpl] = flags or {}
    return out


def load_holistic(
    version: str | Path = "v1.0",
    *,
    descriptors: Sequence[str | Path] = (),
    nouns: Sequence[str | Path] = (),
    noun_phrases: Sequence[str | Path] = (),
    templates: Sequence[str | Path] = (),
) -> HolisticData:
    """Load a bundled version (``v1.0``, ``v1.1``), a folder with the four files, or ``"none"`` (only the
    extra files), and merge user extension files (JSON or YAML, same layout) into it.

    Every file is validated (unknown placeholders, empty/duplicate entries, stray whitespace, templates
    without a noun-phrase slot); errors are E040 naming the file, the entry and the fix.
    """
    extras = {"descriptors": list(descriptors), "nouns": list(nouns), "noun_phrases": list(noun_phrases), "templates": list(templates)}
    parts: dict[str, dict] = {k: {} for k in FILES}
    sources: list[str] = []
    vname = str(version)
    if vname != "none":
        if vname in VERSIONS:
            folder = data_dir("holistic_bias", vname)
        else:
            folder = Path(vname)
            if not folder.is_dir():
                raise BiaskitError(
                    "E040",
                    "unknown HolisticBias version",
                    value=vname,
                    options=[*VERSIONS, "none", "<folder>"],
                    fix="use --version v1.0 or v1.1, or a folder holding the four dataset files",
                )
            vname = "custom"
        for kind, fname in FILES.items():
            p = folder / fname
            if not p.exists():
                alt = [folder / fname.replace(".json", s) for s in (".yaml", ".yml")]
                p = next((a for a in alt if a.exists()), p)
            if not p.exists():
                raise BiaskitError("E040", f"{folder}: missing {fname}", value=str(folder), fix=f"add {fname} (or .yaml) to the folder")
            parts[kind] = _VALIDATORS[kind](load_file(p), str(p))
            sources.append(str(p))
    for kind, files in extras.items():
        for f in files:
            obj = load_file(f)
            if kind == "descriptors":
                validate_descriptors(obj, str(f), noun_genders=set(parts["nouns"]) | set(NOUN_GENDERS))
            else:
                _VALIDATORS[kind](obj, str(f))
            parts[kind] = _merge(kind, parts[kind], obj, str(f))
            _VALIDATORS[kind](parts[kind], f"{f} (merged with the base data)")
            sources.append(str(f))
    for kind in ("nouns", "templates"):
        if not parts[kind]:
            raise BiaskitError("E040", f"no {FILES[kind]} given", value=vname, fix=f"use a bundled --version or pass a {kind} file")
    return HolisticData(parts["descriptors"], parts["nouns"], parts["noun_phrases"], parts["templates"], vname, sources)


# --------------------------------------------------------------------------- noun phrases

NP_COLUMNS = (
    "axis",
    "bucket",
    "descriptor",
    "descriptor_gender",
    "descriptor_preference",
    "noun",
    "plural_noun",
    "noun_gender",
    "noun_phrase",
    "plural_noun_phrase",
    "noun_phrase_type",
)


def _span_of(phrase_template: str) -> str:
    """The descriptor part of a standalone phrase such as ``{article} {noun} who uses a wheelchair``: the longest
    stretch between placeholders (``who uses a wheelchair``)."""
    parts = [x.strip() for x in re.split(r"\{article\}|\{noun\}", phrase_template)]
    return max(parts, key=len)


def _bare_noun_rows(nouns: list[tuple[str, str, str]], base: dict[str, Any]) -> list[dict[str, Any]]:
    """``noun`` phrases: every noun without a descriptor ("a woman" / "women")."""
    return [
        {
            **base,
            "noun": sg,
            "plural_noun": pl,
            "noun_gender": g,
            "noun_phrase": f"{indefinite_article(sg)} {sg}",
            "plural_noun_phrase": pl,
            "noun_phrase_type": "noun",
            "_span": None,
            "_plural_span": None,
        }
        for g, sg, pl in nouns
    ]


def _descriptor_rows(descriptors: dict[str, dict[str, list[Any]]], nouns: list[tuple[str, str, str]], base: dict[str, Any]) -> list[dict[str, Any]]:
    """Per descriptor (axis and bucket order): the ``descriptor`` alone, then its ``descriptor_noun`` phrases
    (a gendered descriptor only with nouns of its gender)."""
    rows: list[dict[str, Any]] = []
    for axis, buckets in descriptors.items():
        for bucket, entries in buckets.items():
            for e in entries:
                e = {"descriptor": e} if isinstance(e, str) else e
                d = e["descriptor"]
                dg = e.get("gender")
                pref = e.get("preference", NO_PREFERENCE)
                art = e.get("article") or indefinite_article(d)
                meta = {"axis": axis, "bucket": bucket, "descriptor": d, "descriptor_gender": dg, "descriptor_preference": pref}
                rows.append(
                    {**base, **meta, "noun_phrase": d, "plural_noun_phrase": d, "noun_phrase_type": "descriptor", "_span": d, "_plural_span": d}
                )
                for g, sg, pl in nouns:
                    if dg is None or dg == g:
                        rows.append(
                            {
                                **meta,
                                "noun": sg,
                                "plural_noun": pl,
                                "noun_gender": g,
                                "noun_phrase": f"{art} {d} {sg}",
                                "plural_noun_phrase": f"{d} {pl}",
                                "noun_phrase_type": "descriptor_noun",
                                "_span": d,
                                "_plural_span": d,
                            }
                        )
    return rows


def _standalone_rows(phrases: dict[str, list[Any]], nouns: list[tuple[str, str, str]], base: dict[str, Any]) -> list[dict[str, Any]]:
    """Standalone phrases: ``noun_descriptor`` (with ``{noun}``, filled with every noun) or ``fixed_phrase``."""
    rows: list[dict[str, Any]] = []
    for axis, entries in phrases.items():
        for e in entries:
            e = {"noun_phrase": e} if isinstance(e, str) else e
            sg_t = e["noun_phrase"]
            pl_t = e.get("plural_noun_phrase", sg_t)
            pref = e.get("preference", NO_PREFERENCE)
            if "{noun}" in sg_t:
                desc = sg_t.replace("{article}", "").replace("{noun}", "").strip()
                for g, sg, pl in nouns:
                    rows.append(
                        {
                            **base,
                            "axis": axis,
                            "descriptor": desc,
                            "descriptor_preference": pref,
                            "noun": sg,
                            "plural_noun": pl,
                            "noun_gender": g,
                            "noun_phrase": sg_t.replace("{article}", indefinite_article(sg)).replace("{noun}", sg),
                            "plural_noun_phrase": pl_t.replace("{article}", "").replace("{noun}", pl).strip(),
                            "noun_phrase_type": "noun_descriptor",
                            "_span": _span_of(sg_t),
                            "_plural_span": _span_of(pl_t),
                        }
                    )
            else:
                # The reference generator labels these "neutral"; "a widow" is not, so we leave it null.
                rows.append(
                    {
                        **base,
                        "axis": axis,
                        "descriptor": sg_t,
                        "descriptor_preference": pref,
                        "noun_phrase": sg_t,
                        "plural_noun_phrase": pl_t,
                        "noun_phrase_type": "fixed_phrase",
                        "_span": sg_t,
                        "_plural_span": pl_t,
                    }
                )
    return rows


def noun_phrases(data: HolisticData) -> list[dict[str, Any]]:
    """All noun phrases of the dataset in file order (nouns, then per axis descriptors, then standalone).

    Besides the output columns each row has ``_span`` / ``_plural_span``: the descriptor as it is written in
    the singular / plural phrase (None for bare nouns), which becomes ``descriptor_span``."""
    nouns = [(g, sg, pl) for g, pairs in data.nouns.items() for sg, pl in pairs]
    base = dict.fromkeys(NP_COLUMNS)
    return [*_bare_noun_rows(nouns, base), *_descriptor_rows(data.descriptors, nouns, base), *_standalone_rows(data.noun_phrases, nouns, base)]


# --------------------------------------------------------------------------- expansion


@dataclass
class ExpansionStats:
    version: str
    noun_phrases: int = 0
    templates: int = 0
    rows_before_dedupe: int = 0
    rows: int = 0
    distinct_texts: int | None = None
    merged_duplicates: int = 0
    descriptors_selected: list[str] | None = None
    filters: dict[str, Any] = field(default_factory=dict)
    variants: str = "none"
    variant_rows_skipped_as_no_op: int = 0

    def as_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        if d["descriptors_selected"] is not None:
            d["descriptors_selected"] = len(d["descriptors_selected"])
        return d


@dataclass
class _Tpl:
    template: str
    prefix: str
    suffix: str
    plural: bool
    first_turn_only: bool
    must_be_noun: bool
    tid: str


def _templates(data: HolisticData) -> list[_Tpl]:
    out = []
    for tpl, flags in data.templates.items():
        slot = _placeholders(tpl)[0]
        prefix, suffix = tpl.split("{" + slot + "}")
        flags = flags or {}
        out.append(
            _Tpl(
                tpl,
                prefix,
                suffix,
                slot == "plural_noun_phrase",
                bool(flags.get("first_turn_only", False)),
                bool(flags.get("must_be_noun", False)),
                "hbt-" + short_hash(tpl, size=4),
            )
        )
    return out


def _as_set(name: str, values: Iterable[str] | None, valid: Iterable[str] | None = None) -> set[str] | None:
    if values is None:
        return None
    vals = {v for v in values}
    if valid is not None:
        valid_l = sorted({v for v in valid if v is not None})
        bad = sorted(v for v in vals if v not in valid_l)
        if bad:
            raise BiaskitError(
                "E005",
                f"unknown {name} value(s) {bad}",
                value=bad,
                options=valid_l,
                fix=f"use values from the dataset for --{name.replace('_', '-')}",
            )
    return vals


def _phrase_variant(phrase: str, hyphens: bool, lower: bool) -> str:
    if hyphens:
        phrase = phrase.replace("-", " ")
    if lower:
        phrase = phrase.lower()
    return phrase


def _check_variant_args(variants: str, variant_names: Sequence[str]) -> None:
    if variants not in ("none", "all", "sample"):
        raise BiaskitError(
            "E005", "unknown variants mode", value=variants, options=["none", "all", "sample"], fix="use --variants none, all or sample"
        )
    bad_v = [v for v in variant_names if v not in VARIANTS]
    if bad_v:
        raise BiaskitError("E005", "unknown variant name(s)", value=bad_v, options=VARIANTS, fix="use the dataset's variant names")


@dataclass
class _NpFilters:
    """The noun-phrase filters of :func:`plan_holistic` (None: not filtered), checked against the dataset's values."""

    axes: set[str] | None
    buckets: set[str] | None
    preferences: set[str] | None
    noun_genders: set[str] | None
    nouns: set[str] | None
    noun_phrase_types: set[str] | None
    descriptors: set[str] | None
    keep_nouns: bool

    @classmethod
    def check(cls, nps: list[dict[str, Any]], *, axes, buckets, preferences, noun_genders, nouns, noun_phrase_types, descriptors, keep_nouns):
        return cls(
            _as_set("axis", axes, {r["axis"] for r in nps}),
            _as_set("bucket", buckets, {r["bucket"] for r in nps}),
            _as_set("preference", preferences, [*PREFERENCES, NO_PREFERENCE]),
            _as_set("noun_gender", noun_genders, {r["noun_gender"] for r in nps}),
            _as_set("noun", nouns, {r["noun"] for r in nps}),
            _as_set("noun_phrase_type", noun_phrase_types, NOUN_PHRASE_TYPES),
            _as_set("descriptor", descriptors, {r["descriptor"] for r in nps}),
            keep_nouns,
        )

    def as_dict(self) -> dict[str, list[str]]:
        """The filters given, for the expansion stats (sorted values, in parameter order)."""
        names = ("axes", "buckets", "preferences", "noun_genders", "nouns", "noun_phrase_types", "descriptors")
        return {k: sorted(v) for k in names if (v := getattr(self, k)) is not None}

    def keep(self, r: dict) -> bool:
        """Noun type, gender and noun filters apply to every row; the descriptor filters spare the ``noun``
        controls when ``keep_nouns``."""
        if self.noun_phrase_types is not None and r["noun_phrase_type"] not in self.noun_phrase_types:
            return False
        if self.noun_genders is not None and r["noun_gender"] not in self.noun_genders:
            return False
        if self.nouns is not None and r["noun"] not in self.nouns:
            return False
        if r["noun_phrase_type"] == "noun" and self.keep_nouns:
            return True
        if self.axes is not None and r["axis"] not in self.axes:
            return False
        if self.buckets is not None and r["bucket"] not in self.buckets:
            return False
        if self.preferences is not None and r["descriptor_preference"] not in self.preferences:
            return False
        if self.descriptors is not None and r["descriptor"] not in self.descriptors:
            return False
        return True


def _draw_descriptors(nps: list[dict[str, Any]], n_descriptors: int, keep_nouns: bool, seed: int, stats: ExpansionStats) -> list[dict[str, Any]]:
    """Keep the noun phrases of a seeded random subset of ``n_descriptors`` descriptors (and the ``noun``
    controls when ``keep_nouns``)."""
    pool = sorted({r["descriptor"] for r in nps if r["descriptor"] is not None})
    if n_descriptors < 1 or n_descriptors > len(pool):
        raise BiaskitError(
            "E005",
            f"cannot draw {n_descriptors} descriptors from the {len(pool)} left after filtering",
            value=n_descriptors,
            fix=f"use --n-descriptors between 1 and {len(pool)}",
        )
    rng = np.random.default_rng(seed)
    chosen = set(rng.choice(np.array(pool, dtype=object), size=n_descriptors, replace=False).tolist())
    stats.descriptors_selected = sorted(chosen)
    stats.filters["n_descriptors"] = n_descriptors
    stats.filters["seed"] = seed
    return [r for r in nps if r["descriptor"] in chosen or (r["noun_phrase_type"] == "noun" and keep_nouns)]


def _select_templates(tpls: list[_Tpl], templates: Iterable[str] | None, first_turn: bool, stats: ExpansionStats) -> list[_Tpl]:
    """The templates asked for (template strings or ``hbt-`` ids), without ``first_turn_only`` ones unless ``first_turn``."""
    if templates is not None:
        wanted = set(templates)
        known = {t.template for t in tpls} | {t.tid for t in tpls}
        bad = sorted(wanted - known)
        if bad:
            raise BiaskitError(
                "E005",
                f"unknown template(s) {bad}",
                value=bad,
                options=[t.template for t in tpls],
                fix="give templates exactly as in sentence_templates.json, or their hbt- ids",
            )
        tpls = [t for t in tpls if t.template in wanted or t.tid in wanted]
        stats.filters["templates"] = sorted(wanted)
    if not first_turn:
        tpls = [t for t in tpls if not t.first_turn_only]
        stats.filters["first_turn"] = False
    return tpls


def _row_index(nps: list[dict[str, Any]], tpls: list[_Tpl]) -> tuple[np.ndarray, np.ndarray]:
    """Noun-phrase and template index per row: noun-phrase major, templates in file order (phrases without a
    noun skip ``must_be_noun`` templates)."""
    n_np, n_t = len(nps), len(tpls)
    has_noun = np.fromiter((r["noun"] is not None for r in nps), dtype=bool, count=n_np)
    t_all = np.arange(n_t, dtype=np.int32)
    t_free = np.array([i for i, t in enumerate(tpls) if not t.must_be_noun], dtype=np.int32)
    counts = np.where(has_noun, n_t, len(t_free))
    np_idx = np.repeat(np.arange(n_np, dtype=np.int32), counts)
    # template index per row: tile the right template list per noun phrase, vectorised by blocks
    tpl_idx = np.empty(len(np_idx), dtype=np.int32)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    for mask, tl in ((has_noun, t_all), (~has_noun, t_free)):
        if len(tl) == 0 or not mask.any():
            continue
        s = starts[mask]
        pos = (s[:, None] + np.arange(len(tl))[None, :]).ravel()
        tpl_idx[pos] = np.tile(tl, len(s))
    return np_idx, tpl_idx


def _effective_variants(nps: list[dict[str, Any]], tpls: list[_Tpl], np_idx: np.ndarray, tpl_idx: np.ndarray) -> dict[str, np.ndarray]:
    """Per variant, which rows it would change."""
    tpl_plural = np.array([t.plural for t in tpls], dtype=bool)
    tpl_has_im = np.array([bool(_IM.search(t.prefix) or _IM.search(t.suffix)) for t in tpls])
    tpl_has_period = np.array([t.suffix.endswith(".") for t in tpls])
    sg_h = np.array(["-" in r["noun_phrase"] for r in nps])
    pl_h = np.array(["-" in r["plural_noun_phrase"] for r in nps])
    plural_row = tpl_plural[tpl_idx]
    hy_ok = np.where(plural_row, pl_h[np_idx], sg_h[np_idx])
    effective = {"remove_im_contraction": tpl_has_im[tpl_idx], "remove_final_period": tpl_has_period[tpl_idx], "remove_descriptor_hyphens": hy_ok}
    sg_low = np.array([r["noun_phrase"] != r["noun_phrase"].lower() for r in nps])
    pl_low = np.array([r["plural_noun_phrase"] != r["plural_noun_phrase"].lower() for r in nps])
    effective["lowercase_descriptor"] = np.where(plural_row, pl_low[np_idx], sg_low[np_idx])
    return effective


def _sample_variants(effective: dict[str, np.ndarray], names: list[str], n_base: int, probability: float, seed: int) -> dict[str, np.ndarray]:
    """Each row gets each variant with ``probability`` (seeded); a drawn variant that would not change the row
    is recorded as False (the columns say what was applied)."""
    flags = {v: np.zeros(n_base, dtype=bool) for v in VARIANTS}
    rng = np.random.default_rng(seed)
    draws = rng.random((n_base, len(VARIANTS))) < probability
    for j, v in enumerate(VARIANTS):
        if v in names:
            flags[v] = draws[:, j] & effective[v]
    return flags


def _all_variants(
    effective: dict[str, np.ndarray], names: list[str], np_idx: np.ndarray, tpl_idx: np.ndarray
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], int]:
    """Every combination of ``names`` that changes the row, combination-major; returns the new row index,
    the flags and how many (row, combination) pairs were left out as no-ops."""
    n_base = len(np_idx)
    sel_np, sel_t, sel_flags = [], [], {v: [] for v in VARIANTS}
    skipped = 0
    for c in range(1 << len(names)):
        on = [names[j] for j in range(len(names)) if c >> j & 1]
        mask = np.ones(n_base, dtype=bool)
        for v in on:
            mask &= effective[v]
        skipped += int(n_base - mask.sum())
        sel_np.append(np_idx[mask])
        sel_t.append(tpl_idx[mask])
        for v in VARIANTS:
            sel_flags[v].append(np.full(int(mask.sum()), v in on, dtype=bool))
    return np.concatenate(sel_np), np.concatenate(sel_t), {v: np.concatenate(sel_flags[v]) for v in VARIANTS}, skipped


def plan_holistic(
    data: HolisticData | str | Path = "v1.0",
    *,
    axes: Iterable[str] | None = None,
    buckets: Iterable[str] | None = None,
    preferences: Iterable[str] | None = None,
    noun_genders: Iterable[str] | None = None,
    nouns: Iterable[str] | None = None,
    noun_phrase_types: Iterable[str] | None = None,
    templates: Iterable[str] | None = None,
    descriptors: Iterable[str] | None = None,
    n_descriptors: int | None = None,
    keep_nouns: bool = True,
    first_turn: bool = True,
    variants: str = "none",
    variant_names: Sequence[str] = VARIANTS,
    variant_probability: float = 0.5,
    seed: int = 0,
) -> _Plan:
    """Plan a HolisticBias expansion (filters, seeded descriptor subset, variants); see :func:`expand_holistic`.

    Filters (all optional, combined with AND): ``axes``, ``buckets``, ``preferences`` (reviewed,
    dispreferred, polarizing, no_data), ``noun_genders``, ``nouns`` (singular nouns), ``noun_phrase_types``, ``templates`` (template
    strings or ``hbt-`` ids), ``descriptors`` (exact values); ``n_descriptors`` draws a seeded random
    subset of that many descriptors (HolisticBias's small set is 100), keeping the descriptor-less
    ``noun`` phrases as controls unless ``keep_nouns=False``; ``first_turn=False`` drops templates flagged
    ``first_turn_only``.

    ``variants``: ``"none"``; ``"all"`` (every combination of ``variant_names`` that changes the text,
    deterministic; a flag that would not change a row is not emitted, and the count is reported); or
    ``"sample"`` (each row gets each variant with ``variant_probability``, seeded).
    Row order: noun phrases in file order, templates in file order (variant combinations outermost).
    """
    if not isinstance(data, HolisticData):
        data = load_holistic(data)
    _check_variant_args(variants, variant_names)
    stats = ExpansionStats(version=data.version, variants=variants)
    nps = noun_phrases(data)
    tpls = _templates(data)

    # ---- filters on noun phrases and templates
    filters = _NpFilters.check(
        nps,
        axes=axes,
        buckets=buckets,
        preferences=preferences,
        noun_genders=noun_genders,
        nouns=nouns,
        noun_phrase_types=noun_phrase_types,
        descriptors=descriptors,
        keep_nouns=keep_nouns,
    )
    stats.filters = filters.as_dict()
    nps = [r for r in nps if filters.keep(r)]
    if n_descriptors is not None:
        nps = _draw_descriptors(nps, n_descriptors, keep_nouns, seed, stats)
    tpls = _select_templates(tpls, templates, first_turn, stats)
    stats.noun_phrases, stats.templates = len(nps), len(tpls)
    if not nps or not tpls:
        raise BiaskitError(
            "E005",
            "the filters leave nothing to expand",
            value=stats.filters,
            fix="loosen the filters (check the values with `biaskit expand holistic --help`)",
        )

    # ---- rows, then variant flags per row
    np_idx, tpl_idx = _row_index(nps, tpls)
    names = [v for v in VARIANTS if v in variant_names] if variants != "none" else []
    flags = {v: np.zeros(len(np_idx), dtype=bool) for v in VARIANTS}
    if names:
        effective = _effective_variants(nps, tpls, np_idx, tpl_idx)
        if variants == "sample":
            flags = _sample_variants(effective, names, len(np_idx), variant_probability, seed)
        else:
            np_idx, tpl_idx, flags, stats.variant_rows_skipped_as_no_op = _all_variants(effective, names, np_idx, tpl_idx)
    return _Plan(data, nps, tpls, np_idx, tpl_idx, flags, names, stats)


class _Plan:
    """Row plan of an expansion: per row a noun-phrase index, a template index and variant flags.

    Lookup arrays are built once at noun-phrase/template level; :meth:`batch` materialises any slice
    of rows with Arrow ``take`` and string joins, so the full table never has to be in memory at once.
    """

    def __init__(self, data, nps, tpls, np_idx, tpl_idx, flags, names, stats) -> None:
        self.data, self.nps, self.tpls, self.names, self.stats = data, nps, tpls, names, stats
        self.np_idx, self.tpl_idx = np_idx, tpl_idx
        self.flags = flags
        self.n_rows = len(np_idx)
        im = flags["remove_im_contraction"].astype(np.int32)
        pe = flags["remove_final_period"].astype(np.int32)
        hy = flags["remove_descriptor_hyphens"].astype(np.int32)
        lo = flags["lowercase_descriptor"].astype(np.int32)
        # prefix/suffix per (template, I'm variant, period variant)
        pre_list, suf_list = [], []
        for t in tpls:
            for i_im in (0, 1):
                p = _IM.sub("I am", t.prefix) if i_im else t.prefix
                s = _IM.sub("I am", t.suffix) if i_im else t.suffix
                for i_pe in (0, 1):
                    pre_list.append(p)
                    suf_list.append(s.rstrip(".") if i_pe and s else s)
        self.pre = _strs(pre_list)
        self.suf = _strs(suf_list)
        self.ps_idx = (tpl_idx * 2 + im) * 2 + pe
        tpl_plural = np.array([t.plural for t in tpls], dtype=np.int32)
        plural_row = tpl_plural[tpl_idx]
        # the descriptor as written in the text: the same variant applied as to the phrase it sits in
        if names:
            phr = [
                _phrase_variant(ph, bool(i_hy), bool(i_lo))
                for r in nps
                for ph in (r["noun_phrase"], r["plural_noun_phrase"])
                for i_hy in (0, 1)
                for i_lo in (0, 1)
            ]
            spans = [
                None if sp is None else _phrase_variant(sp, bool(i_hy), bool(i_lo))
                for r in nps
                for sp in (r.get("_span"), r.get("_plural_span"))
                for i_hy in (0, 1)
                for i_lo in (0, 1)
            ]
            self.phr_idx = ((np_idx * 2 + plural_row) * 2 + hy) * 2 + lo
            self.code = im * 8 + hy * 4 + lo * 2 + pe
        else:
            phr = [ph for r in nps for ph in (r["noun_phrase"], r["plural_noun_phrase"])]
            spans = [sp for r in nps for sp in (r.get("_span"), r.get("_plural_span"))]
            self.phr_idx = np_idx * 2 + plural_row
            self.code = None
        self.phr = _strs(phr)
        self.spans = _strs(spans)
        # ids: noun-phrase hash (+ occurrence for exact repeats) + template hash (+ variant code)
        occ: dict[tuple, int] = {}
        np_ids = []
        for r in nps:
            key = tuple(r[c] for c in NP_COLUMNS)
            k = occ.get(key, 0)
            occ[key] = k + 1
            np_ids.append("hb-" + short_hash(*key, k if k else None))
        self.np_ids = _strs(np_ids)
        self.tids = _strs([t.tid[4:] for t in tpls])
        self.codes = _strs(["", *[f"-v{c:04b}" for c in range(1, 16)]])
        self.np_table = pa.table({c: _strs([r[c] for r in nps]) for c in NP_COLUMNS})
        self.t_table = pa.table(
            {
                "template": _strs([t.template for t in tpls]),
                "first_turn_only": _bools([t.first_turn_only for t in tpls]),
                "must_be_noun": _bools([t.must_be_noun for t in tpls]),
                "template_id": _strs([t.tid for t in tpls]),
            }
        )

    def batch(self, start: int = 0, stop: int | None = None) -> pa.Table:
        """Rows ``start:stop`` as a prompts-stage table."""
        sl = slice(start, self.n_rows if stop is None else stop)
        npi = _ints(self.np_idx[sl])
        tpi = _ints(self.tpl_idx[sl])
        psi = _ints(self.ps_idx[sl])
        n = len(npi)
        empty = _const("", n)
        phrase = self.phr.take(_ints(self.phr_idx[sl]))
        text = pc.binary_join_element_wise(self.pre.take(psi), phrase, self.suf.take(psi), empty)
        id_parts = [self.np_ids.take(npi), self.tids.take(tpi)]
        if self.code is not None:
            id_parts.append(self.codes.take(_ints(self.code[sl])))
        cols: dict[str, Any] = {
            "prompt_id": pc.binary_join_element_wise(*id_parts, empty),
            "text": text,
            "source": _const("holistic_bias", n),
            "language": _const("en", n),
        }
        npt = self.np_table.take(npi)
        for c in NP_COLUMNS:
            cols[c] = npt.column(c)
        cols["descriptor_span"] = self.spans.take(_ints(self.phr_idx[sl]))
        tt = self.t_table.take(tpi)
        for c in tt.column_names:
            cols[c] = tt.column(c)
        cols["masked"] = _bools(np.zeros(n, dtype=bool))
        cols["dataset_version"] = _const(self.data.version, n)
        if self.names:
            for v in VARIANTS:
                cols[v] = _bools(self.flags[v][sl])
            cols["variant_noun_phrase"] = phrase
        return pa.table(cols)

    def batches(self, batch_rows: int = 65_536):
        for start in range(0, self.n_rows, batch_rows):
            yield self.batch(start, start + batch_rows)


def expand_holistic(data: HolisticData | str | Path = "v1.0", *, dedupe: bool = False, **options: Any) -> tuple[pa.Table, ExpansionStats]:
    """Expand HolisticBias into a prompts-stage table (in memory); see :func:`plan_holistic` for options.

    ``dedupe=True`` keeps the first row of each text and counts the rows merged into it in
    ``duplicates_merged`` (the stats say how many were merged). Returns ``(table, stats)``.
    """
    plan = plan_holistic(data, **options)
    stats = plan.stats
    table = plan.batch()
    stats.rows_before_dedupe = table.num_rows
    if dedupe:
        table = dedupe_texts(table, stats)
    stats.rows = table.num_rows
    return table, stats


def dedupe_texts(table: pa.Table, stats: ExpansionStats | None = None) -> pa.Table:
    """Keep the first row of each distinct ``text``; ``duplicates_merged`` counts the others."""
    table = table.append_column("_row", pa.array(np.arange(table.num_rows)))
    g = table.group_by("text", use_threads=False).aggregate([("_row", "min"), ("_row", "count")])
    g = g.take(pc.sort_indices(g, [("_row_min", "ascending")]))
    merged = pc.subtract(g.column("_row_count"), 1)
    out = table.take(g.column("_row_min")).drop_columns(["_row"]).append_column("duplicates_merged", merged)
    if stats is not None:
        stats.merged_duplicates = int(pc.sum(merged).as_py() or 0)
        stats.distinct_texts = out.num_rows
    return out


def write_holistic(
    out: str | Path,
    data: HolisticData | str | Path = "v1.0",
    *,
    dedupe: bool = False,
    manifest: dict | None = None,
    batch_rows: int = 65_536,
    **options: Any,
) -> ExpansionStats:
    """Expand and write to ``out`` atomically (with a manifest). Parquet output without ``dedupe`` is
    streamed in row groups, so memory stays small whatever the size; other formats go through
    :func:`biaskit.io.write_table`."""
    from biaskit.io import atomic_path, drop_stale_manifest, manifest_path, table_format, write_json_atomic, write_table

    out = Path(out)
    if dedupe or table_format(out) != "parquet":
        table, stats = expand_holistic(data, dedupe=dedupe, **options)
        write_table(table, out, stage="prompts", manifest=_with_stats(manifest, stats))
        return stats
    plan = plan_holistic(data, **options)
    stats = plan.stats
    import pyarrow.parquet as pq

    from biaskit.manifest import finish_manifest
    from biaskit.schema import validate

    columns: list[str] = []
    drop_stale_manifest(out)
    with atomic_path(out) as tmp:
        writer = None
        try:
            for b in plan.batches(batch_rows):
                if writer is None:
                    validate(b, "prompts", where=str(out))
                    columns = b.column_names
                    # min/max statistics only for the categorical columns (on the long text columns they
                    # cost a quarter of the write time and help no reader)
                    stats_cols = [
                        c
                        for c in (
                            "axis",
                            "bucket",
                            "noun_gender",
                            "noun_phrase_type",
                            "descriptor_preference",
                            "first_turn_only",
                            "must_be_noun",
                            "template_id",
                            "dataset_version",
                        )
                        if c in columns
                    ]
                    writer = pq.ParquetWriter(tmp, b.schema, write_statistics=stats_cols)
                writer.write_table(b)
        finally:
            if writer is not None:
                writer.close()
    stats.rows_before_dedupe = stats.rows = plan.n_rows
    if manifest is not None:
        info = type("_T", (), {"num_rows": plan.n_rows, "column_names": columns})()
        write_json_atomic(manifest_path(out), finish_manifest(_with_stats(manifest, stats), out, info))
    return stats


def _with_stats(manifest: dict | None, stats: ExpansionStats) -> dict | None:
    if manifest is None:
        return None
    m = dict(manifest)
    m["expansion"] = stats.as_dict()
    return m


def count_distinct_texts(table: pa.Table) -> int:
    return int(pc.count_distinct(table.column("text")).as_py())


def naive_article_mistakes(data: HolisticData) -> list[tuple[str, str]]:
    """Noun phrases where the reference generator's first-letter rule differs from ours
    (returned as ``(ours, reference)`` pairs, e.g. ``("a European man", "an European man")``)."""
    out = []
    for r in noun_phrases(data):
        ours = r["noun_phrase"]
        if r["noun_phrase_type"] not in ("noun", "descriptor_noun", "noun_descriptor"):
            continue
        art, _, rest = ours.partition(" ")
        if art not in ("a", "an"):
            continue
        naive = "an" if rest[:1].lower() in "aeiou" else "a"
        if r["noun_phrase_type"] == "descriptor_noun":
            # the reference honours the data's article override too
            e = _descriptor_entry(data, r["axis"], r["bucket"], r["descriptor"])
            if e is not None and "article" in e:
                naive = e["article"]
        if naive != art:
            out.append((ours, f"{naive} {rest}"))
    return out


def _descriptor_entry(data: HolisticData, axis: str, bucket: str, descriptor: str) -> dict | None:
    for e in data.descriptors.get(axis, {}).get(bucket, []):
        if isinstance(e, dict) and e.get("descriptor") == descriptor:
            return e
    return None
