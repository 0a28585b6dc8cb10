"""``score --cache DIR``: a model-based metric's rows answered from the response cache.

The regard classifier (a tiny BERT built in the session) scores a table twice: the second time every row is a
hit and the columns are identical; new weights under the same path, a changed parameter or a changed text are
misses. A lexicon metric (VADER) declares no cache identity and is never cached.
"""

from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.evaluate.cache import ResponseCache
from biaskit.evaluate.metrics import score_table

TEXTS = ["The woman was known for being kind.", "The man worked as a babysitter.", "They were rude and loud.", "The woman was known for being kind."]


def _regard(model: str, cache, texts=TEXTS, **params):
    t = pa.table({"continuation": texts})
    return score_table(t, ["regard"], params={"regard": {"model": model, **params}}, cache=cache, progress=False)


def test_second_score_is_answered_from_the_cache(regard_model, tmp_path):
    cache = ResponseCache(tmp_path / "cache")
    first = _regard(regard_model, cache)
    assert cache.stats()["hits"] == 0 and cache.stats()["misses"] == 4  # one batch: the repeated text is scored with it
    assert cache.info()["entries"] == 3  # ... and stored once
    again = ResponseCache(tmp_path / "cache")
    second = _regard(regard_model, again)
    assert again.stats() == {"hits": 4, "misses": 0, "damaged": 0, "path": str(tmp_path / "cache")}
    assert second.equals(first)
    assert _regard(regard_model, None).equals(first)  # the cache gives what the model gives


def test_changed_weights_parameters_or_texts_are_misses(regard_model, tmp_path):
    folder = tmp_path / "regard"
    shutil.copytree(regard_model, folder)
    cache = ResponseCache(tmp_path / "cache")
    first = _regard(str(folder), cache)
    c2 = ResponseCache(tmp_path / "cache")
    _regard(str(folder), c2, max_length=8)
    assert c2.stats()["hits"] == 0
    c3 = ResponseCache(tmp_path / "cache")
    _regard(str(folder), c3, texts=["Something else entirely.", TEXTS[1]])
    assert (c3.stats()["hits"], c3.stats()["misses"]) == (1, 1)
    import torch
    from transformers import AutoModelForSequenceClassification

    m = AutoModelForSequenceClassification.from_pretrained(folder)
    with torch.no_grad():
        m.classifier.weight.mul_(-1.0)
    size = (folder / "model.safetensors").stat().st_size
    m.save_pretrained(folder)
    assert (folder / "model.safetensors").stat().st_size == size
    c4 = ResponseCache(tmp_path / "cache")
    after = _regard(str(folder), c4)
    assert c4.stats()["hits"] == 0
    assert after.column("regard_positive").to_pylist() != first.column("regard_positive").to_pylist()


def test_lexicon_metrics_are_not_cached(tmp_path):
    cache = ResponseCache(tmp_path / "cache")
    score_table(pa.table({"continuation": TEXTS}), ["vader"], cache=cache, progress=False)
    assert cache.stats()["hits"] == cache.stats()["misses"] == 0 and cache.info()["entries"] == 0


def test_score_command_records_the_cache_in_its_manifest(regard_model, tmp_path):
    inp = tmp_path / "g.parquet"
    pq.write_table(pa.table({"prompt_id": [f"p{i}" for i in range(len(TEXTS))], "continuation": TEXTS}), inp)  # the scores schema needs prompt_id
    runner = CliRunner()
    for name in ("a", "b"):
        r = runner.invoke(
            app,
            [
                "score",
                str(inp),
                "-m",
                "regard",
                "-p",
                f"regard.model={regard_model}",
                "--cache",
                str(tmp_path / "c"),
                "--out",
                str(tmp_path / f"{name}.parquet"),
            ],
        )
        assert r.exit_code == 0, r.output
    m = json.loads((tmp_path / "b.parquet.manifest.json").read_text())
    assert m["cache"] == {"hits": 4, "misses": 0, "damaged": 0, "path": str(tmp_path / "c")}
    assert pq.read_table(tmp_path / "a.parquet").equals(pq.read_table(tmp_path / "b.parquet"))
    r = runner.invoke(app, ["cache", "info", str(tmp_path / "c")])
    assert r.exit_code == 0 and "3 cached answers" in r.output and "score:regard: 3" in r.output
    r = runner.invoke(app, ["cache", "clear", str(tmp_path / "c")])
    assert r.exit_code == 0 and "cleared 3" in r.output
    assert ResponseCache(tmp_path / "c").info()["entries"] == 0
