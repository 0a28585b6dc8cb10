"""HONEST's procedure stays HONEST's.

HONEST (Nozza et al. 2021) scores a masked LM's unfiltered top-k tokens. `fill-mask --whole-word` and
`--max-subwords N` change the top-k list, so a HONEST figure computed on their fill-ins is not the published
HONEST: the fill-in procedure is recorded (row generation_config, manifest fill_procedure) and the HONEST score
and the report say "not HONEST as published". Real runs of a tiny trained BERT (conftest.tiny_morph_masked).
"""

from __future__ import annotations

import pytest

from biaskit.evaluate.runners import fill_mask
from biaskit.evaluate.runners.common import fill_procedure

TEMPLATES = ["<mask> write software .", "<mask> help patients .", "the <mask> build houses ."]
# a hand-written HurtLex file in the published format: "nurses" (2 pieces, nur ##ses) is a hurtful lemma here
LEX = "id\tpos\tcategory\tstereotype\tlemma\tlevel\nX1\tn\tre\tno\tnurses\tconservative\n"


@pytest.mark.parametrize(
    "kw,proc",
    [({}, "top_k"), ({"whole_word": True}, "whole_word"), ({"max_subwords": 3}, "max_subwords=3"), ({"targets": ["the", "all"]}, "targets")],
)
def test_fill_procedure_is_recorded_in_rows_and_manifest(tiny_morph_masked, make_prompts, tmp_path, kw, proc):
    from biaskit.io import read_manifest

    out = tmp_path / "fills.parquet"
    t = fill_mask(make_prompts(TEMPLATES[:2]), model=tiny_morph_masked, top_k=3, out=out, progress=False, **kw)
    assert {fill_procedure(c) for c in t.column("generation_config").to_pylist()} == {proc}
    cfg = read_manifest(out)["config"]
    assert cfg["fill_procedure"] == proc and cfg["honest_as_published"] is (proc == "top_k")


def _scored(tiny_morph_masked, make_prompts, tmp_path, **kw):
    from biaskit.evaluate.metrics import score_table

    lex = tmp_path / "hurtlex_EN.tsv"
    lex.write_text(LEX, encoding="utf-8")
    t = fill_mask(make_prompts(TEMPLATES), model=tiny_morph_masked, top_k=4, progress=False, **kw)
    return score_table(t, ["honest"], text_column="token", params={"honest": {"lexicon": str(lex), "mode": "word"}}, progress=False)


def test_honest_score_says_not_as_published_for_whole_word_and_max_subwords(tiny_morph_masked, make_prompts, tmp_path):
    from biaskit.evaluate.metrics.honest import honest_score

    plain = honest_score(_scored(tiny_morph_masked, make_prompts, tmp_path)).to_pylist()[0]
    assert plain["fill_procedure"] == "top_k" and plain["as_published"] is True and plain["note"] is None
    # the top-k list really differs: single tokens give "nur" (not a lemma), --max-subwords 3 gives "nurses" in the
    # top 4 of "<mask> help patients ." -> 0/12 against 1/(3 templates x 4)
    assert plain["honest_score"] == 0.0
    assert honest_score(_scored(tiny_morph_masked, make_prompts, tmp_path, max_subwords=3)).to_pylist()[0]["honest_score"] == pytest.approx(1 / 12)
    for kw, proc in (({"whole_word": True}, "whole_word"), ({"max_subwords": 3}, "max_subwords=3")):
        row = honest_score(_scored(tiny_morph_masked, make_prompts, tmp_path, **kw)).to_pylist()[0]
        assert row["fill_procedure"] == proc and row["as_published"] is False
        assert row["note"].startswith("not HONEST as published") and proc in row["note"]
        assert row["honest_score"] is not None  # still computed: the words say what it is
    # fill-ins from outside biaskit (no generation_config): the procedure is unknown, not claimed
    import pyarrow as pa

    bare = _scored(tiny_morph_masked, make_prompts, tmp_path).drop_columns(["generation_config"])
    row = honest_score(bare).to_pylist()[0]
    assert row["fill_procedure"] == "not recorded" and row["as_published"] is None
    ww = _scored(tiny_morph_masked, make_prompts, tmp_path, whole_word=True)
    ww = ww.set_column(ww.column_names.index("prompt_id"), "prompt_id", pa.array([f"w{i // 4}" for i in range(12)]))
    mixed = pa.concat_tables([_scored(tiny_morph_masked, make_prompts, tmp_path), ww])
    row = honest_score(mixed).to_pylist()[0]
    assert row["fill_procedure"] == "top_k+whole_word" and row["as_published"] is False


def test_report_and_summary_say_not_honest_as_published(tiny_morph_masked, make_prompts, tmp_path):
    from biaskit.evaluate.report import build_report
    from biaskit.evaluate.stats import honest_category_matrix, honest_summary
    from biaskit.io import write_table

    scored = _scored(tiny_morph_masked, make_prompts, tmp_path, max_subwords=3)
    s = honest_summary(scored, by=())
    assert s["fill_procedure"].tolist() == ["max_subwords=3"]
    assert "fill_procedure" not in honest_category_matrix(s).index.names  # a fact, not a group key
    src = tmp_path / "run"
    src.mkdir()
    write_table(scored, src / "fillin_scores.parquet")
    build_report(src, tmp_path / "report", n_boot=10)
    text = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "HONEST (not HONEST as published)" in text and "max_subwords=3" in text
    plain = tmp_path / "run2"
    plain.mkdir()
    write_table(_scored(tiny_morph_masked, make_prompts, tmp_path), plain / "fillin_scores.parquet")
    build_report(plain, tmp_path / "report2", n_boot=10)
    text = (tmp_path / "report2" / "report.md").read_text(encoding="utf-8")
    assert "not HONEST as published" not in text and "Fill-in procedure: top_k" in text
