"""HolisticBias noun phrases: bare nouns, descriptor (+ noun) phrases and standalone phrases, with their
articles (:func:`biaskit.templates.articles.indefinite_article` unless the descriptor has ``article``).

See :mod:`biaskit.templates.holistic` for the five noun-phrase types.
"""

from __future__ import annotations

import re
from typing import Any

from biaskit.templates.articles import indefinite_article
from biaskit.templates.holistic_data import NO_PREFERENCE, HolisticData

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
