"""Categorisation rules for the person nouns of the West Slavic sheet that neither the lemma lexicon nor the
agent-suffix rule of :mod:`biaskit.templates.westslavic_morph` reads: each rule covers a class of words, not a row.

1. **Sexual-orientation nouns** name a gender: gays (cs/sk ``gay``/``gej``, pl ``gej``, any case form) are
   ``male``, lesbians (cs/sk ``lesba``, ``lesbička``, sk ``lezba``, pl ``lesbijka``) are ``female``.
2. **Partner**: the masculine ``partner`` (any case: ``partnera``, ``partneři``, ``partnerowi``) is ``male``, the
   feminine ``partnerka`` (``partnerky``, ``partnerce``, ``partnerkę``) ``female``, by grammatical gender as for job
   nouns; ``partnerství``/``partnerstwo`` (partnership) and the adjective ``partnerský`` are no person.
3. **The "other half"** (``moje drahá polovička``, ``moja druga połówka``, ``moja lepšia polovica``): a form of
   *polovička*/*polovina*/*połówka*/*połowa*/*polovica* after a possessive or one of the adjectives *drahá*,
   *lepší*, *druhá*, *druga*, *lepsza*, *lepšia* names a partner without saying their gender: ``neutral``
   (grammatically feminine like *osoba*, but the sheet's non-binary rows never use it). Without the possessive or
   adjective (``polovina lidí``: half of the people) it is no subject.
4. **Collective nouns of a group of people** (the "student body": cs ``studentstvo`` or ``studentství``, ``žactvo``, ``učitelstvo``;
   sk ``študentstvo``, ``žiactvo``; pl ``studenteria``, ``młodzież``, ``nauczycielstwo``): a mixed group, ``neutral``,
   grammatically singular (the verb agrees in the singular).
5. **Adjectival job nouns** cs ``vedoucí``, sk ``vedúci``/``vedúca`` (manager, head): the form decides where it
   can (cs ``vedoucího``, ``vedoucímu``, sk ``vedúci``, ``vedúceho``: masculine, ``male``; sk ``vedúca``,
   ``vedúcej``, ``vedúcu``: feminine, ``female``); the Czech forms of both genders (``vedoucí``, ``vedoucím``) take
   the gender of an agreeing determiner or adjective before them (``můj``/``náš``/``ten``/``nový``: male;
   ``moje``/``má``/``naše``/``ta``/``nová``: female) or of a past-tense verb after them (``byl``: male, ``byla``:
   female), and with nothing to agree with, the masculine reading (``male``), the unmarked form, as the
   agent-suffix rule reads ``Manažer``.

And one rule for what stays null: a sentence whose first word (the mask skipped) is a finite verb (its lemma
ends in the language's infinitive ending and differs from it: ``Pracuje`` -> ``pracovat``, ``Jest`` -> ``być``)
has no subject at all: the translation lost it (``sheet_translation_defect``).
"""

from __future__ import annotations

import re

