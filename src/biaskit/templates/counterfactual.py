"""Counterfactual axes: the word lists that :mod:`biaskit.templates.counterfactual_swap` swaps.

An axis is a YAML file (``src/biaskit/data/counterfactual/<name>.yaml``, or yours)::

    name: gender
    language: en
    groups: [female, male]
    limits: ["what the axis cannot do", ...]
    entries:
      - {female: she, male: he}
      - {female: her, male: him, role: {female: object}}
      - {female: her, male: his, role: {female: determiner, male: determiner}}

Each entry gives one word (or phrase) in every group. A word listed in several entries of its group has
several readings; ``role`` names the syntactic reading an entry is for (:data:`ROLES`), read off spaCy's
analysis of the sentence. A user file may start with ``extends: gender`` (a bundled axis name or a path) to
add entries to an axis.

Bundled: ``gender``, ``first_names`` (BBQ's proper-name vocabulary, CC BY 4.0: see the folder's NOTICE.md)
and ``holistic:<axis>`` (the HolisticBias v1.0 descriptors of one axis; ``holistic:<axis>@v1.1`` for v1.1),
where every descriptor is a group.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.io import read_text_utf8
from biaskit.templates.files import check_text, data_dir, load_file
from biaskit.templates.holistic_data import load_holistic

#: syntactic readings an entry may be restricted to (see ``counterfactual_swap.token_role``)
ROLES = ("object", "determiner", "standalone")
#: languages whose agreement a word-list swap cannot break: only English so far
LANGUAGES = ("en",)
BUNDLED = ("gender", "first_names")
HOLISTIC_PREFIX = "holistic:"
_ENTRY_KEYS = ("role",)
_FILE_KEYS = ("name", "language", "description", "groups", "source", "limits", "entries", "extends")


@dataclass(frozen=True)
class Entry:
    """One word in every group of its axis; ``roles[group]`` restricts that group's form to one reading."""

    forms: dict[str, str]
    roles: dict[str, str] = field(default_factory=dict)


@dataclass
class Axis:
    """A counterfactual axis: its groups, its entries and what it cannot do (``limits``)."""

    name: str
    groups: tuple[str, ...]
    entries: list[Entry]
    language: str = "en"
    description: str = ""
    source: str = ""
    limits: list[str] = field(default_factory=list)
    path: str = ""

    def terms(self) -> set[str]:
        """Every word or phrase of the axis, lower-cased."""
        return {form.lower() for e in self.entries for form in e.forms.values()}

    def readings(self) -> dict[str, list[tuple[str, Entry]]]:
        """lower-cased word -> its (group, entry) readings in file order (the first is the default reading)."""
        out: dict[str, list[tuple[str, Entry]]] = {}
        for e in self.entries:
            for g in self.groups:
                key = e.forms[g].lower()
                readings = out.setdefault(key, [])
                if (g, e) not in readings:
                    readings.append((g, e))
        return out

    def describe(self) -> dict[str, Any]:
        """What a manifest records of the axis."""
        return {
            "name": self.name,
            "language": self.language,
            "groups": list(self.groups),
            "entries": len(self.entries),
            "source": self.source,
            "path": self.path,
        }


def _err(where: str, problem: str, value: Any = None, fix: str | None = None, options: Any = None) -> BiaskitError:
    return BiaskitError("E420", f"{where}: {problem}", value=value, fix=fix, options=options)


def _entry(obj: Any, groups: tuple[str, ...], where: str) -> Entry:
    if not isinstance(obj, dict):
        raise _err(where, "an entry must be a mapping {group: word, ...}", obj, "write {" + ", ".join(f"{g}: ..." for g in groups) + "}")
    unknown = set(obj) - set(groups) - set(_ENTRY_KEYS)
    if unknown:
        raise _err(where, f"unknown key(s) {sorted(unknown)}", obj, "use the axis groups and role", options=[*groups, *_ENTRY_KEYS])
    missing = [g for g in groups if g not in obj]
    if missing:
        raise _err(where, f"no word for group(s) {missing}", obj, "give a word for every group of the axis", options=list(groups))
    for g in groups:
        if not isinstance(obj[g], str):
            raise _err(where, f"the {g} word must be text, not {type(obj[g]).__name__}", obj[g], "quote it: YAML reads on, no, yes as booleans")
    forms = {g: check_text(obj[g], file=where.split(":")[0], entry=where, what=f"{g} word") for g in groups}
    roles = obj.get("role") or {}
    if not isinstance(roles, dict):
        raise _err(where, "role must map groups to roles", roles, "write role: {female: object}", options=ROLES)
    for g, r in roles.items():
        if g not in groups:
            raise _err(where, "role names an unknown group", g, "use a group of the axis", options=list(groups))
        if r not in ROLES:
            raise _err(where, "unknown role", r, "use one of the roles", options=ROLES)
    return Entry(forms, dict(roles))


def _groups(obj: Any, where: str) -> tuple[str, ...]:
    groups = obj.get("groups")
    if not isinstance(groups, list) or len(groups) < 2 or len(set(map(str, groups))) != len(groups):
        raise _err(where, "groups must list at least two distinct group names", groups, "write groups: [female, male]")
    return tuple(check_text(g, file=where, entry="groups", what="group name") for g in groups)


