"""Audit of a minimal-pairs table (``biaskit templates audit-pairs``): do the two sentences of a pair differ only
in a term of the declared axes?

Blodgett et al. (ACL 2021, "Stereotyping Norwegian Salmon") found that many CrowS-Pairs pairs differ in more than
the group term, or in words that name no group. This audit makes that a check any pairs table can run:

1. the two texts of a pair are split into word tokens (:func:`words`: letters/digits with inner apostrophes and
   hyphens, and single punctuation marks) and aligned, lower-cased, with :class:`difflib.SequenceMatcher` (no junk
   heuristic); every opcode that is not ``equal`` is one **differing span** (a replacement, or words only one side has);
2. a pair is flagged ``multi_span`` when it has more than one differing span, and ``off_axis`` when a side of a
   differing span is not a term of the declared axes (``Axis.terms()`` of :mod:`biaskit.templates.counterfactual`,
   tokenised the same way; :func:`on_axis` also takes a side whose every word is a term, and a term after an
   article, in the plural with -s/-es, and followed by "people"/"person"/"folks"); an empty side (words only the other sentence has) is not checked, the
   other side is;
   ``no_difference`` when the two token lists are the same (the pair tests nothing); ``flagged`` = any of these;
3. counts per group of ``by`` (CrowS-Pairs: ``bias_type``) and for all pairs.

Axes are declared per group: ``AXIS`` applies to every pair, ``GROUP=AXIS`` to the pairs of one group. The preset
``crows-pairs`` (:data:`CROWS_AXES`) maps CrowS-Pairs' 9 bias types to biaskit's axes (gender and first names;
HolisticBias v1.0 descriptor axes). The counts depend on the word lists: a pair flagged ``off_axis`` may differ in a
group term the lists lack, so read ``off_axis_terms`` before calling a pair faulty.

A pair with other than two rows, or a null text, is not aligned: its row has ``error`` set and it is counted in
``n_unpaired``, never dropped.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from biaskit.arrow import to_arrow
from biaskit.errors import BiaskitError
from biaskit.templates.counterfactual import load_axis

#: CrowS-Pairs bias type -> the axes whose terms its pairs should differ in
CROWS_AXES: dict[str, tuple[str, ...]] = {
    "race-color": ("holistic:race_ethnicity", "first_names"),
    "gender": ("gender", "first_names", "holistic:gender_and_sex"),
    "socioeconomic": ("holistic:socioeconomic_class",),
    "nationality": ("holistic:nationality",),
    "religion": ("holistic:religion",),
    "age": ("holistic:age",),
    "sexual-orientation": ("holistic:sexual_orientation",),
    "physical-appearance": ("holistic:body_type",),
    "disability": ("holistic:ability",),
}
PRESETS = {"crows-pairs": CROWS_AXES}
ALL = "all"
_ARTICLES = frozenset({"a", "an", "the"})
#: words for people that may follow a group term in a differing span ("white people")
_PEOPLE = frozenset({"people", "person", "persons", "folks", "folk"})
_WORD = re.compile(r"\w+(?:['’\-]\w+)*|[^\w\s]")
SUMMARY_COLUMNS = ("n_pairs", "n_flagged", "n_multi_span", "n_off_axis", "n_no_difference", "n_unpaired", "share_flagged")


def words(text: str) -> list[str]:
    """Word tokens of ``text``: words (with inner apostrophes/hyphens: don't, middle-aged) and punctuation marks."""
    return _WORD.findall(text)


def _norm(tokens: Iterable[str]) -> str:
    return " ".join(t.lower() for t in tokens)


@dataclass
class AxisSpec:
    """Which axis terms apply to which pairs: ``common`` to all, ``by_group[g]`` to the pairs of group g."""

    common: frozenset[str]
    by_group: dict[str, frozenset[str]]
    declared: list[str]

    def terms(self, group: str | None) -> frozenset[str]:
        return self.common | self.by_group.get(group or "", frozenset())


def _axis_terms(name: str, cache: dict[str, frozenset[str]]) -> frozenset[str]:
    if name not in cache:
        cache[name] = frozenset(_norm(words(t)) for t in load_axis(name).terms())
    return cache[name]


def parse_axes(specs: Sequence[str]) -> AxisSpec:
    """``AXIS``, ``GROUP=AXIS`` or a preset name (``crows-pairs``) per item; E435 when nothing is declared."""
    if not specs:
        raise BiaskitError(
            "E435",
            "no axis declared: the audit checks the differing words against the terms of the axes",
            value=None,
            options=[*PRESETS, "gender", "first_names", "holistic:<axis>", "GROUP=AXIS"],
            fix="pass --axis crows-pairs for CrowS-Pairs, or --axis gender, --axis bias_type_value=holistic:religion, ...",
        )
    cache: dict[str, frozenset[str]] = {}
    common: set[str] = set()
    by_group: dict[str, set[str]] = {}
    for spec in specs:
        if spec in PRESETS:
            for g, names in PRESETS[spec].items():
                for n in names:
                    by_group.setdefault(g, set()).update(_axis_terms(n, cache))
        elif "=" in spec and not spec.startswith("holistic:"):
            g, _, name = spec.partition("=")
            by_group.setdefault(g.strip(), set()).update(_axis_terms(name.strip(), cache))
        else:
            common.update(_axis_terms(spec, cache))
    return AxisSpec(frozenset(common), {g: frozenset(v) for g, v in by_group.items()}, list(specs))


def differing_spans(a: str, b: str) -> list[tuple[str, str]]:
    """The differing spans of two texts as (words of a, words of b), in order (see the module docs)."""
    ta, tb = words(a), words(b)
    m = difflib.SequenceMatcher(None, [t.lower() for t in ta], [t.lower() for t in tb], autojunk=False)
    return [(" ".join(ta[i1:i2]), " ".join(tb[j1:j2])) for tag, i1, i2, j1, j2 in m.get_opcodes() if tag != "equal"]


def on_axis(side: str, terms: frozenset[str]) -> bool:
    """Whether a span side is made of terms: the side is a term, or each of its words is (adjacent swapped words form
    one span: "his wife" -> "her husband"); a term counts as it is, without a leading article (a, an, the), in the
    plural (a term plus -s or -es: "whites", "Mexicans"), or followed by a word for people ("white people")."""
    toks = [t.lower() for t in words(side)]
    if _is_term(toks, terms):
        return True
    rest = [t for t in toks if t not in _ARTICLES]
    return len(rest) > 1 and all(_is_term([t], terms) for t in rest)


def _is_term(toks: list[str], terms: frozenset[str]) -> bool:
    if toks and toks[0] in _ARTICLES and len(toks) > 1:
        toks = toks[1:]
    if toks and toks[-1] in _PEOPLE and len(toks) > 1:
        toks = toks[:-1]
    forms = {" ".join(toks)}
    last = toks[-1] if toks else ""
    for suffix in ("es", "s"):
        if last.endswith(suffix) and len(last) > len(suffix) + 1:
            forms.add(" ".join([*toks[:-1], last[: -len(suffix)]]))
    return bool(forms & terms)


def audit_pair(a: str, b: str, terms: frozenset[str]) -> dict[str, Any]:
    """The audit row of one pair (texts ``a`` and ``b``) against ``terms`` (lower-cased, word-tokenised)."""
    spans = differing_spans(a, b)
    off = [side for sa, sb in spans for side in (sa, sb) if side and not on_axis(side, terms)]
    return {
        "n_spans": len(spans),
        "spans": json.dumps([list(s) for s in spans], ensure_ascii=False),
        "multi_span": len(spans) > 1,
        "off_axis": bool(off),
        "off_axis_terms": json.dumps(off, ensure_ascii=False) if off else None,
        "no_difference": not spans,
        "flagged": len(spans) != 1 or bool(off),
        "error": None,
    }


def _pairs(t: pa.Table) -> dict[Any, list[int]]:
    for c in ("pair_id", "variant", "text"):
        if c not in t.column_names:
            raise BiaskitError(
                "E431",
                f"the pairs table has no {c!r} column",
                value=sorted(t.column_names),
                fix="give a pairs table (`biaskit hub load crows_pairs_anonymized.csv`, or `biaskit templates counterfactual`)",
            )
    ttype = t.column("text").type
    if not (pa.types.is_string(ttype) or pa.types.is_large_string(ttype) or pa.types.is_null(ttype)):
        raise BiaskitError("E431", f"the pairs table's text column is not text ({ttype})", value=str(ttype), fix="give the texts as strings")
    rows: dict[Any, list[int]] = {}
    for r, pid in enumerate(t.column("pair_id").to_pylist()):
        rows.setdefault(pid, []).append(r)
    return rows


def _first_two(rs: list[int], variants: list) -> list[int]:
    """The pair's rows with its ``more`` row first (when it has one), else in table order."""
    return sorted(rs, key=lambda r: (variants[r] != "more", rs.index(r)))


def audit_pairs(table: Any, axes: Sequence[str], *, by: str | None = "bias_type") -> tuple[pa.Table, Any]:
    """(one audit row per pair, counts per group of ``by`` and ``all``) of a pairs table; see the module docs."""
    t = to_arrow(table)
    spec = parse_axes(axes)
    if by is not None and by not in t.column_names:
        raise BiaskitError(
            "E436", f"the pairs table has no --by column {by!r}", value=sorted(t.column_names), fix="pass --by with a column, or --by ''"
        )
    pairs = _pairs(t)  # E431 when pair_id, variant or text is missing
    texts, variants = t.column("text").to_pylist(), t.column("variant").to_pylist()
    groups = t.column(by).to_pylist() if by else [None] * t.num_rows
    out = []
    for pid, rs in pairs.items():
        rs = _first_two(rs, variants)
        base = {"pair_id": None if pid is None else str(pid), "group": None if groups[rs[0]] is None else str(groups[rs[0]])}
        if len(rs) != 2 or any(texts[r] is None for r in rs):
            why = f"pair has {len(rs)} row(s); the audit compares two" if len(rs) != 2 else "a text is null"
            out.append({**base, "variant_a": _str(variants[rs[0]]), "variant_b": None, **_error_row(why)})
            continue
        a, b = rs
        out.append(
            {**base, "variant_a": _str(variants[a]), "variant_b": _str(variants[b]), **audit_pair(texts[a], texts[b], spec.terms(base["group"]))}
        )
    res = pa.Table.from_pylist(out, schema=_SCHEMA)
    if by:
        res = res.rename_columns([by if c == "group" else c for c in res.column_names])
    return res, audit_summary(res, by or "group", grouped=by is not None)


def _str(v: Any) -> str | None:
    return None if v is None else str(v)


def _error_row(why: str) -> dict[str, Any]:
    return {
        "n_spans": None,
        "spans": None,
        "multi_span": None,
        "off_axis": None,
        "off_axis_terms": None,
        "no_difference": None,
        "flagged": None,
        "error": why,
    }


_SCHEMA = pa.schema(
    [
        ("pair_id", pa.string()),
        ("group", pa.string()),
        ("variant_a", pa.string()),
        ("variant_b", pa.string()),
        ("n_spans", pa.int64()),
        ("spans", pa.string()),
        ("multi_span", pa.bool_()),
        ("off_axis", pa.bool_()),
        ("off_axis_terms", pa.string()),
        ("no_difference", pa.bool_()),
        ("flagged", pa.bool_()),
        ("error", pa.string()),
    ]
)


def audit_summary(audit: pa.Table, by: str, grouped: bool = True):
    """Counts per group of ``by`` (when ``grouped``) and ``all`` (a DataFrame with :data:`SUMMARY_COLUMNS`)."""
    import pandas as pd

    df = audit.to_pandas()
    rows = []
    parts = [
        *((g, df[df[by] == g]) for g in pd.unique(df[by].dropna())),
        *([("(null)", df[df[by].isna()])] if df[by].isna().any() else []),
    ]
    parts = [*(parts if grouped else []), (ALL, df)]
    for g, d in parts:
        ok = d[d["error"].isna()]
        n = len(ok)
        flagged = int(ok["flagged"].sum())
        rows.append(
            {
                by: g,
                "n_pairs": n,
                "n_flagged": flagged,
                "n_multi_span": int(ok["multi_span"].sum()),
                "n_off_axis": int(ok["off_axis"].sum()),
                "n_no_difference": int(ok["no_difference"].sum()),
                "n_unpaired": int(d["error"].notna().sum()),
                "share_flagged": flagged / n if n else float("nan"),
            }
        )
    return pd.DataFrame(rows, columns=[by, *SUMMARY_COLUMNS])
