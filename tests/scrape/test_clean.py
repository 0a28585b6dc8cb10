"""Cleaning wikitext: exact outputs on hand-written cases, properties on arbitrary input, real dumps."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biaskit.errors import BiaskitError
from biaskit.scrape.clean import clean_wikitext, has_residue, load_splitter, normalize_space, split_sentences
from biaskit.scrape.dump import iter_dump

from .conftest import DUMP206, PEAR, TABLES5

MARKUP = ("{{", "}}", "[[", "]]", "<ref", "|", "thumb", "File:")


@pytest.mark.parametrize(
    "wikitext, expected",
    [
        # bold markup and link targets go, link text stays; a ref goes with its text (and its nested template)
        (
            "'''Anarchism''' is a [[political philosophy]] that advocates [[Self-governance|self-governed]] societies."
            "<ref name=a>{{cite book |title=X}} Some ref text.</ref> It is old.<ref name=a/>",
            ["Anarchism is a political philosophy that advocates self-governed societies. It is old."],
        ),
        # infobox + pronunciation template: no empty "( ; " left; heading and list lines dropped; entity decoded,
        # link trail kept ([[Russia]]n -> Russian); space before "." removed; comment dropped
        (
            "{{Infobox person\n| name = Ayn Rand\n| image = x.jpg\n}}\n'''Ayn Rand''' ({{IPAc-en|aɪ|n}}; born '''Alisa''') was a "
            "[[Russia]]n-[[United States|American]] novelist .\n\n== Life ==\n* a list item\n* another\nShe wrote [[The Fountainhead]] "
            "&ndash; a novel.<!-- hidden -->",
            ["Ayn Rand (born Alisa) was a Russian-American novelist.", "She wrote The Fountainhead – a novel."],
        ),
        # file with nested link, category, interlanguage link, table, <math>; double space collapsed
        (
            "[[File:Einstein 1921.jpg|thumb|upright|Einstein in 1921 [[Berlin]]]]\nAlbert Einstein was  a physicist.\n"
            '[[Category:Physicists]]\n[[de:Albert Einstein]]\n{| class="wikitable"\n|-\n| a || b\n|}\nThe formula <math>E=mc^2</math> is famous.',
            ["Albert Einstein was a physicist.", "The formula is famous."],
        ),
        # external link label kept, bare numbered link dropped, DEFAULTSORT and magic words dropped
        (
            "Text with [http://example.org a label] and [http://example.org] bare and {{DEFAULTSORT:Rand, Ayn}}__NOTOC__ end.",
            ["Text with a label and bare and end."],
        ),
        # gallery dropped; an unbalanced link inside a ref goes with the ref
        ("Before <gallery>\nFile:a.jpg|caption\n</gallery> after. Unclosed <ref>broken [[link</ref> ok.", ["Before after. Unclosed ok."]),
        # single newlines inside a paragraph are spaces; a blank line ends the paragraph; inline :Category link keeps its text
        ("One line\ncontinues here.\n\nSecond [[:Category:Women|women]] paragraph.", ["One line continues here.", "Second women paragraph."]),
        ("", []),
    ],
)
def test_clean_wikitext_exact(wikitext, expected):
    assert clean_wikitext(wikitext) == expected


def test_normalize_space():
    assert normalize_space("a  b\n c ( ; x ) , d .") == "a b c (x), d."
    assert normalize_space("Name ( ) was") == "Name was"


TOKENS = list("ab <>[]{}|=*#:;'\n&!-/.,") + [
    "[[",
    "]]",
    "{{",
    "}}",
    "<ref>",
    "</ref>",
    "{|",
    "|}",
    "File:",
    "Category:",
    "<!--",
    "-->",
    "&amp;",
    "''",
    "<math>",
    "de:",
    "word",
    " .",
    "( ; )",
]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), max_size=60).map("".join))
def test_cleaner_never_crashes_and_output_is_single_spaced(text):
    try:
        paras = clean_wikitext(text)
    except BiaskitError as e:  # the only allowed failure: a coded parse error naming the page
        assert e.code == "E032"
        return
    for p in paras:
        assert p == p.strip() and p
        assert "\n" not in p and "  " not in p
        for punct in ",.;:!?":
            assert f" {punct}" not in p


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1, max_size=20), max_size=5))
def test_plain_prose_survives_cleaning(words):
    # text without any markup characters comes back as its words joined by single spaces
    words = ["".join(ch for ch in w if ch.isalnum()) for w in words]
    words = [w for w in words if w]
    text = " ".join(words)
    assert clean_wikitext(text) == ([text] if text else [])


def _independent_article_count(path) -> int:
    # count <page> blocks in namespace 0 without <redirect>, straight from the XML text
    import bz2
    import re

    raw = (bz2.open(path, "rt") if str(path).endswith(".bz2") else open(path)).read()
    pages = re.findall(r"<page>.*?</page>", raw, re.S)
    return sum(1 for p in pages if "<ns>0</ns>" in p and "<redirect" not in p)


def test_real_dumps_leave_almost_no_markup_residue():
    counts = {"pages": 0, "paragraphs": 0}
    residue: list[str] = []
    for path in (DUMP206, TABLES5, PEAR):
        for page in iter_dump(path):
            counts["pages"] += 1
            for p in clean_wikitext(page.text, title=page.title):
                counts["paragraphs"] += 1
                if has_residue(p):
                    residue.append(page.title)
    assert counts["pages"] == sum(_independent_article_count(p) for p in (DUMP206, TABLES5, PEAR)) == 106 + 5 + 1
    assert counts["paragraphs"] > 5000
    # what is left is real text or broken source, not markup the cleaner missed: the ASCII article quotes "|"
    # ("sm|rg}sar") and Afghanistan has a stray "|" from broken wikitext; the pipeline drops and counts these.
    # ASCII's other "|" ("the simple line characters \| (in addition to common /)") is a pipe after a word and
    # before a space: prose, no longer residue. (Alberta's "trails''" after an unbalanced quote is gone since
    # unpaired quote runs are markup MediaWiki never shows.)
    assert residue == ["ASCII", "Afghanistan"]


def test_pear_sentences(nlp):
    (page,) = list(iter_dump(PEAR))
    sents = split_sentences(clean_wikitext(page.text), nlp)
    assert page.title == "Pear"
    assert sents[0].startswith("The pear is any of several tree and shrub species of genus Pyrus")
    hits = [s for s in sents if any(m in s for m in MARKUP)]
    # "thumb" also occurs as an English word: the only hit is the real sentence about pressing with a thumb
    assert hits == [
        'Because pears ripen from the inside out, the best way to judge ripeness is to "Check the Neck": '
        "apply gentle thumb pressure to the neck or stem end of the pear."
    ]


def test_splitters():
    nlp = load_splitter("cs", splitter="sentencizer")  # no trained model needed
    assert split_sentences(["Praha je hlavní město. Brno je druhé největší město."], nlp) == [
        "Praha je hlavní město.",
        "Brno je druhé největší město.",
    ]
    with pytest.raises(BiaskitError) as e:
        load_splitter("en", splitter="nltk")
    assert e.value.code == "E021" and "nltk" in str(e.value)


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=200))
def test_cleaner_on_fully_arbitrary_text(text):
    try:
        paras = clean_wikitext(text)
    except BiaskitError as e:
        assert e.code == "E032"
        return
    assert all(p and p == p.strip() and not re.search(r"\s\s|[^\S ]", p) for p in paras)  # only single plain spaces
