"""Grammatical agreement in translated BBQ templates (cs, pl, sk): a verb or adjective that agrees with a person.

A BBQ slot is filled with a whole phrase, but a Czech, Polish or Slovak sentence also inflects the words around
it by the person's gender (``{{NAME1}} šel`` / ``{{NAME1}} šla``). A translated cell writes those words as the
agreement alternatives of the gendered sets (:mod:`biaskit.templates.gendered`), bound to a slot:
``{NAME1=m:šel|f:šla}``. The alternatives are parsed and resolved by the gendered sets' own parser and renderer
(``parse_template``/``render``, one grammatical-gender subject per gender), so the same selectors (``m``, ``f``,
``n``, ``*``) and the same errors apply.

A slot is *gendered* when biaskit knows the grammatical gender of everything that can fill it:

* the proper names (``Proper_nouns_only`` rows): the ``gender`` column of ``vocabulary_proper_names.csv``;
* the vocabulary words of the row's category (rows without a ``Names`` list): a declared ``gender`` column of
  ``vocabulary.csv`` (m, f or n), else, for the English source words, the gender the word names
  (``man``/``boy`` m, ``woman``/``girl`` f: Gender_identity's words). ``import-sheet --bbq`` writes that column
  into the translated folder, so a translator can correct it (``děvče`` is neuter) and ``expand bbq`` reads it.

Import checks every marker (E417 naming the sheet row, the cell and the language): its slot must be gendered and
its alternatives must resolve for every gender that can fill the slot. ``expand bbq`` fills each marker with the
form of the person in the slot.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from biaskit.errors import BiaskitError
from biaskit.templates.gendered import Subject, parse_template, render

#: ``{NAME1=m:šel|f:šla}``: agreement alternatives bound to a slot
MARKER = re.compile(r"\{(NAME[12]|WORD[12]|GEN[12]|OCC[12])=([^{}]*)\}")
#: the English words that name a gender (the source vocabulary's Gender_identity words, the intersectional lists)
GENDER_ALIASES = {"f": {"f", "woman", "women", "girl", "female"}, "m": {"m", "man", "men", "boy", "male"}}


def declared_gender(row: Mapping[str, str]) -> str | None:
    """A vocabulary or proper-names row's grammatical gender from its ``gender`` column (m/f/n; F/M as the proper
    names file writes them), or None."""
    g = (row.get("gender") or "").strip().lower()
    return g if g in ("m", "f", "n") else None


def named_gender(word: str) -> str | None:
    """The gender an English word names (``woman`` f), or None."""
    w = word.strip().lower()
    return next((g for g, words in GENDER_ALIASES.items() if w in words), None)


def word_gender(row: Mapping[str, str]) -> str | None:
    """A vocabulary word's gender: the declared column, else the gender its (English) word names."""
    return declared_gender(row) or named_gender(row.get("Name", ""))


def slot_genders(
    category: str, proper_names: bool, has_names_list: bool, vocab: Iterable[Mapping[str, str]], names: Iterable[Mapping[str, str]]
) -> dict[str, set[str]]:
    """The genders that can fill NAME1 and NAME2 of a template row (see the module docs); ``{}`` when not known."""
    if proper_names:
        genders = [declared_gender(r) for r in names if r.get("First_last") in ("first", "first_only")]
    elif has_names_list:
        return {}
    else:
        genders = [word_gender(r) for r in vocab if r.get("Category") == category]
    if not genders or None in genders:
        return {}
    known = {g for g in genders if g is not None}
    return {"NAME1": set(known), "NAME2": set(known)}


def _parts(slot: str, body: str, where: str) -> list:
    return parse_template("{" + body + "}", where=f"{where}: agreement with {{{{{slot}}}}}")


def check_agreement(text: str, genders: Mapping[str, set[str]], where: str) -> None:
    """E417 for a marker whose slot is not gendered or whose alternatives miss a gender that can fill it."""
    for m in MARKER.finditer(text):
        slot, body = m.group(1), m.group(2)
        if not genders.get(slot):
            raise BiaskitError(
                "E417",
                f"{where}: agreement with {{{{{slot}}}}}, whose fillers have no known grammatical gender",
                value=m.group(0),
                options=sorted(s for s, g in genders.items() if g),
                fix="write the inflected forms into the Names list or the vocabulary, or declare the words' gender column",
            )
        try:
            parts = _parts(slot, body, where)
            for g in sorted(genders[slot]):
                render(parts, Subject(slot, slot, g, "sg", {}), where=f"{where}: agreement with {{{{{slot}}}}}")
        except BiaskitError as exc:
            raise BiaskitError("E417", exc.what, value=exc.value, options=exc.options, fix=exc.fix) from None


def render_agreement(text: str, genders: Mapping[str, str | None], where: str) -> str:
    """``text`` with each marker replaced by the form for the gender of its slot's person (E410 when unknown)."""

    def sub(m: re.Match) -> str:
        slot, gender = m.group(1), genders.get(m.group(1))
        if gender is None:
            raise BiaskitError(
                "E410",
                f"{where}: agreement with {{{{{slot}}}}}, but the person in it has no known grammatical gender",
                value=m.group(0),
                fix="declare the gender column of the words (vocabulary.csv) or write the forms into the Names list",
            )
        return render(_parts(slot, m.group(2), where), Subject(slot, slot, gender, "sg", {}), where=where)

    return MARKER.sub(sub, text)
