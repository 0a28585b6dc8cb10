"""English indefinite article by pronunciation ("a European", "an 80-year-old", "an LGBTQ person").

The choice follows the sound of the first word, not its first letter:

* numbers are read as words: 8, 11, 18, 80, 800, 11,000 ... start with a vowel sound ("an 80-year-old");
* initialisms are read letter by letter: A E F H I L M N O R S X sound like a vowel ("an LGBTQ person",
  "an FTM man", "an MoC"), U sounds like "you" ("a US-born man"); acronyms read as words (BIPOC, NIMBY,
  NATO, ...) follow the word rules;
* words: "u"/"eu"/"ew" that sound like "you" ("a Unitarian", "a European", "a uniform", but
  "an unemployed", "an uninsured"), "one"/"once" ("a one-percenter"), silent "h" ("an hour",
  "an honest", "an heir").

:func:`indefinite_article` is the whole rule; the HolisticBias data can override it per descriptor with
its ``article`` field (the expander honours that).
"""

from __future__ import annotations

import re

__all__ = ["indefinite_article", "with_article"]

#: letters whose English name starts with a vowel sound
_VOWEL_SOUND_LETTERS = frozenset("AEFHILMNORSX")

#: acronyms pronounced as words, not letter by letter
ACRONYM_WORDS = frozenset(
    {
        "BIPOC",
        "NIMBY",
        "NATO",
        "NASA",
        "UNESCO",
        "UNICEF",
        "AIDS",
        "LASER",
        "SCUBA",
        "YIMBY",
        "WASP",
        "MAGA",
        "POC",
        "DACA",
        "JAP",
        "UFO",
        "ASAP",
        "OPEC",
        "UEFA",
        "FIFA",
        "SWAT",
        "NAFTA",
    }
)

#: word beginnings (lowercase) that sound like "you"/"w" although they start with a vowel letter
_CONSONANT_SOUND_PREFIXES = (
    "uni",
    "unanim",
    "use",
    "usu",
    "usa",
    "uti",
    "ute",
    "uto",
    "ure",
    "uri",
    "uro",
    "ura",
    "ubi",
    "uga",
    "uku",
    "ukr",
    "uru",
    "uvu",
    "uzi",
    "ufo",
    "utah",
    "eu",
    "ewe",
    "once",
)
#: ... but these start with the "un-" prefix (an uninsured, an unimpressed, an unidentified)
_UN_PREFIX_EXCEPTIONS = ("unin", "unim", "unid")
#: whole words with a consonant sound
_CONSONANT_SOUND_WORDS = frozenset({"one", "u", "ouija", "usa"})

#: word beginnings with a silent h
_SILENT_H_PREFIXES = ("hour", "honest", "honor", "honour", "heir", "herb")

_NUMBER = re.compile(r"^\d[\d,]*")
_TOKEN = re.compile(r"[^\s\-/]+")


def _number_article(digits: str) -> str:
    """Article for a number read aloud (8 -> "an eight", 18 -> "an eighteen", 100 -> "a hundred")."""
    d = digits.replace(",", "")
    if d.startswith("8"):
        return "an"  # eight, eighty, eight hundred, eight thousand, ...
    # 11 and 18 (eleven, eighteen) and 11,000 / 18,000,000 (groups of three after them)
    if len(d) % 3 == 2 and d[:2] in ("11", "18"):
        return "an"
    return "a"


def _is_initialism(token: str) -> bool:
    """LGBTQ, F2M, US, MoC: read letter by letter (acronyms such as BIPOC are read as words)."""
    letters = [c for c in token if c.isalpha()]
    if not letters:
        return False
    if len(letters) == 1 and len(token.rstrip("+.")) == 1:
        return True  # a single letter: "an X", "a U"
    if token.upper().rstrip("+") in ACRONYM_WORDS:
        return False
    upper = sum(1 for c in letters if c.isupper())
    return upper == len(letters) or (upper >= 2 and len(letters) <= 5)


def indefinite_article(phrase: str) -> str:
    """Return ``"a"`` or ``"an"`` for ``phrase`` by how its first word is pronounced.

    >>> [indefinite_article(w) for w in ("European", "80-year-old", "LGBTQ person", "hour", "unemployed")]
    ['a', 'an', 'an', 'an', 'an']
    """
    text = phrase.strip().lstrip("\"'“‘(")
    if not text:
        raise ValueError("indefinite_article() needs a non-empty phrase")
    m = _NUMBER.match(text)
    if m:
        return _number_article(m.group(0))
    tm = _TOKEN.match(text)
    token = tm.group(0) if tm else text
    if _is_initialism(token):
        first = next(c for c in token if c.isalpha() or c.isdigit())
        if first.isdigit():
            return _number_article(first)
        return "an" if first.upper() in _VOWEL_SOUND_LETTERS else "a"
    word = token.lower()
    if word in _CONSONANT_SOUND_WORDS:
        return "a"
    if word[0] in "aeiou":
        if word.startswith(_CONSONANT_SOUND_PREFIXES) and not word.startswith(_UN_PREFIX_EXCEPTIONS):
            return "a"
        return "an"
    if word.startswith(_SILENT_H_PREFIXES):
        return "an"
    return "a"


def with_article(phrase: str, article: str | None = None) -> str:
    """``phrase`` with its indefinite article in front (``article`` overrides the rule)."""
    return f"{article or indefinite_article(phrase)} {phrase}"
