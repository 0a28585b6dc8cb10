"""Issue 18: the demo's notes are true: the perplexity median is the median (the mean of the two middle values
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
