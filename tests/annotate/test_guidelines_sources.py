"""The annotation guidelines say truthfully where the texts come from (the demo mixes Wikipedia
sentences and model generations)."""

import pyarrow as pa
import pyarrow.parquet  # noqa: F401  (pa.parquet)

from biaskit.annotate.files import export_tasks, text_sources
from biaskit.annotate.tasks import get_task_type


def _samples(models):
    n = len(models)
    return pa.table(
        {
            "sample_id": [f"s{i}" for i in range(n)],
            "round": ["r1"] * n,
            "task_type": ["sentiment"] * n,
            "text": [f"text {i}" for i in range(n)],
            "model": models,
        }
    )


def test_guidelines_count_wikipedia_and_generated_texts(tmp_path):
    s = _samples(["wikipedia", "smollm2-135m", "wikipedia", "wikipedia", "gpt2", None])
    _, g = export_tasks(s, tmp_path / "tasks.csv")
    text = g.read_text(encoding="utf-8")
    assert (
        "**Where these texts come from:** of the 6 texts of this round, 3 are sentences from Wikipedia, "
        "2 were written by language models, 1 come from other sources (e.g. templates or imported data)."
    ) in text
    assert "Texts were written by language models" not in text


def test_generic_guidelines_do_not_claim_every_text_is_generated():
    for spec in ("sentiment", "regard", "toxicity"):
        g = get_task_type(spec).guidelines_markdown()
        assert "sentences taken from Wikipedia and texts written" in g and "Texts were written by language models" not in g
    assert text_sources(_samples(["gpt2"] * 4)) == "**Where these texts come from:** of the 4 texts of this round, 4 were written by language models."


def test_demo_guidelines_match_the_demo_samples(quick_demo):
    run_dir, _ = quick_demo
    models = pa.parquet.read_table(run_dir / "samples.parquet").column("model").to_pylist()
    g = next((run_dir / "annotate").glob("*.guidelines.md")).read_text(encoding="utf-8")
    wiki = models.count("wikipedia")
    gen = sum(1 for m in models if m not in (None, "wikipedia"))
    assert wiki and gen
    assert f"{wiki} are sentences from Wikipedia, {gen} were written by language models" in g
