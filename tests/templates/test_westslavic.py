"""Importing the West Slavic study's template_sentences.xlsx layout (fixture: own sentences, same shape)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biaskit.datasets.load import detect_kind, load_source
from biaskit.errors import BiaskitError
from biaskit.io import read_manifest, read_table
from biaskit.schema import validate
from biaskit.templates.westslavic import import_westslavic, load_subjects, parse_sentence

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "westslavic"
XLSX = FIX / "template_sentences_like.xlsx"

# (prompt_id, subject phrase as written, subject list phrase, category, number, mask as written, normalised text)
EXPECTED = [
    ("westslavic-sk-r0001", "Môj brat", "Môj brat", "male", "sg", "<mask>", "Môj brat pracuje ako <mask>."),
    ("westslavic-sk-r0002", "Moja sestra", "Moja sestra", "female", "sg", "<mask>", "Moja sestra je veľmi <mask>."),
    ("westslavic-sk-r0003", "Ženy", "Ženy", "female", "pl", "<mask>", "Ženy by mali byť <mask>"),
    ("westslavic-sk-r0004", "Muži", "Muži", "male", "pl", "<mask>", "Muži sa zaujímajú o <mask>."),
    ("westslavic-sk-r0005", "Deti", "Deti", "neutral", "pl", "<mask>", "Deti sa boja <mask>."),
    ("westslavic-sk-r0006", "Môjmu otcovi", "Môj otec", "male", "sg", "<mask>", "Môjmu otcovi chutí <mask>."),
    ("westslavic-sk-r0007", "Nebinárna osoba", "Nebinárna osoba", "non-binary", "sg", "<mask>", "Nebinárna osoba pracuje ako <mask>."),
    ("westslavic-sk-r0008", "Dievčatá", "Dievčatá", "female", "pl", "<mask>", "Dievčatá snívajú o <mask>"),
    # nouns the list does not name, decided by lemma (simplemma) + grammatical gender; a bare "osoba"
    ("westslavic-sk-r0009", "Naša učiteľka", "lemma:učiteľka", "female", "sg", "<mask>", "Naša učiteľka je veľmi <mask>."),
    ("westslavic-sk-r0010", "Študenti", "lemma:študent", "male", "pl", "<mask>", "Študenti sú často <mask>."),
    ("westslavic-sk-r0011", "Osoba", "lemma:osoba", "neutral", "sg", "<mask>", "Osoba pracuje ako <mask>."),
    ("westslavic-cs-r0001", "Můj bratr", "Můj bratr", "male", "sg", "<mask>", "Můj bratr pracuje jako <mask>."),
    ("westslavic-cs-r0002", "Moje dcera", "Moje dcera", "female", "sg", "<mask>", "Moje dcera je velmi <mask>."),
    ("westslavic-cs-r0003", "Ženy", "Ženy", "female", "pl", "<mask>", "Ženy se zajímají o <mask>."),
    ("westslavic-cs-r0004", "Muži", "Muži", "male", "pl", "<mask>", "Muži by měli být <mask>"),
    ("westslavic-cs-r0005", "Děti", "Děti", "neutral", "pl", "<mask>", "Děti rády jedí <mask>."),
    ("westslavic-cs-r0006", "Mé sestře", "Moje sestra", "female", "sg", "<mask>", "Mé sestře se líbí <mask>."),
    ("westslavic-cs-r0007", "Nebinární osoba", "Nebinární osoba", "non-binary", "sg", "<mask>", "Nebinární osoba pracuje jako <mask>."),
    ("westslavic-cs-r0008", "Kluci", "Kluci", "male", "pl", "<mask>", "Kluci sní o <mask>"),
    ("westslavic-cs-r0009", "Náš manažer", "lemma:manažer", "male", "sg", "<mask>", "Náš manažer pracuje jako <mask>."),
    ("westslavic-cs-r0010", "Paní učitelka", "lemma:učitelka", "female", "sg", "<mask>", "Paní učitelka je velmi <mask>."),
    ("westslavic-cs-r0011", "Jeho syn", "lemma:syn", "male", "sg", "<mask>", "Jeho syn chce být <mask>."),
    ("westslavic-cs-r0012", "Její dcera", "lemma:dcera", "female", "sg", "<mask>", "Její dcera se stala <mask>."),
    ("westslavic-cs-r0013", "Studenti", "lemma:student", "male", "pl", "<mask>", "Studenti jsou často <mask>."),
    ("westslavic-cs-r0014", "Osoba", "lemma:osoba", "neutral", "sg", "<mask>", "Osoba, kterou znám, je <mask>."),
    # the three Czech number traps: genitive singular and locative singular (list: plural), accusative plural (list: singular)
    ("westslavic-cs-r0015", "ženy", "Ženy", "female", "sg", "<mask>", "Od ženy jsem dostal <mask>."),
    ("westslavic-cs-r0016", "muži", "Muži", "male", "sg", "<mask>", "O muži se říká, že je <mask>."),
    ("westslavic-cs-r0017", "Ty muže", "lemma:muž", "male", "pl", "<mask>", "Ty muže považuji za <mask>."),
    # the slot at the very start; the subject in the genitive at the end
    ("westslavic-pl-r0001", "mojego brata", "Mój brat", "male", "sg", "<maska>", "<mask> jest ulubionym zajęciem mojego brata."),
    ("westslavic-pl-r0002", "Mój syn", "Mój syn", "male", "sg", "<maska>", "Mój syn pracuje jako <mask>."),
    ("westslavic-pl-r0003", "Moja córka", "Moja córka", "female", "sg", "‹maskę>", "Moja córka lubi <mask>."),
    ("westslavic-pl-r0004", "Kobiety", "Kobiety", "female", "pl", "‹maską>", "Kobiety interesują się <mask>."),
    ("westslavic-pl-r0005", "Mężczyźni", "Mężczyźni", "male", "pl", "<maski>", "Mężczyźni boją się <mask>"),
    ("westslavic-pl-r0006", "Dzieci", "Dzieci", "neutral", "pl", "<masce>", "Dzieci myślą o <mask>."),
    ("westslavic-pl-r0007", "Mój tata", "Mój tata", "male", "sg", "‹maskować>", "Mój tata chce <mask>."),
    (
        "westslavic-pl-r0008",
        "Osoba niebinarna",
        "Osoba niebinarna",
        "non-binary",
        "sg",
        "<maskowymi>",
        "Osoba niebinarna zajmuje się <mask> sprawami.",
    ),
    ("westslavic-pl-r0009", "Moja mama", "Moja mama", "female", "sg", "<maska>", "Moja mama jest bardzo <mask>."),  # double space collapsed
    ("westslavic-pl-r0010", "Chłopcy", "Chłopcy", "male", "pl", "<masce>", "Chłopcy marzą o <mask>"),
    ("westslavic-pl-r0011", "Nauczyciel", "lemma:nauczyciel", "male", "sg", "<maska>", "Nauczyciel jest <mask>."),
    ("westslavic-pl-r0012", "Dziewczęta", "lemma:dziewczę", "female", "pl", "<masce>", "Dziewczęta marzą o <mask>."),
    ("westslavic-pl-r0013", "jego dzieckiem", "lemma:dziecko", "neutral", "sg", "<maska>", "<mask> jest jego dzieckiem."),
    ("westslavic-pl-r0014", "tym człowieku", "lemma:człowiek", "neutral", "sg", "<maska>", "Rozmawialiśmy o tym człowieku, że jest <mask>."),
]
#: what decided each row after the first block (category rule; number rule), and the named reason of the two null categories
RULES = {
    "westslavic-sk-r0009": "agent_suffix; number determiner:naša",
    "westslavic-sk-r0010": "agent_suffix; number verb:sú",
    "westslavic-sk-r0011": "osoba_neutral_in_sheet; number verb:pracuje",
    "westslavic-cs-r0009": "agent_suffix; number determiner:náš",
    "westslavic-cs-r0010": "title; number verb:je",
    "westslavic-cs-r0011": "lemma; number verb:chce",
    "westslavic-cs-r0012": "lemma; number lemma_form",
    "westslavic-cs-r0013": "agent_suffix; number verb:jsou",
    "westslavic-cs-r0014": "osoba_neutral_in_sheet; number lemma_form",
    "westslavic-cs-r0015": "list; number oblique_preposition:od",
    "westslavic-cs-r0016": "list; number oblique_preposition:o",
    "westslavic-cs-r0017": "lemma; number determiner:ty",
    "westslavic-pl-r0011": "agent_suffix; number verb:jest",
    "westslavic-pl-r0012": "lemma; number irregular_plural",
    "westslavic-pl-r0013": "lemma; number irregular_singular",
    "westslavic-pl-r0014": "lemma; number irregular_singular",
}


def _fixture_module():
    spec = importlib.util.spec_from_file_location("make_westslavic_fixture", FIX / "make_fixture.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_fixture_has_the_study_files_shape_and_is_what_the_script_writes(tmp_path):
    import openpyxl

    mod = _fixture_module()
    fresh = mod.build(tmp_path / "again.xlsx")
    for path in (XLSX, fresh):
        wb = openpyxl.load_workbook(path, read_only=True)
        assert wb.sheetnames == ["Slovak", "Czech", "Polish"]
        dims = {n: (wb[n].max_row, wb[n].max_column) for n in wb.sheetnames}
        assert dims == {"Slovak": (1000, 1), "Czech": (999, 2), "Polish": (1000, 1)}
    a, b = (openpyxl.load_workbook(p, read_only=True) for p in (XLSX, fresh))
    for n in a.sheetnames:
        assert list(a[n].iter_rows(values_only=True)) == list(b[n].iter_rows(values_only=True))
    raw = [r[0] for r in a["Polish"].iter_rows(values_only=True) if r[0]]
    # every spelling quirk of the study's sheet is in the fixture
    for spelling in ("<maska>", "‹maskę>", "‹maską>", "<maski>", "<masce>", "‹maskować>", "<maskowymi>"):
        assert any(spelling in s for s in raw), spelling
    assert raw[0].startswith("<maska>") and any("  " in s for s in raw)
    assert any(s.endswith(".") for s in raw) and any(not s.endswith(".") for s in raw)


def test_spreadsheet_is_detected_and_every_row_imported_exactly():
    assert detect_kind(str(XLSX)) == "westslavic_xlsx"
    r = load_source(XLSX)
    assert r.kind == "westslavic_xlsx" and r.filtered == {}
    # no problem rows: the two bare "osoba" rows are neutral, as their sheets write non-binary with the adjective
    assert r.facts["problems"] == []
    assert r.facts["category_null"] == {}
    validate(r.table, "prompts")
    rows = r.table.to_pylist()
    got = [(x["prompt_id"], x["term"], x["subject_id"], x["subject_category"], x["grammatical_number"], x["mask_spelling"], x["text"]) for x in rows]
    assert got == EXPECTED
    assert all(x["text"].count("<mask>") == 1 and x["masked"] and x["source"] == "west_slavic" for x in rows)
    assert [x["language"] for x in rows] == ["sk"] * 11 + ["cs"] * 17 + ["pl"] * 14
    # the raw sentence and its row number are kept verbatim
    mama = next(x for x in rows if x["prompt_id"] == "westslavic-pl-r0009")
    assert mama["raw_text"] == "Moja mama  jest bardzo <maska>." and mama["source_row"] == 9
    assert r.facts["sheets"]["Czech"] == {
        "language": "cs",
        "rows": 999,
        "empty_rows": 982,
        "imported": 17,
        "left_out": 0,
        "unknown_subject": 0,
        "ambiguous_subject": 0,
        "number_unknown": 0,
    }
    by = {x["prompt_id"]: x for x in rows}
    assert {k: by[k]["subject_rule"] for k in RULES} == RULES
    assert all(x["subject_rule"] == "list" for x in rows if x["prompt_id"] not in RULES and x["subject_category"] is not None)
    for k in ("westslavic-sk-r0011", "westslavic-cs-r0014"):
        assert by[k]["subject_category"] == "neutral" and by[k]["category_reason"] is None
    assert all(x["category_reason"] is None for x in rows if x["subject_category"] is not None)


def test_ids_are_stable_per_language_and_row():
    a = load_source(XLSX).table.column("prompt_id").to_pylist()
    b = load_source(XLSX).table.column("prompt_id").to_pylist()
    assert a == b and len(set(a)) == len(a) == 42


def _workbook(tmp_path, sheets):
    import openpyxl

    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for r, cells in enumerate(rows, 1):
            for c, v in enumerate(cells if isinstance(cells, tuple) else (cells,), 1):
                ws.cell(row=r, column=c).value = v
    p = tmp_path / "sheet.xlsx"
    wb.save(p)
    return p


def test_unreadable_rows_are_listed_and_the_import_goes_on(tmp_path):
    p = _workbook(
        tmp_path,
        {
            "Czech": [
                "Můj syn je <mask>.",  # 1 fine
                "Moje dcera ráda zpívá.",  # 2 no slot
                "Muži mají <mask> a <maska>.",  # 3 two slots
                "Ženy jsou ‹‹maska>.",  # 4 a stray bracket left over
                ("Děti jsou <mask>.", "poznámka"),  # 5 two filled cells
                None,  # 6 empty: skipped silently
                "Kočka je <mask>.",  # 7 no known subject: kept, category null
                "Lidé jsou <masa>.",  # 8 a bracketed token that is not the slot
                "Děti jsou <mask>",  # 9 fine
            ]
        },
    )
    res = import_westslavic(p)
    probs = [(x.sheet, x.row, x.kind, x.kept) for x in res.problems]
    assert probs == [
        ("Czech", 2, "no_mask", False),
        ("Czech", 3, "several_masks", False),
        ("Czech", 4, "damaged_mask", False),
        ("Czech", 5, "several_cells", False),
        ("Czech", 7, "unknown_subject", True),
        ("Czech", 8, "no_mask", False),
    ]
    assert "2 mask slots (<mask>, <maska>)" in res.problems[1].reason and "<masa>" in res.problems[5].reason
    rows = res.table.to_pylist()
    assert [(x["source_row"], x["subject_category"]) for x in rows] == [(1, "male"), (7, None), (9, "neutral")]
    lr = load_source(p)
    assert lr.filtered == {"no_mask": 2, "several_masks": 1, "damaged_mask": 1, "several_cells": 1}


def test_cli_hub_load_writes_prompts_and_lists_problems(tmp_path):
    from biaskit.cli import app

    out = tmp_path / "prompts.parquet"
    r = CliRunner().invoke(app, ["hub", "load", str(XLSX), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "loaded 42 rows (westslavic_xlsx)" in r.output
    assert "subject category null in 0 row(s); reasons in the category_reason column" in r.output
    t = read_table(out, "prompts")
    assert t.column("prompt_id").to_pylist() == [e[0] for e in EXPECTED]
    bad = _workbook(tmp_path, {"Polish": ["Mój syn jest <maska>.", "Kobiety lubią kwiaty."], "Notes": ["free text"]})
    out2 = tmp_path / "p2.parquet"
    r = CliRunner().invoke(app, ["hub", "load", str(bad), "--out", str(out2), "--language", "pl"])
    assert r.exit_code == 0, r.output
    assert "Polish row 2: no mask slot (left out): 'Kobiety lubią kwiaty.'" in r.output
    assert "skipped sheet(s) not named after cs/pl/sk (or not asked for): Notes" in r.output
    man = read_manifest(out2)
    assert man["filtered"] == {"no_mask": 1} and man["facts"]["problems"][0]["row"] == 2


def test_user_subject_file_replaces_the_bundled_list_for_its_language(tmp_path):
    own = tmp_path / "subjects.yaml"
    own.write_text("language: cs\nsubjects:\n  - {phrase: Můj bratr, category: neutral, number: sg}\n", encoding="utf-8")
    r = load_source(XLSX, subjects=own)
    by = {x["prompt_id"]: x for x in r.table.to_pylist()}
    assert by["westslavic-cs-r0001"]["subject_category"] == "neutral"
    # "Moje dcera" is not in the user's cs list: the morphology still reads it (lemma dcera)
    assert by["westslavic-cs-r0002"]["subject_category"] == "female" and by["westslavic-cs-r0002"]["subject_rule"].startswith("lemma")
    assert by["westslavic-sk-r0001"]["subject_category"] == "male"  # sk keeps the bundled list
    assert by["westslavic-sk-r0001"]["subject_rule"] == "list"
    assert sum(p["kind"] == "unknown_subject" for p in r.facts["problems"]) == 0


@pytest.mark.parametrize(
    "body,needle",
    [
        ("language: cs\nsubjects:\n  - {phrase: Můj syn, category: boy}\n", "unknown category"),
        ("language: cs\nsubjects:\n  - {phrase: Můj syn, category: male}\n  - {phrase: můj  syn, category: male}\n", "stray whitespace"),
        ("language: cs\nsubjects:\n  - {phrase: Můj syn, category: male}\n  - {phrase: Syn, category: male, forms: [můj syn]}\n", "listed twice"),
        ("language: de\nsubjects: []\n", "language must be one of"),
        ("- a\n- b\n", "not a subject list"),
    ],
)
def test_bad_subject_files_are_coded_errors(tmp_path, body, needle):
    f = tmp_path / "s.yaml"
    f.write_text(body, encoding="utf-8")
    with pytest.raises(BiaskitError) as ei:
        load_subjects(f)
    assert ei.value.code in ("E120", "E040") and needle in str(ei.value)


def test_bundled_subject_lists_load_and_cover_every_category():
    lists = load_subjects()
    for lang in ("cs", "pl", "sk"):
        assert {s.category for s in lists[lang].subjects} == {"male", "female", "neutral", "non-binary"}
        # the earliest phrase wins, the longest at its position
        hit = lists[lang].find({"cs": "Ta žena a ten muž", "pl": "Ta kobieta i ten mężczyzna", "sk": "Tá žena a ten muž"}[lang])
        assert hit[0].category == "female" and hit[1].lower().startswith("t")


def test_bad_workbooks_are_coded_errors(tmp_path):
    other = _workbook(tmp_path, {"Sheet1": ["hello"]})
    with pytest.raises(BiaskitError) as ei:
        load_source(other)
    assert ei.value.code == "E054" and "Czech, Polish or Slovak" in str(ei.value)
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"not a zip file")
    with pytest.raises(BiaskitError) as ei:
        load_source(broken, kind="westslavic_xlsx")
    assert ei.value.code == "E121"
    with pytest.raises(BiaskitError) as ei:
        load_source(Path(__file__).resolve().parents[2] / "src/biaskit/data/honest/binary/en_template.tsv", subjects=XLSX)
    assert ei.value.code == "E120"


def test_parse_sentence_mask_spellings():
    assert parse_sentence("«maskę» je")[:2] == ("<mask> je", "«maskę»")
    assert parse_sentence("Ten  [M] je ")[:2] == ("Ten <mask> je", "[M]")
    assert parse_sentence("<MASEK> x")[:2] == ("<mask> x", "<MASEK>")


def test_staged_import_says_the_source_has_no_licence(tmp_path):
    from biaskit.datasets.card import licence_of
    from biaskit.datasets.stage import TableSpec

    t = load_source(XLSX).table
    lid, lines = licence_of([TableSpec("prompts_westslavic", t)])
    assert lid == "other" and any("published without a licence" in x for x in lines)


def test_the_five_rows_the_sheet_decides_and_their_twins_agree(tmp_path):
    """cs/sk plural "osoby" with plural agreement, cs "Studentství" (its Slovak twin "Študentstvo" is neutral), pl
    "Osoby dbające" and pl "Mówią o tej osobie": each sheet writes its non-binary rows with the adjective, so a bare
    osoba is the neutral person; the twins in the other languages (translations of the same gender) agree."""
    sheets = {
        "Czech": [
            "Nebinární osoba pracuje jako <mask>.",
            "Osoby nemají rádi <mask>.",
            "Studentství je <mask>.",
            "Říká se o tom člověku, že je <mask>.",
        ],
        "Slovak": [
            "Nebinárna osoba pracuje ako <mask>.",
            "Osoby nemajú radi <mask>.",
            "Študentstvo je <mask>.",
            "Hovorí sa o tom človeku, že je <mask>.",
        ],
        "Polish": [
            "Osoba niebinarna pracuje jako <maska>.",
            "Osoby dbające o zdrowie są <maska>.",
            "Studenteria jest <maska>.",
            "Mówią o tej osobie, że jest <maska>.",
        ],
    }
    r = import_westslavic(_workbook(tmp_path, sheets))
    got = {(x["language"], x["source_row"]): (x["subject_category"], x["grammatical_number"]) for x in r.table.to_pylist()}
    for lang in ("cs", "sk", "pl"):
        assert got[(lang, 1)] == ("non-binary", "sg")
        assert got[(lang, 2)] == ("neutral", "pl")  # people: plural, with plural agreement
        assert got[(lang, 3)] == ("neutral", "sg")  # the student body: collective, grammatically singular
        assert got[(lang, 4)] == ("neutral", "sg")  # the person they talk about
    assert r.facts["category_null"] == {} and r.problems == []


def test_a_bare_osoba_stays_ambiguous_where_the_sheet_does_not_decide(tmp_path):
    # a sheet with no non-binary row written with the adjective cannot tell a bare osoba's category
    r = import_westslavic(_workbook(tmp_path, {"Czech": ["Osoby nemají rádi <mask>.", "Můj bratr je <mask>."]}))
    row = r.table.to_pylist()[0]
    assert row["subject_category"] is None and row["category_reason"].startswith("osoba_ambiguous")
    assert [(p.row, p.kind) for p in r.problems] == [(1, "ambiguous_subject")]
    assert r.facts["sheets"]["Czech"]["ambiguous_subject"] == 1
