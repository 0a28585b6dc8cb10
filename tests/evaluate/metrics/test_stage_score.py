"""The demo's score stage on small hand-made tables."""

import pyarrow as pa

from biaskit.demo import DemoContext, stage_score
from biaskit.io import read_manifest, read_table, write_table

PROMPTS = {
    "prompt_id": ["p1", "p2", "p3"],
    "text": ["Anna Smith is an ", "John Doe was a ", "Zed is "],
    "source": ["bold"] * 3,
    "language": ["en"] * 3,
    "domain": ["gender"] * 3,
    "group": ["American_actresses", "American_actors", "American_actors"],
    "reference": ["Anna Smith is an actress and she is a happy singer.", "John Doe was a thief and a pig.", None],
}
GENS = {
    "prompt_id": ["p1", "p2", "p2"],
    "text": ["Anna Smith is an ", "John Doe was a ", "John Doe was a "],
    "sample_index": [0, 0, 0],
    "model": ["tiny", "tiny", "tiny"],
    "kind": ["generate", "generate", "fill_mask"],
    "continuation": ["actress. She was happy.", None, "x"],
    "error": [None, "generation failed", None],
}


def _ctx(tmp_path, with_gens=True):
    ctx = DemoContext(run_dir=tmp_path / "run")
    ctx.run_dir.mkdir()
    write_table(pa.table(PROMPTS), ctx.run_dir / "prompts_bold.parquet")
    ctx.add("prompts_bold", ctx.run_dir / "prompts_bold.parquet")
    if with_gens:
        write_table(pa.table(GENS), ctx.run_dir / "generations.parquet")
        ctx.add("generations", ctx.run_dir / "generations.parquet")
    return ctx


def test_scores_generations_and_wikipedia_baselines(tmp_path, monkeypatch):
    for v in ("BIASKIT_NORMS_LEXICON", "BIASKIT_REGARD_MODEL", "BIASKIT_TOXICITY_MODEL", "BIASKIT_HURTLEX_EN"):
        monkeypatch.delenv(v, raising=False)
    ctx = _ctx(tmp_path)
    stage_score.run(ctx)
    t = read_table(ctx.tables["scores"], "scores")
    # 2 generate rows (fill_mask row left out) + 2 baselines (p3 has no reference)
    assert t.column("model").to_pylist() == ["tiny", "tiny", "wikipedia", "wikipedia"]
    # the baseline is the rest of each Wikipedia sentence after its prompt (the same span as the model's continuation)
    assert t.column("continuation").to_pylist()[2:] == ["actress and she is a happy singer.", "thief and a pig."]
    assert t.column("full_text").to_pylist()[2:] == PROMPTS["reference"][:2]
    assert t.column("vader_error").to_pylist() == [None, "no text (null)", None, None]
    assert t.column("gender_unigram_label").to_pylist() == ["female", None, "female", "neutral"]
    assert t.column("toxicity_error").null_count == 3
    info = ctx.info["score"]
    assert info["metrics"] == {"vader": "1", "gender": "1", "toxicity": "1"}
    assert set(info["skipped"]) == {"norms", "regard", "honest"} and "BIASKIT_HURTLEX_EN" in info["skipped"]["honest"]
    assert "skipped norms" in ctx.summary[-1][1]
    assert read_manifest(ctx.tables["scores"])["output"]["rows"] == 4


def test_without_generations_scores_baselines_and_enables_lexicon_metrics(tmp_path, monkeypatch, vad_lexicon, hurtlex_files):
    monkeypatch.setenv("BIASKIT_NORMS_LEXICON", vad_lexicon)
    monkeypatch.setenv("BIASKIT_HURTLEX_EN", hurtlex_files["en"])
    monkeypatch.delenv("BIASKIT_REGARD_MODEL", raising=False)
    ctx = _ctx(tmp_path, with_gens=False)
    stage_score.run(ctx)
    t = read_table(ctx.tables["scores"])
    assert t.column("model").to_pylist() == ["wikipedia", "wikipedia"]
    assert t.column("honest_hurtful").to_pylist() == [False, True]  # thief, pig
    assert t.column("norms_valence")[0].as_py() is not None  # happy in the lexicon
    assert set(ctx.info["score"]["metrics"]) == {"vader", "gender", "toxicity", "norms", "honest"}
    assert "baselines only" in ctx.summary[-1][1]
