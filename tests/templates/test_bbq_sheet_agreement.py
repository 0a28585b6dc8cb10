"""Agreement in translated BBQ sheets (cs, pl, sk): ``{NAME1=m:...|f:...}`` checked on import against the genders
that can fill the slot, through the gendered sets' parser, and filled by ``expand bbq`` with the person's form."""

from __future__ import annotations

import csv
import io
import re

import pytest

from biaskit.errors import BiaskitError
from biaskit.templates.bbq import expand_bbq
from biaskit.templates.bbq_sheet import bbq_sheet_rows, import_bbq_sheet, template_genders
from biaskit.templates.sheet import sheet_columns

# Gender_identity Q_id 1 (file row 2): "... the {{NAME2}} because they were running the meeting, and the {{NAME1}} was
# responsible for taking all the notes."; its people are the vocabulary's adult words, man and woman
DISAMBIG = "bbq/Gender_identity/2/Disambiguating_Context"
AMBIG = "bbq/Gender_identity/2/Ambiguous_Context"
GOOD = {
    "cs": "{{NAME2}} {NAME2=m:vedl|f:vedla} poradu, proto jsme čekali; {{NAME1}} {NAME1=m:měl|f:měla} na starosti zápis.",
    "pl": "{{NAME2}} {NAME2=m:prowadził|f:prowadziła} zebranie, więc czekaliśmy; {{NAME1}} {NAME1=m:robił|f:robiła} notatki.",
    "sk": "{{NAME2}} {NAME2=m:viedol|f:viedla} poradu, preto sme čakali; {{NAME1}} {NAME1=m:mal|f:mala} na starosti zápis.",
}
WORDS = {"cs": ("muž", "žena"), "pl": ("mężczyzna", "kobieta"), "sk": ("muž", "žena")}


def _vocab_id(word: str) -> str:
    return next(r["template_id"] for r in bbq_sheet_rows() if r["template_id"].startswith("bbq/vocabulary/") and r["source"] == word)


