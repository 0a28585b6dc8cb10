"""The indefinite article follows pronunciation (regression: the reference generator uses the first letter)."""

import json

import pytest

from biaskit.templates.articles import indefinite_article, with_article
from biaskit.templates.files import data_dir

# Hand-checked by reading each phrase aloud (American English).
CASES = [
    # vowel letters with a consonant sound
    ("European", "a"),
    ("European-American", "a"),
    ("euphoric", "a"),
    ("Unitarian", "a"),
    ("uniform", "a"),
    ("unique", "a"),
    ("university student", "a"),
    ("US-born", "a"),
    ("Ugandan", "a"),
    ("Ukrainian", "a"),
    ("Uruguayan", "a"),
    ("useful", "a"),
    ("usual", "a"),
    ("utopian", "a"),
    ("one-percenter", "a"),
    ("one-armed", "a"),
    ("once-divorced", "a"),
    ("UFO believer", "a"),
    ("unanimous", "a"),
    # vowel letters with a vowel sound
    ("Asian", "an"),
    ("elderly", "an"),
    ("immigrant", "an"),
    ("Orthodox Jewish", "an"),
    ("ugly", "an"),
    ("unemployed", "an"),
    ("uninsured", "an"),
    ("unimpressed", "an"),
    ("unidentified", "an"),
    ("urban", "an"),
    ("upper-class", "an"),
    ("only child", "an"),
    ("eighty-year-old", "an"),
    ("Evangelical", "an"),
    # numbers read as words
    ("80-year-old", "an"),
    ("85-year-old", "an"),
    ("8-year-old", "an"),
    ("11-year-old", "an"),
    ("18-year-old", "an"),
    ("800-pound", "an"),
    ("11,000-strong", "an"),
    ("20-year-old", "a"),
    ("25-year-old", "a"),
    ("100-year-old", "a"),
    ("110-year-old", "a"),
    ("1-percenter", "a"),
    ("180-pound", "a"),
    # initialisms letter by letter
    ("LGBTQ person", "an"),
    ("LGBTQ+", "an"),
    ("AAPI", "an"),
    ("AFAB", "an"),
    ("AMAB", "an"),
    ("FTM", "an"),
    ("F2M", "an"),
    ("MTF", "an"),
    ("M2F", "an"),
    ("MoC", "an"),
    ("FoC", "an"),
    ("HIV-positive", "an"),
    ("NRA member", "an"),
    ("X-ray technician", "an"),
    ("US citizen", "a"),
    ("BPD patient", "a"),
    ("DACA recipient", "a"),
    # acronyms read as words
    ("BIPOC", "a"),
    ("NIMBY", "a"),
    ("NATO official", "a"),
    ("AIDS patient", "an"),
    # silent and spoken h
    ("hour", "an"),
    ("honest", "an"),
    ("honorable", "an"),
    ("heir", "an"),
    ("herbalist", "an"),
    ("Hindu", "a"),
    ("Hispanic", "a"),
    ("hard-of-hearing", "a"),
    ("heterosexual", "a"),
    # ordinary consonants
    ("Deaf", "a"),
    ("woman", "a"),
    ("young", "a"),
    ("yuppie", "a"),
    ("wheelchair user", "a"),
]


@pytest.mark.parametrize("phrase,article", CASES, ids=[c[0] for c in CASES])
def test_article_by_sound(phrase, article):
    assert indefinite_article(phrase) == article


def test_table_is_large_enough():
    assert len(CASES) >= 40
    assert len({p for p, _ in CASES}) == len(CASES)


def test_with_article_and_override():
    assert with_article("80-year-old man") == "an 80-year-old man"
    assert with_article("European woman") == "a European woman"
    assert with_article("historic", "an") == "an historic"


def test_empty_phrase_is_an_error():
    with pytest.raises(ValueError):
        indefinite_article("  ")


@pytest.mark.parametrize("version", ["v1.0", "v1.1"])
def test_rule_agrees_with_every_hand_written_article_in_the_dataset(version):
    # HolisticBias's fixed phrases carry articles written by hand ("an Ashkenazi Jew", "a Unitarian",
    # "a youth") and two descriptors override the article ("US-born", "Unitarian"): our rule must agree.
    folder = data_dir("holistic_bias", version)
    phrases = json.loads((folder / "standalone_noun_phrases.json").read_text())
    checked = 0
    for entries in phrases.values():
        for e in entries:
            np_ = e if isinstance(e, str) else e["noun_phrase"]
            art, _, rest = np_.partition(" ")
            if "{" in np_ or art not in ("a", "an"):
                continue
            assert indefinite_article(rest) == art, np_
            checked += 1
    descriptors = json.loads((folder / "descriptors.json").read_text())
    for buckets in descriptors.values():
        for entries in buckets.values():
            for e in entries:
                if isinstance(e, dict) and "article" in e:
                    assert indefinite_article(e["descriptor"]) == e["article"], e
                    checked += 1
    assert checked == {"v1.0": 27, "v1.1": 100}[version]


# --------------------------------------------------------------------------- numbers, checked against spelled-out words

from hypothesis import given, settings
from hypothesis import strategies as st

_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def _words(n: int) -> str:
    """English number words (independent of the implementation under test)."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else "-" + _ONES[n % 10])
    if n < 1000:
        return _ONES[n // 100] + " hundred" + ("" if n % 100 == 0 else " " + _words(n % 100))
    for size, name in ((10**9, "billion"), (10**6, "million"), (1000, "thousand")):
        if n >= size:
            return _words(n // size) + " " + name + ("" if n % size == 0 else " " + _words(n % size))
    raise AssertionError(n)


def _article_from_words(n: int) -> str:
    first = _words(n).split()[0].split("-")[0]
    return "a" if first == "one" else ("an" if first[0] in "aeiou" else "a")


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=1, max_value=999_999_999_999))
def test_numbers_are_read_as_words(n):
    assert indefinite_article(f"{n}-year-old") == _article_from_words(n)
    assert indefinite_article(f"{n:,} people") == _article_from_words(n)


@pytest.mark.parametrize("n", [8, 11, 18, 80, 88, 800, 8000, 11000, 18000, 11_000_000, 1, 10, 100, 110, 180, 1100, 1800])
def test_number_edge_cases(n):
    assert indefinite_article(str(n)) == _article_from_words(n)
