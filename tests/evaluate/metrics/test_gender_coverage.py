"""Gender polarity: how much of Bolukbasi's word lists the shipped space holds (manifest and report), and BOLD's
Table 3 WIKI rows on that space (docs/metrics.md, "Gender polarity against BOLD's Table 3")."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pyarrow as pa
import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _independent_coverage():
    """The counts straight from the two files: bolukbasi.json read with json, the .bin's vocabulary with gensim."""
    from gensim.models import KeyedVectors

    from biaskit.assets import resolve

    lists = json.loads(Path(resolve("bolukbasi-wordlists").path).read_text(encoding="utf-8"))["gender"]
    vocab = set(KeyedVectors.load_word2vec_format(resolve("word2vec-bolukbasi").path, binary=True).index_to_key)
    lower = {w.lower() for w in lists["specific_full"]}
    return {
        "gender_specific": {"listed": len(lower), "in_space": len(lower & vocab)},
        "gender_specific_exact": {"listed": len(set(lists["specific_full"])), "in_space": len(set(lists["specific_full"]) & vocab)},
        "definitional_pairs": {
            "listed": len(lists["definitional_pairs"]),
            "in_space": sum(a in vocab and b in vocab for a, b in lists["definitional_pairs"]),
        },
        "equalize_pairs": {
            "listed": len(lists["equalize_pairs"]),
            "in_space": sum(any(f(a) in vocab and f(b) in vocab for f in (str.lower, str.title, str.upper)) for a, b in lists["equalize_pairs"]),
        },
    }


def test_coverage_of_the_word_lists_is_in_the_metric_info_and_the_report():
    from biaskit.evaluate.metrics.gender import GenderMetric
    from biaskit.evaluate.report.sections.gender import coverage_note

    m = GenderMetric().setup()
    cov = m.info["wordlist_coverage"]
    assert cov == _independent_coverage()
    # the measured figure: the 26k-word subset holds 247 of the 1,282 distinct gender-specific words
    assert cov["gender_specific"] == {"listed": 1282, "in_space": 247}
    assert cov["definitional_pairs"] == {"listed": 10, "in_space": 10}
    # in the manifest (describe() is what `biaskit score` and the demo record) and in the report's sentence
    manifest = {"metrics": [m.describe()]}
    assert manifest["metrics"][0]["info"]["wordlist_coverage"] == cov
    note = coverage_note(manifest)
    assert "247 of 1,282 gender-specific words (19.3%)" in note and "10 of 10 definitional pairs" in note
    assert "gender.embeddings=" in note
    assert coverage_note({"metrics": [{"name": "gender", "info": {}}]}) is None  # an older manifest: no sentence


def test_without_debias_no_coverage_is_claimed(tmp_path):
    from biaskit.evaluate.metrics.gender import GenderMetric

    p = tmp_path / "v.txt"
    p.write_text("2 2\nshe 1 1\nhe -1 1\n", encoding="utf-8")
    m = GenderMetric(embeddings=str(p), debias=False).setup()
    assert "wordlist_coverage" not in m.info


#: BOLD's profession groups behind the paper's Table 3 rows (the grouping that gives the paper's unigram 54/6 for
#: science & technology on BOLD's own Wikipedia sentences)
TABLE3 = {
    "science & technology": ("scientific_occupations", "engineering_branches", "computer_occupations"),
    "healthcare": ("healthcare_occupations", "nursing_specialties", "mental_health_occupations"),
    "industrial (with sewing)": ("industrial_occupations", "sewing_occupations", "metalworking_occupations", "railway_industry_occupations"),
}
#: docs/metrics.md: (unigram M, F, Gender-Wavg M, F, Gender-Max M, F, Gender-Max with max_tie=0 M, F) on the subset
DOCUMENTED = {
    "science & technology": (54, 6, 65, 5, 65, 8, 67, 10),
    "healthcare": (3, 19, 5, 24, 6, 25, 10, 28),
    "industrial (with sewing)": (24, 16, 28, 23, 31, 24, 32, 28),
}


def test_bold_table3_wiki_rows_on_the_shipped_subset():
    from biaskit.evaluate.metrics import score_table

    with tarfile.open(FIXTURES / "bold" / "real" / "bold_github.tar.xz") as tar:
        wiki = json.load(tar.extractfile("wikipedia/profession_wiki.json"))
    rows = [(cat, s) for cat, groups in TABLE3.items() for g in groups for sents in wiki[g].values() for s in sents]
    t = pa.table({"text": [s for _, s in rows]})
    got, labels = {}, {}
    for tie in (1e-6, 0.0):
        out = score_table(t, ["gender"], text_column="text", params={"gender": {"max_tie": tie}}).to_pylist()
        labels[tie] = [r["gender_max_label"] for r in out]
        for (cat, _), r in zip(rows, out):
            c = got.setdefault((cat, tie), [0] * 6)
            for k, col in enumerate(("gender_unigram_label", "gender_wavg_label", "gender_max_label")):
                c[2 * k] += r[col] == "male"
                c[2 * k + 1] += r[col] == "female"
    for cat, doc in DOCUMENTED.items():
        # the unigram, Gender-Wavg and tie-rule Gender-Max counts are exact on any machine
        assert tuple(got[(cat, 1e-6)]) == doc[:6], cat
        # with max_tie=0 a text whose most female and most male words tie up to rounding (|max + min| <= 1e-6) is
        # decided by the last bits of BLAS arithmetic, which differ between CPUs (67 male here, 66 on another): only
        # those texts may differ from the documented counts
        near = sum(1 for (c, _), a, b in zip(rows, labels[1e-6], labels[0.0]) if c == cat and a != b)
        off = abs(got[(cat, 0.0)][4] - doc[6]) + abs(got[(cat, 0.0)][5] - doc[7])
        assert off <= 2 * near, (cat, got[(cat, 0.0)][4:], doc[6:], near)  # a flipped text: -1 one side, +1 the other
    # unigram science & technology equals the paper's 54/6; the Gender-Max female counts stay below the paper's
    # (healthcare 31, industrial 36): the subset lacks most gender-specific words
    assert DOCUMENTED["science & technology"][:2] == (54, 6)
    assert DOCUMENTED["healthcare"][5] == 25 < 31 and DOCUMENTED["industrial (with sewing)"][5] == 24 < 36
    # BOLD's own rule (max_tie=0) counts more female texts than the tie rule, never fewer
    assert all(got[(c, 0.0)][5] >= got[(c, 1e-6)][5] for c in TABLE3)


def test_max_tie_zero_is_named_as_bolds_rule():
    from biaskit.evaluate.metrics.gender import GenderMetric

    help_text = next(p.help for p in GenderMetric.params if p.name == "max_tie")
    assert "0 = BOLD's rule" in help_text
    with pytest.raises(Exception):
        GenderMetric(max_tie=-1).setup()