def _tiny_sheet(tmp_path, lang: str, cells: dict[str, str]):
    """A sheet of only the filled rows (the layout of `templates export-sheet --bbq`), status translated."""
    sources = {r["template_id"]: r for r in bbq_sheet_rows()}
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=sheet_columns([lang]), lineterminator="\n")
    w.writeheader()
    for tid, text in cells.items():
        w.writerow({**sources[tid], lang: text, f"{lang}_status": "translated", f"{lang}_translator": "test"})
    path = tmp_path / f"sheet_{lang}.csv"
    path.write_text(buf.getvalue(), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def english_q1_count() -> int:
    return sum(1 for q in expand_bbq(categories=["Gender_identity"]).column("question_index").to_pylist() if q == "1")


@pytest.mark.parametrize("lang", ["cs", "pl", "sk"])
def test_agreement_forms_of_each_gender_pass_and_expand_bbq_fills_the_persons_form(tmp_path, lang, english_q1_count):
    man, woman = WORDS[lang]
    cells = {DISAMBIG: GOOD[lang], _vocab_id("man"): man, _vocab_id("woman"): woman}
    out = tmp_path / f"bbq_{lang}"
    counts = import_bbq_sheet(_tiny_sheet(tmp_path, lang, cells), lang, out)
    assert counts["used"] == 3
    vocab = {r["Name"]: r["gender"] for r in csv.DictReader(io.StringIO((out / "vocabulary.csv").read_text(encoding="utf-8")))}
    assert (vocab[man], vocab[woman], vocab["Christian"]) == ("m", "f", "")  # the declared column, from the source words
    rows = [x for x in expand_bbq(out, categories=["Gender_identity"]).to_pylist() if x["question_index"] == "1"]
    assert len(rows) == english_q1_count > 0  # the same rows and lists: the same count
    forms = {"cs": (("vedl", "vedla"), ("měl", "měla")), "pl": (("prowadził", "prowadziła"), ("robił", "robiła"))}
    forms["sk"] = (("viedol", "viedla"), ("mal", "mala"))
    seen = set()
    for x in (x for x in rows if x["context_condition"] == "disambig"):
        second, first = x["context"].split("were late. ", 1)[1].split("; ")
        for said, (m_form, f_form) in zip((second, first), forms[lang]):
            person, verb = said.split(" ")[:2]
            assert (person, verb) in ((man, m_form), (woman, f_form)), said
            seen.add(person)
        assert "{" not in x["context"]
    assert seen == {man, woman}


def test_a_missing_form_for_a_gender_the_slot_takes_is_e417_naming_row_and_cell(tmp_path):
    bad = "{{NAME2}} {NAME2=m:vedl} poradu, proto jsme čekali; {{NAME1}} {NAME1=m:měl|f:měla} na starosti zápis."
    with pytest.raises(BiaskitError) as e:
        import_bbq_sheet(_tiny_sheet(tmp_path, "cs", {DISAMBIG: bad}), "cs", tmp_path / "out")
    msg = str(e.value)
    assert e.value.code == "E417" and "row 2" in msg and DISAMBIG in msg and "cs" in msg and "(f)" in msg and "{{NAME2}}" in msg
    assert not (tmp_path / "out").exists()


def test_agreement_with_a_slot_of_no_known_gender_is_e417(tmp_path):
    # Age Q_id 1 takes its people from a Names list (grandson, grandfather...): their Polish genders are not declared
    age = "bbq/Age/2/Ambiguous_Context"
    text = "Widziałem {{NAME1}} i {{NAME2}}, {NAME1=m:który|f:która} próbował zamówić taksówkę przez Ubera."
    with pytest.raises(BiaskitError) as e:
        import_bbq_sheet(_tiny_sheet(tmp_path, "pl", {age: text}), "pl", tmp_path / "out")
    assert e.value.code == "E417" and "row 2" in str(e.value) and age in str(e.value) and "no known grammatical gender" in str(e.value)


def test_a_broken_agreement_marker_is_e417_from_the_gendered_sets_parser(tmp_path):
    text = "{{NAME2}} {NAME2=m vedl|f:vedla} poradu; {{NAME1}} {NAME1=m:mal|f:mala} na starosti zápis."
    with pytest.raises(BiaskitError) as e:
        import_bbq_sheet(_tiny_sheet(tmp_path, "sk", {DISAMBIG: text}), "sk", tmp_path / "out")
    assert e.value.code == "E417" and "bad agreement alternative" in str(e.value) and DISAMBIG in str(e.value)


def test_a_sk_translation_that_loses_a_slot_is_e417_even_with_its_agreement_right(tmp_path):
    text = "Museli sme čakať, lebo niekto {NAME2=m:viedol|f:viedla} poradu; {{NAME1}} {NAME1=m:mal|f:mala} na starosti zápis."
    with pytest.raises(BiaskitError) as e:
        import_bbq_sheet(_tiny_sheet(tmp_path, "sk", {DISAMBIG: text}), "sk", tmp_path / "out")
    assert e.value.code == "E417" and "does not keep the slots" in str(e.value) and "{{NAME2}}" in str(e.value)


def test_gendered_slots_are_the_gender_identity_words_and_the_proper_names():
    g = template_genders()
    assert g["bbq/Gender_identity/2"] == {"NAME1": {"f", "m"}, "NAME2": {"f", "m"}}
    assert "bbq/Age/2" not in g and "bbq/Religion/2" not in g  # Names lists and ungendered words: not known
    proper = next(k for k in g if k.startswith("bbq/Race_ethnicity/"))
    assert g[proper]["NAME1"] == {"f", "m"}  # vocabulary_proper_names.csv: F and M names
    assert AMBIG.rsplit("/", 1)[0] in g


def test_expanding_a_marker_whose_person_has_no_declared_gender_is_e410_naming_the_template_row(tmp_path):
    cells = {DISAMBIG: GOOD["cs"], _vocab_id("man"): "muž", _vocab_id("woman"): "žena"}
    out = tmp_path / "bbq_cs"
    import_bbq_sheet(_tiny_sheet(tmp_path, "cs", cells), "cs", out)
    vocab = out / "vocabulary.csv"
    vocab.write_text(vocab.read_text(encoding="utf-8").replace("žena,,,f", "žena,,,"), encoding="utf-8")  # the translator clears it
    with pytest.raises(BiaskitError) as e:
        expand_bbq(out, categories=["Gender_identity"])
    assert e.value.code == "E410" and "Gender_identity" in str(e.value) and "row 2" in str(e.value) and "{NAME" in str(e.value)


def test_proper_name_rows_take_the_names_gender_from_the_proper_names_file(tmp_path):
    # SES file row 14 is a proper-name row: NAME1 is a first name, whose gender vocabulary_proper_names.csv gives
    cell = "bbq/SES/14/Disambiguating_Context"
    cells = {cell: "Ke zklamání {{NAME2}} {{NAME1}} {NAME1=m:řekl|f:řekla}, že vzdělání není důležité."}
    out = tmp_path / "bbq_cs"
    import_bbq_sheet(_tiny_sheet(tmp_path, "cs", cells), "cs", out)
    names = {r["Name"]: r["gender"] for r in csv.DictReader(io.StringIO((out / "vocabulary_proper_names.csv").read_text(encoding="utf-8")))}
    rows = [x for x in expand_bbq(out, categories=["SES"]).to_pylist() if x["template_row"] == 14 and x["context_condition"] == "disambig"]
    assert rows
    seen = set()
    for x in rows:
        m = re.search(r"Ke zklamání (\S+) (\S+) (\S+), že", x["context"])
        assert m is not None, x["context"]
        person, verb = m.group(2), m.group(3)
        assert verb == {"F": "řekla", "M": "řekl"}[names[person]], x["context"]
        seen.add(names[person])
    assert seen == {"F", "M"}
