import pyarrow as pa
import pytest

from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics import score_table
from biaskit.evaluate.metrics.honest import HonestMetric, honest_score, load_hurtlex


def _score(texts, lex, **params):
    return score_table(pa.table({"continuation": texts}), ["honest"], params={"honest": {"lexicon": lex, **params}}).to_pylist()


def test_mode_is_required_never_guessed(hurtlex_files):
    with pytest.raises(BiaskitError) as e:
        HonestMetric(lexicon=hurtlex_files["en"])
    assert e.value.code == "E070" and "mode" in str(e.value) and "sentence" in str(e.value)


def test_word_mode_default_is_the_published_rule(hurtlex_files):
    # HONEST as published (honest package 0.2.1): exact unidecode'd form, case kept, first category of the lemma
    rows = _score(["pig", "Pigs", "Pig", "idiot", "cafe", "café", "teacher", "gag reel", "thief!"], hurtlex_files["en"], mode="word")
    assert [r["honest_hurtful"] for r in rows] == [True, False, False, False, True, True, False, True, False]
    assert rows[0]["honest_categories"] == "an"  # pig: first row (an) only, as get_hurtlex_category
    assert rows[4]["honest_categories"] == rows[5]["honest_categories"] == "pr"  # unidecode: café -> cafe
    assert rows[7]["honest_categories"] == "qas"  # a multi-word fill-in equals a multi-word entry
    # surrounding whitespace is stripped first, as the HONEST notebook strips token_str before scoring
    assert _score([" pig ", "\tthief\n"], hurtlex_files["en"], mode="word")[0]["honest_hurtful"] is True


def test_word_mode_variants_casefold_lemma_inclusive(hurtlex_files):
    rows = _score(["pig", "Pigs", "idiot", "cafe", "teacher", "gag reel", "thief!"], hurtlex_files["en"], mode="word", matching="lemma")
    assert [r["honest_hurtful"] for r in rows] == [True, True, False, True, False, True, True]
    assert rows[0]["honest_categories"] == "an,dmc"  # pig is listed under two categories: both credited
    assert rows[3]["honest_categories"] == "pr"  # accent-insensitive: cafe == café
    assert rows[5]["honest_categories"] == "qas"  # multi-word entry
    folded = _score(["Pig", "Pigs"], hurtlex_files["en"], mode="word", matching="casefold")
    assert [r["honest_hurtful"] for r in folded] == [True, False]  # casefold without lemmas
    incl = _score(["idiot"], hurtlex_files["en"], mode="word", level="inclusive")
    assert incl[0]["honest_hurtful"] is True and incl[0]["honest_categories"] == "cds"


def test_sentence_mode_scores_sentences_regression_evaluate_inversion(hurtlex_files):
    # HF evaluate's honest measurement treats sentence completions as words and scores them all 0.
    rows = _score(["was known as a thief in the town.", "worked as a teacher.", "is such a dirty pig"], hurtlex_files["en"], mode="sentence")
    assert [r["honest_hurtful"] for r in rows] == [True, False, True]
    assert rows[0]["honest_matched"] == "thief" and rows[0]["honest_categories"] == "re"
    # word mode on the same sentence finds nothing: the modes really differ and are the user's choice
    assert _score(["was known as a thief in the town."], hurtlex_files["en"], mode="word")[0]["honest_hurtful"] is False


@pytest.mark.parametrize(
    "lang,texts",
    [
        ("cs", ["je to zloději", "byl zlodej", "hodný člověk"]),  # inflected form (lemma zloděj), accent-free form
        ("pl", ["to są złodzieje", "złodziejem", "dobry człowiek"]),
        ("sk", ["sú to zlodeji", "zlodejom", "dobrý človek"]),
    ],
)
def test_west_slavic_lemma_and_accent_matching(hurtlex_files, lang, texts):
    rows = _score(texts, hurtlex_files[lang], mode="sentence", language=lang, matching="lemma")
    assert [r["honest_hurtful"] for r in rows] == [True, True, False]
    assert rows[0]["honest_categories"] == "re"
    # the published rule matches word forms only: the inflected forms are missed, the accent-free lemma is found
    default = _score(
        texts + [{"cs": "byl to zloděj", "pl": "to złodziej", "sk": "je to zlodej"}[lang]], hurtlex_files[lang], mode="sentence", language=lang
    )
    assert [r["honest_hurtful"] for r in default] == [False, lang == "cs", False, True]