def axis_from_mapping(obj: Any, where: str = "axis", base: Axis | None = None) -> Axis:
    """Validate a parsed axis file (E420 naming the file and entry); ``base`` is the axis it extends."""
    if not isinstance(obj, dict):
        raise _err(where, "an axis file must be a mapping", type(obj).__name__, "see src/biaskit/data/counterfactual/gender.yaml")
    unknown = set(obj) - set(_FILE_KEYS)
    if unknown:
        raise _err(where, f"unknown key(s) {sorted(unknown)}", sorted(unknown), "remove them", options=_FILE_KEYS)
    groups = base.groups if base is not None and "groups" not in obj else _groups(obj, where)
    if base is not None and groups != base.groups:
        raise _err(where, "an extending file must keep the groups of the axis it extends", list(groups), f"use groups: {list(base.groups)}")
    raw = obj.get("entries") or []
    if not isinstance(raw, list) or (not raw and base is None):
        raise _err(where, "entries must be a non-empty list", raw, "list the words: - {" + ", ".join(f"{g}: ..." for g in groups) + "}")
    entries = [*(base.entries if base else []), *(_entry(e, groups, f"{where}: entries[{i}]") for i, e in enumerate(raw))]
    language = str(obj.get("language", base.language if base else "en"))
    limits = obj.get("limits", [])
    if not isinstance(limits, list) or not all(isinstance(x, str) for x in limits):
        raise _err(where, "limits must be a list of sentences", limits, 'write limits: ["..."]')
    return Axis(
        name=str(obj.get("name", base.name if base else Path(where).stem)),
        groups=groups,
        entries=entries,
        language=language,
        description=str(obj.get("description", base.description if base else "")),
        source=str(obj.get("source", base.source if base else "")),
        limits=[*(base.limits if base else []), *limits],
        path=where,
    )


def holistic_axis(spec: str) -> Axis:
    """``holistic:<axis>`` (v1.0) or ``holistic:<axis>@v1.1``: every descriptor of the axis is a group."""
    name, _, version = spec[len(HOLISTIC_PREFIX) :].partition("@")
    data = load_holistic(version or "v1.0")
    if name not in data.descriptors:
        raise BiaskitError(
            "E421",
            "unknown HolisticBias axis",
            value=name,
            options=sorted(data.descriptors),
            fix=f"use {HOLISTIC_PREFIX}<axis>, e.g. holistic:religion",
        )
    seen: dict[str, str] = {}
    for bucket in data.descriptors[name].values():
        for d in bucket:
            text = d["descriptor"] if isinstance(d, dict) else d
            seen.setdefault(text.lower(), text)
    groups = tuple(seen.values())
    return Axis(
        name=spec,
        groups=groups,
        entries=[Entry({g: g for g in groups})],
        language="en",
        description=f"the {len(groups)} HolisticBias {data.version} descriptors of the {name} axis; each descriptor is a group",
        source=f"HolisticBias {data.version} (CC BY-SA 4.0)",
        limits=[
            "A descriptor is swapped wherever its words appear, in any sense ('old' of a building, 'Black' of a colour).",
            "Only the descriptor changes: a noun or verb that goes with it ('a Deaf person who signs') is left as it is.",
            "The article before a swapped descriptor is re-chosen by sound ('a Deaf' -> 'an autistic').",
        ],
        path=spec,
    )


def names_entries(csv_path: str | Path) -> list[dict[str, str]]:
    """The first-names axis entries built from BBQ's ``vocabulary_proper_names.csv``: rows that are first names
    (``first``, ``first_only``), the n-th female name of an ethnicity paired with its n-th male name (file order)."""
    by_group: dict[str, dict[str, list[str]]] = {}
    for row in csv.DictReader(read_text_utf8(csv_path, "names list").splitlines()):
        if row["First_last"] in ("first", "first_only") and row["gender"] in ("F", "M"):
            by_group.setdefault(row["ethnicity"] or "", {"F": [], "M": []})[row["gender"]].append(row["Name"])
    out = []
    for names in by_group.values():
        out += [{"female": f, "male": m} for f, m in zip(names["F"], names["M"])]
    return out


def _bundled_path(name: str) -> Path:
    return data_dir("counterfactual", f"{name}.yaml")


def load_axis(name_or_path: str | Path) -> Axis:
    """A bundled axis (``gender``, ``first_names``, ``holistic:<axis>[@version]``) or an axis YAML/JSON file."""
    spec = str(name_or_path)
    if spec.startswith(HOLISTIC_PREFIX):
        return holistic_axis(spec)
    if spec in BUNDLED:
        path = _bundled_path(spec)
    else:
        path = Path(spec)
        if not path.is_file():
            raise BiaskitError(
                "E421",
                "unknown counterfactual axis",
                value=spec,
                options=[*BUNDLED, "holistic:<axis>", "<file.yaml>"],
                fix="name a bundled axis, holistic:<HolisticBias axis>, or the path of your axis file",
            )
    obj = load_file(path)
    base = None
    if isinstance(obj, dict) and "extends" in obj:
        if str(obj["extends"]) == spec:
            raise _err(str(path), "an axis cannot extend itself", obj["extends"], "extend a bundled axis or another file")
        base = load_axis(obj["extends"])
    return axis_from_mapping(obj, str(path) if spec not in BUNDLED else spec, base)


def available_axes() -> list[str]:
    """Bundled axis names (plus the HolisticBias form)."""
    return [*BUNDLED, "holistic:<axis>[@v1.0|@v1.1]"]
