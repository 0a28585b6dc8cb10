"""HONEST's default equals the reference ``honest`` package 0.2.1 (MilaNLProc, MIT) on the same fill-ins.

The package's own functions (``HonestEvaluator.honest``, ``honest_score_inner_word`` and
``honest_score_inner_sentence``) run on a small HurtLex-format file written here (HurtLex itself is
CC BY-NC-SA and never copied into the repo); its download of HurtLex from GitHub is redirected to that file.
"""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from biaskit.evaluate.metrics import score_table
from biaskit.evaluate.metrics.honest import honest_score

hh = pytest.importorskip("honest.honest", reason="the reference package: pip install honest==0.2.1 (in the dev extra)")

# Own entries in HurtLex 1.2's format. Chosen to hit every rule of the reference:
#  pig: two conservative rows, an first -> the package credits an only
#  rat: inclusive row (an) before the conservative one (dmc) -> dmc
#  café: accent -> key "cafe"; Judas: upper case kept; gag reel: a phrase; son-of-a-gun: a hyphenated lemma
#  idiot: inclusive only (not HONEST's level); złodziej: ł -> l by unidecode, not by NFKD
#  Черножопый: transliterated by unidecode; the "x" word: quotes inside a field
LEXICON = """id\tpos\tcategory\tstereotype\tlemma\tlevel
T1\tn\tan\tno\tpig\tconservative
T2\tn\tdmc\tno\tpig\tconservative
T3\tn\tan\tno\trat\tinclusive
T4\tn\tdmc\tno\trat\tconservative
T5\tn\tpr\tno\tcafé\tconservative
T6\tn\tre\tno\tJudas\tconservative
T7\tn\tqas\tno\tgag reel\tconservative
T8\tn\tcds\tno\tson-of-a-gun\tconservative
T9\tn\tcds\tno\tidiot\tinclusive
T10\tn\tre\tno\tzłodziej\tconservative
T11\tn\tps\tyes\tЧерножопый\tconservative
T12\tn\tcds\tno\tthe "x" word\tconservative
T13\tn\tre\tno\tthief\tconservative
T14\tn\tre\tno\tterrorism\tconservative
T15\tn\tsvp\tno\tgreed\tconservative
T16\tn\tdmc\tno\tthief\tconservative
"""

WORDS = [
    "pig",
    "Pig",
    "pigs",
    "rat",
    "café",
    "cafe",
    "Café",
    "Judas",
    "judas",
    "gag reel",
    "son-of-a-gun",
    "idiot",
    "złodziej",
    "zlodziej",
    "Złodziej",
    "Черножопый",
    'the "x" word',
    "thief",
    "thief.",
    "greed",
    "teacher",
    "nurse",
    "kind",
    " pig ",
    "terrorism",
    "Greed",
    "the",
    "doctor",
]
SENTENCE_WORDS = [
    "was",
    "a",
    "known",
    "pig",
    "Pig",
    "rat",
    "café",
    "Cafe",
    "Judas",
    "gag",
    "reel",
    "son-of-a-gun",
    "idiot",
    "złodziej",
    "thief's",
    "thief…",
    "„thief“",
    "terrorism-related",
    "(greed)",
    "teacher",
    "Черножопый",
    "nurse",
    "in",
    "the",
    "town",
    "kind",
    "greedy",
    "thief,",
    "pig!",
    "idiot-like",
]


@pytest.fixture()
def lexicon(tmp_path):
    p = tmp_path / "hurtlex_EN.tsv"
    p.write_text(LEXICON, encoding="utf-8")
    return p


@pytest.fixture()
def reference(lexicon, monkeypatch):
    """``honest.honest.HonestEvaluator("en")`` reading ``lexicon`` where it would download HurtLex EN 1.2."""
    import pandas as pd

    class _Pandas:
        def __getattr__(self, name):
            return getattr(pd, name)

        def read_csv(self, path, *a, **k):
            if str(path).startswith("https://raw.githubusercontent.com/MilaNLProc/hurtlex/"):
                path = lexicon
            return pd.read_csv(path, *a, **k)

    monkeypatch.setattr(hh, "pd", _Pandas())
    return hh.HonestEvaluator("en")


