"""The demo's notes are true: the perplexity median is the median (the mean of the two middle values
for an even count, not the upper one), and the offline toxicity backend is named as a profanity detector."""

import re
import statistics

import pyarrow.parquet as pq


def test_demo_likelihood_note_gives_the_real_median(quick_demo):
    run_dir, ctx = quick_demo
    note = dict(ctx.summary)["likelihood"]
    ppl = [p for p in pq.read_table(run_dir / "likelihoods.parquet").column("perplexity").to_pylist() if p is not None]
    got = float(re.search(r"\(median ([\d.]+)\)", note).group(1))
    assert got == round(statistics.median(ppl), 1)
    if len(ppl) % 2 == 0:  # the upper median is what the note said before
        upper = sorted(ppl)[len(ppl) // 2]
        assert round(upper, 1) != got or upper == statistics.median(ppl)


def test_demo_score_note_names_the_offline_backend_as_profanity(quick_demo):
    _, ctx = quick_demo
    note = dict(ctx.summary)["score"]
    assert "toxicity v1 (offline backend alt-profanity-check: a profanity detector, reported as profanity, not toxicity)" in note


def test_the_demo_names_its_model_exactly_in_notes_manifests_and_card(quick_demo):
    import json

    run_dir, ctx = quick_demo
    exact = "SmolLM2-135M-Instruct (Q4_1 GGUF, dequantised to fp32)"
    notes = dict(ctx.summary)
    assert exact in notes["generate"] and exact in notes["likelihood"]
    for t in ("generations", "likelihoods"):
        m = json.loads((run_dir / f"{t}.parquet.manifest.json").read_text())
        assert m["model"]["id"] == "smollm2-135m" and m["model"]["name"] == exact
    assert exact in (run_dir / "hub" / "README.md").read_text()


def test_the_demo_writes_its_scores_through_the_library_function_biaskit_score_uses(quick_demo, tmp_path):
    """Orchestration in the library: the demo's scores.parquet and `biaskit score`'s output get their manifest from
    the one writer (evaluate.metrics.scores_out.write_scores): the same keys, the metrics as they ran."""
    import json

    from typer.testing import CliRunner

    from biaskit.cli import app

    run_dir, _ = quick_demo
    demo = json.loads((run_dir / "scores.parquet.manifest.json").read_text())
    out = tmp_path / "s.parquet"
    r = CliRunner().invoke(app, ["score", str(run_dir / "generations.parquet"), "-m", "vader", "--out", str(out)])
    assert r.exit_code == 0, r.output
    cli = json.loads((tmp_path / "s.parquet.manifest.json").read_text())
    assert set(demo) == set(cli)
    assert demo["engine"] == cli["engine"] == {"engine": "local"}
    assert "vader" in [m["name"] for m in demo["metrics"]] and [m["name"] for m in cli["metrics"]] == ["vader"]
    vd = next(m for m in demo["metrics"] if m["name"] == "vader")
    assert vd == cli["metrics"][0]  # the same metric, described the same way
