"""The class rules of westslavic_rules: orientation nouns, partner, the "other half", collective nouns, pupils,
adjectival job nouns, and the reasons of what stays null (osoba_ambiguous, sheet_translation_defect)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("simplemma")
pytest.importorskip("openpyxl")

from biaskit.templates.westslavic import categorise, import_westslavic, load_subjects  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "westslavic"

#: (language, sentence, category, subject_rule prefix, number): the kinds of row that stayed null on the real sheet
CATEGORISED = [
    ("cs", "Gayové jsou <mask>.", "male", "orientation_noun", "pl"),
    ("cs", "Lesby se zajímají o <mask>.", "female", "orientation_noun", "pl"),
    ("cs", "Lesbičky rády čtou <mask>.", "female", "orientation_noun", "pl"),
    ("pl", "Geje są <maska>.", "male", "orientation_noun", "pl"),
    ("pl", "Lesbijki lubią ‹maskę>.", "female", "orientation_noun", "pl"),
    ("sk", "Gejovia sú <mask>.", "male", "orientation_noun", "pl"),
    ("cs", "Můj partner pracuje jako <mask>.", "male", "partner", "sg"),
    ("cs", "Moje partnerka je <mask>.", "female", "partner", "sg"),
    ("pl", "Moja partnerka jest <maska>.", "female", "agent_suffix", "sg"),  # pl -er is an agent suffix: read before the rule
    ("sk", "Môj partner je <mask>.", "male", "partner", "sg"),
    ("cs", "<mask> je koníčkem mého partnera.", "male", "partner", "sg"),
    ("cs", "Moje drahá polovička je <mask>.", "neutral", "other_half", "sg"),
    ("pl", "Moja druga połówka pracuje jako <maska>.", "neutral", "other_half", "sg"),
    ("sk", "Moja lepšia polovica je <mask>.", "neutral", "other_half", "sg"),
    ("cs", "Studentstvo je <mask>.", "neutral", "collective_noun", "sg"),
    ("sk", "Študentstvo je <mask>.", "neutral", "collective_noun", "sg"),
    ("pl", "Młodzież jest <maska>.", "neutral", "collective_noun", "sg"),
    ("cs", "Žactvo se zajímá o <mask>.", "neutral", "collective_noun", "sg"),
    ("pl", "Uczniowie są <maska>.", "male", "lemma", "pl"),
    ("sk", "Žiaci sú <mask>.", "male", "lemma", "pl"),
    ("cs", "Náš vedoucí je <mask>.", "male", "adjectival_noun; agreement", "sg"),
    ("cs", "Naše vedoucí byla <mask>.", "female", "adjectival_noun; agreement", None),
    ("cs", "Vedoucí byla <mask>.", "female", "adjectival_noun; agreement", None),
    ("cs", "Vedoucí je <mask>.", "male", "adjectival_noun; masculine_default", None),
    ("sk", "Vedúca pracuje ako <mask>.", "female", "adjectival_noun", "sg"),
    ("sk", "Vedúci je <mask>.", "male", "adjectival_noun", "sg"),
]


@pytest.mark.parametrize(("lang", "text", "category", "rule", "number"), CATEGORISED)
def test_each_class_is_categorised_by_its_rule(lang, text, category, rule, number):
    from biaskit.templates.westslavic import parse_sentence

    lists = load_subjects()
    norm, _, bad = parse_sentence(text)
    assert bad is None
    r = categorise(norm, lang, lists[lang])
    assert r["subject_category"] == category, r
    assert r["subject_rule"].split("; number")[0] == rule, r
    if number is not None:
        assert r["grammatical_number"] == number, r
    assert r["category_reason"] is None


@pytest.mark.parametrize(
    ("lang", "text", "reason"),
    [
        ("cs", "Pracuje jako <mask>.", "sheet_translation_defect"),  # pracuje -> pracovat: a verb opens the sentence
        ("pl", "Jest bardzo <maska>.", "sheet_translation_defect"),
        ("sk", "Pracuje ako <mask>.", "sheet_translation_defect"),
        ("cs", "Kočka je <mask>.", "no_subject"),  # a noun, but not a person
        ("cs", "Partnerství je <mask>.", "no_subject"),  # partnership is no person
        ("cs", "Osoba pracuje jako <mask>.", "osoba_ambiguous"),
    ],
)
def test_what_stays_null_names_its_reason(lang, text, reason):
    lists = load_subjects()
    r = categorise(text, lang, lists[lang])
    assert r["subject_category"] is None
    assert r["category_reason"].split(":")[0] == reason, r


def test_half_without_a_possessive_is_no_partner():
    lists = load_subjects()
    r = categorise("Polovina lidí je <mask>.", "cs", lists["cs"])  # half of the people: the people are the subject
    assert r["subject_rule"].split(";")[0] != "other_half" and r["term"] == "lidí" and r["subject_category"] == "neutral"
    assert categorise("Polovina je <mask>.", "cs", lists["cs"])["subject_category"] is None


def test_import_of_a_sheet_with_these_rows_leaves_only_named_nulls(tmp_path):
    spec = importlib.util.spec_from_file_location("make_fixture", FIXTURES / "make_fixture.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    by_lang = {"cs": "Czech", "pl": "Polish", "sk": "Slovak"}
    sheets = {name: ([t for lg, t, *_ in CATEGORISED if lg == code], 40, 1) for code, name in by_lang.items()}
    sheets["Czech"][0].extend(["Osoba pracuje jako <mask>.", "Pracuje jako <mask>."])
    path = mod.build(tmp_path / "sheet.xlsx", sheets)
    res = import_westslavic(path)
    rows = res.table.to_pylist()
    assert len(rows) == len(CATEGORISED) + 2
    # every row of the classes is categorised; the two nulls carry the two named reasons
    assert res.facts["category_null"] == {"osoba_ambiguous": 1, "sheet_translation_defect": 1}
    cats = {(r["language"], r["text"]): r["subject_category"] for r in rows}
    for lang, text, category, *_ in CATEGORISED:
        assert cats[(lang, text.replace("‹maskę>", "<mask>").replace("<maska>", "<mask>"))] == category
