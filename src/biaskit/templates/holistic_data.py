"""HolisticBias data: the four dataset files (descriptors, nouns, standalone noun phrases, sentence templates),
their validation (E040 naming the file, the entry and the fix) and loading / merging with user extension files.

See :mod:`biaskit.templates.holistic` for the layout of the files and the expansion.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError, check_choice
from biaskit.templates.files import check_text, data_dir, load_file

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


def _check_top(obj: Any, file: str, layout: str, see: str, *, empty: bool = False) -> None:
    """E040 unless ``obj`` is a mapping (a non-empty one unless ``empty``): "must be a ``layout``", pointing at ``see``."""
    if not isinstance(obj, dict) or (not obj and not empty):
        raise _err(file, "top level", f"must be a {layout}", type(obj).__name__, f"see biaskit/data/holistic_bias/v1.0/{see}")


def _check_keys(e: dict, allowed: Sequence[str], file: str, entry: str) -> None:
    """E040 naming the keys of entry ``e`` outside ``allowed``."""
    unknown = set(e) - set(allowed)
    if unknown:
        raise _err(file, entry, f"unknown key(s) {sorted(unknown)}", e, f"use only {', '.join(allowed)}", options=list(allowed))


def _check_slots(text: str, allowed: Sequence[str], file: str, entry: str, problem: str, fix: str) -> None:
    """E040 when ``text`` has a placeholder other than ``allowed``: "unknown placeholder(s) {..}" + ``problem``."""
    bad = [p for p in placeholders_in(text) if p not in allowed]
    if bad:
        raise _err(file, entry, f"unknown placeholder(s) {{{'}, {'.join(bad)}}}{problem}", text, fix, options=[f"{{{a}}}" for a in allowed])


def _add_new(seen: set, key: Any, file: str, entry: str, problem: str, value: Any, fix: str = "remove the repeated entry") -> None:
    """Add ``key`` to ``seen``, the keys so far; E040 ``problem`` when it is there already."""
    if key in seen:
        raise _err(file, entry, problem, value, fix)
    seen.add(key)


def validate_descriptors(obj: Any, file: str = "descriptors", noun_genders: Iterable[str] = NOUN_GENDERS) -> dict:
    genders = set(noun_genders)
    # an entry's optional keys that take a value from a closed set: (key, the values, the problem, the fix)
    closed_keys = (
        ("preference", PREFERENCES, "unknown preference", "use one of the valid values or leave it out (= no data)"),
        ("gender", sorted(genders), "unknown gender", "use a noun gender from nouns.json or leave it out"),
        ("article", ("a", "an"), "article must be 'a' or 'an'", 'write "article": "a" or "an"'),
    )
    _check_top(obj, file, "non-empty mapping {axis: {bucket: [descriptors]}}", "descriptors.json for the layout")
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
                    _check_keys(e, ("descriptor", "preference", "gender", "article"), file, entry)
                    if "descriptor" not in e:
                        raise _err(file, entry, "missing 'descriptor'", e, 'add "descriptor": "..."')
                    d = check_text(e["descriptor"], file=file, entry=entry, what="descriptor")
                    for key, allowed, problem, fix in closed_keys:
                        if key in e and e[key] not in allowed:
                            raise _err(file, f"{entry} ({d!r})", problem, e[key], fix, options=allowed)
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
                _add_new(seen, d, file, f"{entry} ({d!r})", "duplicate descriptor in this bucket", d)
    return obj


def validate_nouns(obj: Any, file: str = "nouns") -> dict:
    _check_top(obj, file, "mapping {gender: [[singular, plural], ...]}", "nouns.json")
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
            _add_new(seen, pair[0], file, f"{entry} ({pair[0]!r})", "duplicate noun", pair, "remove the repeated pair")
    return obj


def placeholders_in(text: str) -> list[str]:
    return _PLACEHOLDER.findall(text)


def validate_noun_phrases(obj: Any, file: str = "standalone_noun_phrases") -> dict:
    _check_top(obj, file, "mapping {axis: [noun phrases]}", "standalone_noun_phrases.json", empty=True)
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
            _check_keys(e, ("noun_phrase", "plural_noun_phrase", "preference"), file, entry)
            if "noun_phrase" not in e:
                raise _err(file, entry, "missing 'noun_phrase'", e, 'add "noun_phrase": "..."')
            sg = check_text(e["noun_phrase"], file=file, entry=entry, what="noun phrase")
            pl = check_text(e.get("plural_noun_phrase", sg), file=file, entry=entry, what="plural noun phrase")
            for label, phrase in (("noun_phrase", sg), ("plural_noun_phrase", pl)):
                _check_slots(phrase, ("article", "noun"), file, f"{entry} ({phrase!r})", f" in {label}", "use only {article} and {noun}")
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
            _add_new(seen, (sg, pl), file, f"{entry} ({sg!r})", "duplicate noun phrase in this axis", e)
    return obj


def validate_sentence_templates(obj: Any, file: str = "sentence_templates") -> dict:
    _check_top(obj, file, "non-empty mapping {template: {flags}}", "sentence_templates.json")
    for tpl, flags in obj.items():
        check_text(tpl, file=file, entry="template", what="template")
        entry = f"template {tpl!r}"
        ph = placeholders_in(tpl)
        _check_slots(tpl, SLOTS, file, entry, "", "use exactly one of {noun_phrase} or {plural_noun_phrase}")
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
    kind = check_choice(
        "E040",
        f"{path}: cannot tell which HolisticBias file this is",
        kind or detect_kind(obj),
        _VALIDATORS,
        fix="pass --kind descriptors|nouns|noun_phrases|templates",
    )
    _VALIDATORS[kind](obj, str(path))
    return kind


def _merge(kind: str, base: dict, extra: dict, file: str) -> dict:
    out: dict[str, Any] = {k: (dict(v) if isinstance(v, dict) else list(v)) for k, v in base.items()}
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