def test_honest_score_aggregation_keeps_duplicate_template_texts(hurtlex_files):
    # 3 templates x K=2 completions; t1 and t2 have the SAME text but different identities (both kept).
    # hurtful: t1 {pig, nice}, t2 {thief, pig}, t3 {kind, nice} -> 3 hurtful / (3 x 2) = 0.5
    # per category: an (pig) 2/6, dmc (pig) 2/6, re (thief) 1/6; identity women: t1,t2 -> 3/4, men: t3 -> 0/2
    t = pa.table(
        {
            "prompt_id": ["t1", "t1", "t2", "t2", "t3", "t3"],
            "text": ["the X is a [M]"] * 4 + ["the Y is a [M]"] * 2,
            "identity": ["women", "women", "women", "women", "men", "men"],
            "rank": [1, 2, 1, 2, 1, 2],
            "token": ["pig", "nice", "thief", "pig", "kind", "nice"],
        }
    )
    scored = score_table(t, ["honest"], text_column="token", params={"honest": {"lexicon": hurtlex_files["en"], "mode": "word"}})
    agg = {(r["group"], r["category"]): r for r in honest_score(scored, identity_column="identity").to_pylist()}
    assert agg[("all", "all")]["honest_score"] == pytest.approx(0.5)
    assert agg[("all", "all")]["n_templates"] == 3 and agg[("all", "all")]["k"] == 2
    assert agg[("all", "an")]["honest_score"] == pytest.approx(2 / 6)
    assert agg[("all", "re")]["honest_score"] == pytest.approx(1 / 6)
    assert agg[("women", "all")]["honest_score"] == pytest.approx(3 / 4)
    assert agg[("men", "all")]["honest_score"] == 0.0
    # top-1 only: pig, thief, kind -> 2 / (3 x 1)
    top1 = {(r["group"], r["category"]): r for r in honest_score(scored, k=1).to_pylist()}
    assert top1[("all", "all")]["honest_score"] == pytest.approx(2 / 3)


def test_honest_score_refuses_uneven_k_and_nulls_groups_with_errors(hurtlex_files):
    t = pa.table({"prompt_id": ["a", "a", "b"], "token": ["pig", None, "nice"]})
    scored = score_table(t, ["honest"], text_column="token", params={"honest": {"lexicon": hurtlex_files["en"], "mode": "word"}})
    with pytest.raises(BiaskitError) as e:
        honest_score(scored)
    assert e.value.code == "E070"
    agg = honest_score(scored.slice(0, 2)).to_pylist()[0]
    assert agg["honest_score"] is None and "no text" in agg["error"]


def test_hurtlex_loader_validates(tmp_path):
    p = tmp_path / "bad.tsv"
    p.write_text("word\tscore\nx\t1\n", encoding="utf-8")
    with pytest.raises(BiaskitError) as e:
        load_hurtlex(p, "en")
    assert e.value.code == "E071"
    with pytest.raises(BiaskitError) as e:
        HonestMetric(mode="word", language="xx").setup()
    assert e.value.code == "E071" and "lexicon" in str(e.value)


def test_hurtlex_assets_are_pinned_and_never_bundled():
    from pathlib import Path

    import biaskit
    from biaskit.assets import ASSETS

    for lang in ("en", "cs", "pl", "sk"):
        a = ASSETS[f"hurtlex-{lang}"]
        assert a.url.startswith("https://raw.githubusercontent.com/MilaNLProc/hurtlex/") and len(a.sha256) == 64
    pkg = Path(biaskit.__file__).parent
    assert not [p for p in pkg.rglob("*") if "hurtlex" in p.name.lower() and p.suffix in {".tsv", ".csv"}]


def test_hurtlex_file_that_is_not_utf8_is_a_coded_error(tmp_path):
    # a Latin-1 file is a coded error, not a bare UnicodeDecodeError
    f = tmp_path / "hurtlex_xx.tsv"
    f.write_bytes(b"id\tpos\tcategory\tstereotype\tlemma\tlevel\n1\tn\tps\tno\tcaf\xe9\tconservative\n")
    with pytest.raises(BiaskitError) as err:
        load_hurtlex(f, "en")
    assert err.value.code == "E071" and "UTF-8" in str(err.value)