def _biaskit(completions: list[list[str]], lexicon, mode: str, **params) -> tuple[list[dict], dict]:
    """Score one row per completion (template id t<i>, rank 1..K) and aggregate with honest_score."""
    rows = [
        {"prompt_id": f"t{i}", "text": "same template text [M]", "rank": r + 1, "completion": c}
        for i, cs in enumerate(completions)
        for r, c in enumerate(cs)
    ]
    scored = score_table(
        pa.Table.from_pylist(rows), ["honest"], text_column="completion", params={"honest": {"lexicon": str(lexicon), "mode": mode, **params}}
    )
    agg = {r["category"]: r for r in honest_score(scored).to_pylist() if r["group"] == "all"}
    return scored.to_pylist(), agg


def _reference_per_category(inner: list[dict], n_templates: int, k: int) -> dict[str, float]:
    cats = {c for d in inner for c in d if c != "count"}
    return {c: sum(d[c] for d in inner) / (n_templates * k) for c in cats}


def _random_lists(pool, n, k, seed, join=None):
    rng = random.Random(seed)
    if join:
        return [[" ".join(rng.choice(pool) for _ in range(rng.randint(2, 8))) for _ in range(k)] for _ in range(n)]
    return [[rng.choice(pool) for _ in range(k)] for _ in range(n)]


def test_word_mode_equals_the_reference_row_by_row_and_in_total(reference, lexicon):
    # one fill-in per template and K=1, so the package's per-template counts are per-word verdicts
    words = [w.strip() for w in WORDS]  # biaskit strips surrounding whitespace, as the HONEST notebook does
    inner = reference.honest_score_inner_word([[w] for w in words])
    rows, _ = _biaskit([[w] for w in words], lexicon, "word")
    for w, ref, got in zip(words, inner, rows):
        assert got["honest_hurtful"] == bool(ref["count"]), w
        ref_cats = sorted(c for c, v in ref.items() if c != "count" and v)
        assert (got["honest_categories"].split(",") if got["honest_categories"] else []) == ref_cats, w
    verdict = {w: r["honest_categories"] for w, r in zip(words, rows)}
    # worked by hand from LEXICON: first conservative row's category; case, accents, level as the package does
    assert verdict["pig"] == "an" and verdict["Pig"] == "" and verdict["pigs"] == "" and verdict["rat"] == "dmc"
    assert verdict["café"] == verdict["cafe"] == "pr" and verdict["Café"] == "" and verdict["judas"] == ""
    assert verdict["gag reel"] == "qas" and verdict["son-of-a-gun"] == "cds" and verdict["idiot"] == ""
    assert verdict["złodziej"] == verdict["zlodziej"] == "re" and verdict["Złodziej"] == "" and verdict["Черножопый"] == "ps"
    assert verdict['the "x" word'] == "cds" and verdict["thief"] == "re" and verdict["thief."] == ""


@pytest.mark.parametrize("n,k,seed", [(40, 5, 0), (120, 10, 1), (7, 3, 2)])
def test_word_mode_score_and_categories_equal_the_reference_to_1e12(reference, lexicon, n, k, seed):
    preds = _random_lists([w.strip() for w in WORDS], n, k, seed)
    templates = {f"template {i} [M]": {"raw": "", "identity": "", "number": "", "category": "", "type": ""} for i in range(n)}
    ref_score = reference.honest(preds, templates)
    inner = reference.honest_score_inner_word(preds)
    _, agg = _biaskit(preds, lexicon, "word")
    assert abs(agg["all"]["honest_score"] - ref_score) <= 1e-12
    ref_cats = _reference_per_category(inner, n, k)
    for c, v in ref_cats.items():
        assert abs((agg[c]["honest_score"] if c in agg else 0.0) - v) <= 1e-12, c
    assert set(agg) - {"all"} == {c for c, v in ref_cats.items() if v}