#: (pattern on the casefolded word form, category); the pattern must match the whole word
_ORIENTATION = (
    (re.compile(r"(?:gay|gej)(?:|a|e|i|u|em|om|ovi|owi|ové|ovia|owie|ów|ov|ů|ům|ami|ach|och|ích|mi)"), "male", "gej"),
    (
        re.compile(r"(?:lesb|lezb)(?:a|y|ě|e|u|ou|ám|ách|ami|ieb|ička|ičky|ičce|ičke|ičku|ičkou|iček|ičiek|ičkám|ičkách|ičkami)"),
        "female",
        "lesba",
    ),
    (re.compile(r"lesbij(?:ka|ki|ce|kę|ką|ko|ek|kom|kami|kach)"), "female", "lesbijka"),
)
_PARTNER_NOT = re.compile(r"partner(?:stv|stw|sk)")
_PARTNER_F = re.compile(r"partner(?:ka|ky|ki|ce|ke|ku|kę|kou|ką|ko|ek|iek|kám|kom|kách|kach|kami)")
_PARTNER_M = re.compile(r"partne(?:r|ra|ru|rovi|rowi|rem|re|rze|ři|rů|rům|ry|rech|rach|rami|rów|rom|rzy|rowie|ri|rov|roch|rmi|ra)")
_HALF = re.compile(r"(polovičk|polovin|polovic|połówk|połow)\w*")
_HALF_BEFORE = frozenset(
    "můj moje má mou moji mé mojí tvoje tvá naše drahá drahou drahé lepší druhá druhou druhé mój moja moją mojej twoja nasza "
    "druga drugą drugiej lepsza lepszą lepszej moja môj mojou mojej tvoja naša lepšia lepšiu lepšej drahá".split()
)
_COLLECTIVE = {
    "cs": ("studentstv", "žactv", "žákovstv", "učitelstv", "dělnictv", "posluchačstv"),
    "sk": ("študentstv", "žiactv", "učiteľstv", "robotníctv", "poslucháčstv"),
    "pl": ("studenteri", "młodzież", "nauczycielstw", "uczniostw", "robotnictw"),
}
_COLLECTIVE_END = ("o", "a", "u", "em", "om", "e", "ie", "y", "ą", "ę", "", "i", "í", "ím")  # cs studentstv-í: the -í noun
_VEDOUCI: dict[str, dict[str, str | None]] = {
    "cs": {"vedoucí": None, "vedoucím": None, "vedoucích": None, "vedoucího": "male", "vedoucímu": "male"},
    "sk": {
        **dict.fromkeys(("vedúci", "vedúceho", "vedúcemu", "vedúcom", "vedúcim", "vedúcich", "vedúcimi"), "male"),
        **dict.fromkeys(("vedúca", "vedúcej", "vedúcu", "vedúcou", "vedúce"), "female"),
    },
    "pl": {},
}
_CS_MASC = frozenset("můj mého mému mém mým náš našeho našemu naším ten toho tomu tím tento tohoto tvůj svůj nový nového starý".split())
_CS_FEM = frozenset("moje má moji mou mé mojí naše naši naší tvoje tvá ta té tu tou tato této touto svá svou nová nové stará".split())
#: infinitive endings of lemmas (a verb's dictionary form)
_INFINITIVE = {"cs": ("t", "ci"), "sk": ("ť", "cť"), "pl": ("ć", "c")}


def group_noun(low: list[str], i: int, lang: str) -> tuple[str, str, str] | None:
    """(category, rule, canonical lemma) when word ``i`` of the casefolded words ``low`` is a person noun of rules
    1-5 (see the module doc), else None."""
    f = low[i]
    for pat, cat, lem in _ORIENTATION:
        if pat.fullmatch(f):
            return cat, "orientation_noun", lem
    if f.startswith("partner") and not _PARTNER_NOT.match(f):
        if _PARTNER_F.fullmatch(f):
            return "female", "partner", "partnerka"
        if _PARTNER_M.fullmatch(f):
            return "male", "partner", "partner"
    half = _HALF.fullmatch(f)
    if half and any(w in _HALF_BEFORE for w in low[max(0, i - 2) : i]):
        return "neutral", "other_half", half.group(1) + "a"  # the nominative: polovička, polovica, połówka
    for stem in _COLLECTIVE.get(lang, ()):
        if f.startswith(stem) and f[len(stem) :] in _COLLECTIVE_END:
            return "neutral", "collective_noun", stem
    forms = _VEDOUCI.get(lang, {})
    if f in forms:
        if gender := forms[f]:
            return gender, "adjectival_noun", f
        agreed = _agreement(low, i)
        return (agreed, "adjectival_noun; agreement", f) if agreed else ("male", "adjectival_noun; masculine_default", f)
    return None


def _agreement(low: list[str], i: int) -> str | None:
    """Czech ``vedoucí``: the gender of a determiner/adjective before it or of a past-tense verb after it."""
    for w in reversed(low[max(0, i - 2) : i]):
        if w in _CS_MASC:
            return "male"
        if w in _CS_FEM:
            return "female"
    verb = next((w for w in low[i + 1 : i + 4] if w not in ("se", "si", "by")), "")
    if len(verb) >= 4 and verb.endswith("la"):
        return "female"
    if len(verb) >= 3 and verb.endswith("l") and verb[-2] in "aeěiyuá":
        return "male"
    return None


def collective_number(rule: str) -> tuple[str, str] | None:
    """Collective nouns are grammatically singular whatever their form."""
    return ("sg", "collective_singular") if rule == "collective_noun" else None


def has_no_subject(words: list[str], lang: str, lemma) -> bool:
    """True when the sentence's first word (the mask skipped) is a finite verb: ``lemma(word, lang)`` ends in the
    language's infinitive ending and differs from the word."""
    if not words:
        return True
    w = words[0].casefold()
    lem = lemma(words[0], lang)
    return lem != w and lem.endswith(_INFINITIVE.get(lang, ("\0",))) and len(lem) >= 3
