"""Masking demographic mentions with ``XYZ`` so annotators are not swayed by them (Sheng et al., 2019).

:func:`mask_text` replaces whole-word, case-insensitive occurrences of the given mentions (longest first,
so ``a Deaf woman`` wins over ``Deaf``; a plural ``s``/``es`` is included) and, for person names, their
capitalised parts (``Zachar`` alone after ``Jacob Zachar``). It returns the masked text and a mapping of
what was replaced where; :func:`unmask` restores the original exactly from the two.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.jsonread import loads_json

MASK = "XYZ"
#: columns of a prompts/scores row that hold the demographic mention, in the order they are tried
MENTION_COLUMNS = ("noun_phrase", "plural_noun_phrase", "variant_noun_phrase", "term", "descriptor", "name")
_ARTICLE = re.compile(r"^(a|an|the)\s+", re.I)


def _patterns(mentions: Iterable[str], name_parts: bool) -> list[str]:
    cands: set[str] = set()
    for m in mentions:
        if not m or not isinstance(m, str):
            continue
        m = " ".join(m.replace("_", " ").split())
        if len(m) < 2:
            continue
        cands.add(m)
        bare = _ARTICLE.sub("", m)
        if bare != m and len(bare) >= 2:
            cands.add(bare)
        if name_parts and " " in bare:
            for part in bare.split(" "):
                # capitalised name parts such as 'Zachar' in 'Jacob Zachar'; skip short particles (de, van)
                if len(part) >= 3 and part[0].isupper() and part.lower() not in {"the", "and", "von", "van", "del"}:
                    cands.add(part)
    return sorted(cands, key=lambda s: (-len(s), s))


def mask_text(text: str, mentions: Iterable[str], *, mask: str = MASK, name_parts: bool = True) -> tuple[str, list[dict[str, Any]]]:
    """Replace each mention in ``text`` by ``mask``.

    Returns ``(masked, mapping)`` where each mapping entry is ``{"start", "end", "original", "mask"}``
    with offsets into the *original* text.
    """
    if text is None:
        return text, []
    pats = _patterns(mentions, name_parts)
    if not pats:
        return text, []
    alt = "|".join(re.escape(p) for p in pats)
    rx = re.compile(rf"(?<![\w]){'(?:' + alt + ')'}(?:e?s)?(?![\w])", re.I)
    mapping: list[dict[str, Any]] = []
    out: list[str] = []
    pos = 0
    for m in rx.finditer(text):
        out.append(text[pos : m.start()])
        out.append(mask)
        mapping.append({"start": m.start(), "end": m.end(), "original": m.group(0), "mask": mask})
        pos = m.end()
    out.append(text[pos:])
    return "".join(out), mapping


def unmask(masked: str, mapping: list[Mapping[str, Any]] | str) -> str:
    """The original text from a masked text and its mapping (inverse of :func:`mask_text`)."""
    if isinstance(mapping, str):
        fix = "give the mapping mask_text returned (a JSON list of {start, end, text})"
        mapping = loads_json(mapping, source="the masking map", code="E381", fix=fix) if mapping else []
        if not isinstance(mapping, list) or not all(isinstance(e, dict) and isinstance(e.get("start"), int) for e in mapping):
            raise BiaskitError("E381", "the masking map must be a list of {start, end, text} objects", value=str(mapping)[:80], fix=fix)
    out: list[str] = []
    pos_m = 0  # position in masked text
    pos_o = 0  # position in original text
    for ent in sorted(mapping, key=lambda e: e["start"]):
        gap = ent["start"] - pos_o
        out.append(masked[pos_m : pos_m + gap])
        pos_m += gap
        if masked[pos_m : pos_m + len(ent["mask"])] != ent["mask"]:
            raise BiaskitError(
                "E091",
                "the mask mapping does not match the masked text",
                value=masked[:80],
                fix="pass the text and mask_mapping of the same samples row",
            )
        out.append(ent["original"])
        pos_m += len(ent["mask"])
        pos_o = ent["end"]
    out.append(masked[pos_m:])
    return "".join(out)


def row_mentions(row: Mapping[str, Any], extra: Iterable[str] = ()) -> list[str]:
    """The demographic mentions of a prompts/scores row (noun phrase, term, descriptor, name) plus ``extra``."""
    vals = [row.get(c) for c in MENTION_COLUMNS]
    return [v for v in [*vals, *extra] if isinstance(v, str) and v.strip()]