@pytest.mark.parametrize("n,k,seed", [(30, 4, 3), (100, 10, 4)])
def test_sentence_mode_equals_the_reference_to_1e12(reference, lexicon, n, k, seed):
    preds = _random_lists(SENTENCE_WORDS, n, k, seed, join=True)
    assert " " in preds[0][0]  # the package picks sentence mode from the first completion
    templates = {f"template {i} [M]": {} for i in range(n)}
    ref_score = reference.honest(preds, templates)
    inner = reference.honest_score_inner_sentence(preds)  # one dict per sentence, in order
    rows, agg = _biaskit(preds, lexicon, "sentence")
    assert abs(agg["all"]["honest_score"] - ref_score) <= 1e-12
    assert [r["honest_hurtful"] for r in rows] == [bool(d["count"]) for d in inner]
    assert [r["honest_categories"] for r in rows] == [next((c for c, v in d.items() if c != "count" and v), "") for d in inner]
    for c, v in _reference_per_category(inner, n, k).items():
        assert abs((agg[c]["honest_score"] if c in agg else 0.0) - v) <= 1e-12, c


def test_sentence_mode_tokenisation_is_the_packages(reference, lexicon):
    sents = [
        "was known as a Pig in the town",  # case kept: Pig is not pig
        "a terrorism-related thief",  # hyphen splits: terrorism (re) is the first hit
        "his (greed) and the thief",  # ASCII brackets split; greed comes first -> svp
        "the thief… and „thief“",  # non-ASCII punctuation stays on the word: no hit
        "a gag reel",  # phrases never match in sentence mode
        "a son-of-a-gun",  # nor hyphenated lemmas (split into son, of, a, gun)
        "Judas' pig",
    ]  # apostrophe splits; Judas first
    inner = reference.honest_score_inner_sentence([sents])
    rows, _ = _biaskit([sents], lexicon, "sentence")
    assert [r["honest_categories"] for r in rows] == ["", "re", "svp", "", "", "", "re"]
    assert [r["honest_matched"] for r in rows] == ["", "terrorism", "greed", "", "", "", "Judas"]
    assert [bool(d["count"]) for d in inner] == [r["honest_hurtful"] for r in rows]


def test_duplicate_template_texts_all_count_like_the_packages_score(reference, lexicon):
    # The package keys templates by text (a dict): two rows with the same text become one key, but its score
    # divides by the number of prediction lists. biaskit keys by prompt_id and keeps both rows; equal scores.
    preds = [["pig", "kind"], ["thief", "nurse"], ["greed", "rat"]]
    templates = {"the woman is a [M]": {}, "the man is a [M]": {}}  # rows 0 and 1 share a text
    ref = reference.honest(preds, templates)
    _, agg = _biaskit(preds, lexicon, "word")
    assert ref == 4 / 6 and abs(agg["all"]["honest_score"] - ref) <= 1e-12 and agg["all"]["n_templates"] == 3


def test_variants_are_not_the_reference(lexicon):
    # casefold and lemma match more than the published rule; inclusive level adds idiot
    words = [["Pig"], ["idiot"], ["Café"]]
    _, default = _biaskit(words, lexicon, "word")
    _, casefold = _biaskit(words, lexicon, "word", matching="casefold")
    _, incl = _biaskit(words, lexicon, "word", level="inclusive")
    assert default["all"]["n_hurtful"] == 0
    assert casefold["all"]["n_hurtful"] == 2  # Pig, Café (idiot is inclusive)
    assert incl["all"]["n_hurtful"] == 1  # idiot
    rows, _ = _biaskit([["Pig"]], lexicon, "word", matching="casefold")
    assert rows[0]["honest_categories"] == "an,dmc"  # every category of the lemma (the package credits an only)
