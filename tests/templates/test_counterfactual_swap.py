"""Counterfactual swapping with exact expected outputs, written by hand.

The pronoun readings come from spaCy's en_core_web_sm (loaded offline once for this module); the
`regex` swapper is the word-list baseline without spaCy.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.errors import BiaskitError
from biaskit.io import read_manifest, read_table
from biaskit.templates.counterfactual import load_axis
from biaskit.templates.counterfactual_swap import Swapper, counterfactual_table, load_swap_nlp, match_case


@pytest.fixture(scope="module")
def gender():
    return load_axis("gender")


@pytest.fixture(scope="module")
def nlp():
    return load_swap_nlp("en")


@pytest.fixture(scope="module")
def swap(gender, nlp):
    sw = Swapper(gender, nlp)

    def one(text: str) -> list[tuple[str, str]]:
        return [(v.group, v.text) for v in sw.swap_all([text])[0]]

    return one


@pytest.fixture(scope="module")
def regex(gender):
    sw = Swapper(gender, None)
    return lambda text: [(v.group, v.text) for v in sw.swap_all([text])[0]]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I saw her.", [("male", "I saw him.")]),  # object
        ("Her book is red.", [("male", "His book is red.")]),  # possessive determiner
        ("I gave her the book.", [("male", "I gave him the book.")]),  # indirect object
        ("She told her sister about her.", [("male", "He told his brother about him.")]),  # both readings of "her"
        ("Her grandparents visited.", [("male", "His grandparents visited.")]),
        # the tagger says object (PRP), the parser possessive (poss): the tag decides
        ("The gods had her wed Peleus.", [("male", "The gods had him wed Peleus.")]),
        ("It left her feeling like a stranger.", [("male", "It left him feeling like a stranger.")]),
    ],
)
def test_her_becomes_him_as_object_and_his_as_possessive_determiner(swap, text, expected):
    assert swap(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The book is hers.", [("male", "The book is his.")]),
        ("The book is his.", [("female", "The book is hers.")]),  # standalone his -> hers
        ("His book is red.", [("female", "Her book is red.")]),  # determiner his -> her, never "hers book"
        ("That is hers, not his.", [("swapped", "That is his, not hers.")]),
    ],
)
def test_hers_and_standalone_his_swap_with_each_other(swap, text, expected):
    assert swap(text) == expected


def test_reflexives_swap_in_both_directions(swap):
    assert swap("He taught himself.") == [("female", "She taught herself.")]
    assert swap("She hurt herself.") == [("male", "He hurt himself.")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("She is here.", "He is here."),
        ("SHE IS HERE.", "HE IS HERE."),
        ("she is here.", "he is here."),
        ("Ask HERSELF.", "Ask HIMSELF."),
        ("Mother knows.", "Father knows."),
        ("MR SMITH", "MS SMITH"),
    ],
)
def test_capitals_of_the_source_word_are_kept(swap, text, expected):
    assert [t for _, t in swap(text)] == [expected]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("He said so.", "She said so."),  # first word
        ("It was him", "It was her"),  # last word, no punctuation
        ("Ask her", "Ask him"),
        ("her", "him"),  # the whole text
        ("'He left,' she said.", "'She left,' he said."),  # after a quote and before a comma
    ],
)
def test_first_and_last_words_of_a_sentence_are_swapped(swap, text, expected):
    # HELM's pronoun swap matched words with a space on both sides and so never touched these (helm #1732)
    assert [t for _, t in swap(text)] == [expected]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My grandfathers and uncles came.", "My grandmothers and aunts came."),
        ("Her daughters-in-law and nieces met.", "His sons-in-law and nephews met."),
        ("The king met two queens.", "The queen met two kings."),
        ("A brother, a son and a husband.", "A sister, a daughter and a wife."),
        ("The actresses thanked the waitress.", "The actors thanked the waiter."),
    ],
)
def test_kinship_and_role_nouns_keep_their_number(swap, text, expected):
    assert [t for _, t in swap(text)] == [expected]


def test_possessive_s_is_kept_and_hyphenated_compounds_are_left_alone(regex):
    assert regex("The man's hat and the women's team.") == [("swapped", "The woman's hat and the men's team.")]
    assert regex("He-Man is a cartoon.") == []  # "He" and "Man" inside a hyphenated name are not words of their own


def test_grandparents_is_neutral_and_is_never_mapped_to_a_singular(swap):
    # HELM's table mapped "grandparents" to a singular; here a neutral word is not a word of the axis
    assert swap("The grandparents visited.") == []
    assert swap("My grandfathers visited.") == [("female", "My grandmothers visited.")]


def test_sentence_without_a_gendered_word_gives_no_variant(swap):
    assert swap("The weather is nice today.") == []
    assert swap("Shelly heard the hero-worship.") == []  # words inside other words are not swapped


def test_langfair_bugs_case_is_kept_and_his_before_a_noun_is_her(swap):
    # LangFair lower-cased every counterfactual and mapped "his" to "hers" (langfair #141, #142)
    assert swap("She went to Paris with John.") == [("male", "He went to Paris with John.")]
    assert swap("He lost his keys.") == [("female", "She lost her keys.")]


def test_regex_baseline_takes_the_first_listed_reading(regex):
    assert regex("Her book is red.") == [("male", "Him book is red.")]
    assert regex("The book is his.") == [("female", "The book is her.")]
    assert regex("I saw her.") == [("male", "I saw him.")]


def test_mode_each_gives_one_variant_per_group_for_a_mixed_text(gender, nlp):
    sw = Swapper(gender, nlp, mode="each")
    got = [(v.group, v.text) for v in sw.swap_all(["He and his wife came."])[0]]
    assert got == [("female", "She and her wife came."), ("male", "He and his husband came.")]


def test_swaps_give_the_words_and_their_offsets_in_the_variant(gender, nlp):
    [v] = Swapper(gender, nlp).swap_all(["She gave him her book."])[0]
    assert v.text == "He gave her his book."
    assert v.swaps == [
        {"from": "She", "to": "He", "start": 0, "end": 2},
        {"from": "him", "to": "her", "start": 8, "end": 11},
        {"from": "her", "to": "his", "start": 12, "end": 15},
    ]
    assert all(v.text[s["start"] : s["end"]] == s["to"] for s in v.swaps)


def test_holistic_axis_rechooses_the_article_by_sound():
    sw = Swapper(load_axis("holistic:religion"), None, targets=["atheist", "Muslim"])
    [an, a] = sw.swap_all(["I am a Buddhist person."])[0]
    assert (an.group, an.text) == ("atheist", "I am an atheist person.")
    assert an.swaps == [{"from": "a", "to": "an", "start": 5, "end": 7}, {"from": "Buddhist", "to": "atheist", "start": 8, "end": 15}]
    assert (a.group, a.text) == ("Muslim", "I am a Muslim person.")


def test_first_names_axis_keeps_each_names_gender():
    sw = Swapper(load_axis("first_names"), None)
    assert [(v.group, v.text) for v in sw.swap_all(["Ebony met Jermaine."])[0]] == [("swapped", "Jermaine met Ebony.")]


def test_match_case_follows_the_source_word():
    assert match_case("She", "he", "she") == "He"
    assert match_case("SHE", "he", "she") == "HE"
    assert match_case("deaf", "Blind", "Deaf") == "blind"
    assert match_case("Deaf", "blind", "Deaf") == "blind"  # written as listed: the target as listed


def test_non_english_axis_is_refused(tmp_path):
    f = tmp_path / "cs.yaml"
    f.write_text('language: cs\ngroups: [female, male]\nentries:\n  - {female: ona, male: "on"}\n', encoding="utf-8")
    with pytest.raises(BiaskitError) as exc:
        Swapper(load_axis(f))
    assert exc.value.code == "E422" and "agree" in str(exc.value)


def _table():
    return pa.table(
        {
            "prompt_id": ["p1", "p2", "p3", "p4"],
            "text": ["She gave him her book.", "The weather is nice.", "HE IS HERE", "She gave him her book."],
            "source": ["x", "x", "x", "x"],
            "language": ["en", "en", "en", "en"],
            "axis": ["a", "b", "c", "d"],
        }
    )


def test_pairs_table_has_one_row_per_variant_and_lists_texts_without_a_word(gender, nlp):
    t, stats = counterfactual_table(_table(), Swapper(gender, nlp))
    assert t.column("variant").to_pylist() == ["original", "swapped", "original", "female", "original", "swapped"]
    assert t.column("text").to_pylist() == [
        "She gave him her book.",
        "He gave her his book.",
        "HE IS HERE",
        "SHE IS HERE",
        "She gave him her book.",
        "He gave her his book.",
    ]
    ids = t.column("pair_id").to_pylist()
    assert ids[0] == ids[1] and ids[2] == ids[3] and ids[4] == ids[5] and len(set(ids)) == 3  # repeated text: own pair
    assert t.column("source_prompt_id").to_pylist() == ["p1", "p1", "p3", "p3", "p4", "p4"]
    assert t.column("source_axis").to_pylist() == ["a", "a", "c", "c", "d", "d"]  # the source's axis column is carried
    assert set(t.column("axis").to_pylist()) == {"gender"}
    assert json.loads(t.column("swaps")[3].as_py()) == [{"from": "HE", "to": "SHE", "start": 0, "end": 3}]
    assert json.loads(t.column("swaps")[0].as_py()) == []
    assert (stats.pairs, stats.variant_rows, stats.unswapped_rows, stats.unswapped_ids) == (3, 3, [1], ["p2"])


def test_table_in_another_language_is_refused(gender):
    t = _table().set_column(3, "language", pa.array(["cs", "en", "en", "en"]))
    with pytest.raises(BiaskitError) as exc:
        counterfactual_table(t, Swapper(gender))
    assert exc.value.code == "E422" and exc.value.value == ["cs"]


def test_no_text_with_a_word_of_the_axis_is_an_error(gender):
    with pytest.raises(BiaskitError) as exc:
        counterfactual_table(pa.table({"text": ["The weather is nice."]}), Swapper(gender))
    assert exc.value.code == "E423"


def test_cli_writes_a_prompts_table_and_lists_unswapped_texts_in_the_manifest(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("prompt_id,text\np1,His aunt called.\np2,The weather is nice.\n", encoding="utf-8")
    out = tmp_path / "pairs.jsonl"
    r = CliRunner().invoke(app, ["--quiet", "templates", "counterfactual", str(src), "--axis", "gender", "--no-syntax", "--out", str(out)])
    assert r.exit_code == 0, r.output
    t = read_table(out, "prompts")
    assert t.column("text").to_pylist() == ["His aunt called.", "Her uncle called."]
    assert t.column("source").to_pylist() == ["counterfactual", "counterfactual"]
    cf = read_manifest(out)["counterfactual"]
    assert (cf["pairs"], cf["no_swappable_word"], cf["no_swappable_word_ids"]) == (1, 1, ["p2"])
    assert "1 text(s) without a word of the axis made no pair" in r.output and "p2" in r.output


def test_mode_swap_is_refused_for_an_axis_of_more_than_two_groups():
    with pytest.raises(BiaskitError) as exc:
        Swapper(load_axis("holistic:religion"), None, mode="swap")
    assert exc.value.code == "E005" and "two groups" in str(exc.value)
    with pytest.raises(BiaskitError) as exc:
        Swapper(load_axis("holistic:religion"), None, targets=["Buddhistt"])
    assert exc.value.code == "E421" and "Buddhist" in exc.value.options


def test_cli_holistic_axis_with_targets_gives_one_variant_per_target(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text('{"text": "I am a Buddhist monk."}\n', encoding="utf-8")
    out = tmp_path / "pairs.csv"
    argv = [
        "--quiet",
        "templates",
        "counterfactual",
        str(src),
        "--axis",
        "holistic:religion",
        "--target",
        "Muslim,atheist",
        "--no-syntax",
        "--out",
        str(out),
    ]
    r = CliRunner().invoke(app, argv)
    assert r.exit_code == 0, r.output
    t = read_table(out)
    assert t.column("variant").to_pylist() == ["original", "Muslim", "atheist"]
    assert t.column("text").to_pylist() == ["I am a Buddhist monk.", "I am a Muslim monk.", "I am an atheist monk."]
