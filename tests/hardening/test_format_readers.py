"""Each external format has one reader in the input layer (``biaskit.formats``): a server reply, a cache entry, a run
state file, a Label Studio export and the judge's ``extra_body`` that break their schema are a coded error (or the
row's coded ``*_error``, or a cache miss), never a traceback or a value taken from them."""

from __future__ import annotations

import json
import sqlite3
from types import SimpleNamespace

import pyarrow as pa
import pytest
from tests.hardening.hardening_util import FakeServer

from biaskit.annotate.labelstudio import LabelStudio
from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics import make_metric, score_table
from biaskit.evaluate.runners import likelihood

DEEP = b"[" * 100_000 + b"]" * 100_000


def _ll_reply(prompt: str) -> bytes:
    # two tokens, the second scored: nll_mean = 1.5, perplexity = e^1.5
    lp = {"tokens": ["a", " b"], "token_logprobs": [None, -1.5], "text_offset": [0, 1]}
    return json.dumps({"choices": [{"text": prompt, "logprobs": lp}]}).encode()


@pytest.fixture()
def server():
    s = FakeServer()
    yield s
    s.close()


def _prompts(tmp_path, texts):
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"prompt_id": f"p{i}", "text": t}) + "\n" for i, t in enumerate(texts)), encoding="utf-8")
    return path


def _openai(server) -> dict:
    return {"base_url": server.url, "max_retries": 0}


def test_a_reply_nested_100000_deep_is_the_likelihood_rows_coded_error(server, tmp_path):
    server.respond = lambda h, path, body: (200, {}, DEEP if body["prompt"].endswith("DEEP") else _ll_reply(body["prompt"]))
    t = likelihood(str(_prompts(tmp_path, ["a OK", "a DEEP"])), model="m", backend="openai", backend_options=_openai(server))
    assert t.column("nll_mean").to_pylist() == [1.5, None]
    err = t.column("error").to_pylist()[1]
    assert err.startswith("E317") and "E380" in err and "200 levels" in err


def test_a_reply_nested_100000_deep_is_the_judge_rows_coded_error(server):
    server.respond = lambda h, path, body: (200, {}, DEEP)
    params = {"backend": "openai", "base_url": server.url, "model": "m", "max_retries": 0}
    rows = score_table(pa.table({"continuation": ["some text"]}), "judge", params={"judge": params}, progress=False).to_pylist()
    assert rows[0]["judge_label"] is None and rows[0]["judge_error"].startswith("E317") and "E380" in rows[0]["judge_error"]


def test_a_damaged_run_state_file_is_e381_naming_the_file_and_the_fix(server, tmp_path):
    server.respond = lambda h, path, body: (200, {}, _ll_reply(body["prompt"]))
    out = tmp_path / "ll.parquet"
    state = tmp_path / "ll.parquet.parts" / "run.json"
    state.parent.mkdir()
    for bad in ("{not json", "[1, 2]", '{"run": {}}', '{"fingerprint": "x", "retry_of_finished": [[1]]}'):
        state.write_text(bad, encoding="utf-8")
        with pytest.raises(BiaskitError) as e:
            likelihood(str(_prompts(tmp_path, ["a OK"])), model="m", backend="openai", backend_options=_openai(server), out=out)
        assert e.value.code == "E381" and str(state) in str(e.value) and "--overwrite" in (e.value.fix or ""), bad
    t = likelihood(str(_prompts(tmp_path, ["a OK"])), model="m", backend="openai", backend_options=_openai(server), out=out, overwrite=True)
    assert t.column("nll_mean").to_pylist() == [1.5]


def test_a_cached_row_of_the_wrong_type_is_a_miss_and_computed_again(server, tmp_path):
    server.respond = lambda h, path, body: (200, {}, _ll_reply(body["prompt"]))
    prompts = str(_prompts(tmp_path, ["a OK"]))
    run = dict(model="m", backend="openai", backend_options=_openai(server), cache=str(tmp_path / "c"))
    likelihood(prompts, **run)
    db = sqlite3.connect(tmp_path / "c" / "cache.sqlite")
    (value,) = db.execute("SELECT value FROM entries").fetchone()
    rows = json.loads(value)
    rows[0]["perplexity"] = "huge"  # a string where the generations table has a double
    db.execute("UPDATE entries SET value=?", (json.dumps(rows),))
    db.commit()
    db.close()
    asked = len(server.requests)
    t = likelihood(prompts, **run)
    assert t.column("nll_mean").to_pylist() == [1.5] and t.column("error").to_pylist() == [None]
    assert len(server.requests) == asked + 1  # the damaged entry was not used: the server was asked again


def test_a_judge_extra_body_nested_100000_deep_is_e380():
    opts = {"backend": "openai", "base_url": "http://127.0.0.1:9/v1", "extra_body": "[" * 100_000 + "]" * 100_000}
    with pytest.raises(BiaskitError) as e:
        make_metric("judge", "continuation", opts)
    assert e.value.code == "E380" and "judge.extra_body" in str(e.value)


def _label_studio(body: bytes) -> LabelStudio:
    ls = LabelStudio("http://127.0.0.1:9", "a-token-for-the-test")
    ls.sdk = SimpleNamespace(projects=SimpleNamespace(exports=SimpleNamespace(download_sync=lambda *a, **k: [body])))
    return ls


@pytest.mark.parametrize(
    ("export", "where"),
    [
        ({"tasks": []}, "must be a JSON list of tasks"),
        (["a task"], "tasks[0] must be a JSON object"),
        ([{"data": "x"}], "tasks[0].data must be a JSON object"),
        ([{"data": {}, "annotations": ["an annotation"]}], "tasks[0].annotations[0] must be a JSON object"),
        ([{"data": {}, "annotations": [{"result": [{"type": 3}]}]}], "tasks[0].annotations[0].result[0].type must be a string"),
        ([{"data": {}, "annotations": [{"result": [{"value": {"choices": [1]}}]}]}], "result[0].value.choices[0] must be a string"),
    ],
)
def test_a_label_studio_export_of_another_shape_is_e381_naming_the_field(export, where):
    with pytest.raises(BiaskitError) as e:
        _label_studio(json.dumps(export).encode()).export(7)
    assert e.value.code == "E381" and where in str(e.value) and "project 7" in str(e.value)


def test_a_label_studio_export_nested_too_deep_is_e380_and_a_good_one_is_returned_as_sent():
    with pytest.raises(BiaskitError) as e:
        _label_studio(DEEP).export(7)
    assert e.value.code == "E380"
    good = [{"id": 1, "data": {"sample_id": "s1"}, "annotations": [{"id": 2, "result": [{"type": "choices", "value": {"choices": ["a"]}}]}]}]
    assert _label_studio(json.dumps(good).encode()).export(7) == good


# ------------------------------------------------------------------ other JSON values biaskit parses: the one reader

DEEP_TEXT = DEEP.decode()


def test_a_bbq_jsonl_line_nested_100000_deep_is_e380_naming_the_file_and_line(tmp_path):
    from biaskit.templates.bbq_io import read_published

    f = tmp_path / "Age.jsonl"
    f.write_text("\n" + DEEP_TEXT + "\n", encoding="utf-8")
    with pytest.raises(BiaskitError) as e:
        read_published(f)
    assert e.value.code == "E380" and "Age.jsonl:2" in str(e.value)


@pytest.mark.parametrize(("info", "code"), [("{not json", "E415"), (DEEP_TEXT, "E380"), ('{"ans0": NaN}', "E381")])
def test_a_bbq_answer_info_that_is_not_json_is_a_coded_error_naming_the_example(info, code):
    import pandas as pd

    from biaskit.evaluate.stats.bbq import resolve_predictions

    df = pd.DataFrame([{"example_id": 7, "answer_info": info, "ans0": "a", "ans1": "b", "ans2": "unknown", "pred": 0}])
    with pytest.raises(BiaskitError) as e:
        resolve_predictions(df, "pred")
    assert e.value.code == code and "example 7" in str(e.value)


@pytest.mark.parametrize("mapping", ["{not json", DEEP_TEXT, '{"start": 1}', '[{"end": 2}]'])
def test_a_masking_map_that_is_not_the_one_mask_text_wrote_is_a_coded_error(mapping):
    from biaskit.annotate.masking import mask_text, unmask

    masked, good = mask_text("Ada Lovelace wrote it.", ["Ada Lovelace"])
    assert unmask(masked, json.dumps(good)) == "Ada Lovelace wrote it."
    with pytest.raises(BiaskitError) as e:
        unmask(masked, mapping)
    assert e.value.code in ("E380", "E381") and "masking map" in str(e.value)


@pytest.mark.parametrize(("content", "code"), [(DEEP_TEXT, "E380"), ("[1, 2]", "E071"), ("{oops", "E071")])
def test_gender_word_lists_that_are_not_a_json_object_are_a_coded_error(tmp_path, content, code):
    from biaskit.evaluate.metrics.gender import load_wordlists

    f = tmp_path / "bolukbasi.json"
    f.write_text(content, encoding="utf-8")
    with pytest.raises(BiaskitError) as e:
        load_wordlists(f)
    assert e.value.code == code and str(f) in str(e.value)


def test_an_encoder_folder_whose_config_is_nested_too_deep_is_named_by_the_folder(tmp_path):
    from biaskit.train.public import encoder_id

    d = tmp_path / "my-encoder"
    d.mkdir()
    (d / "config.json").write_text(DEEP_TEXT, encoding="utf-8")
    assert encoder_id(str(d)) == "my-encoder"
    (d / "config.json").write_text('{"_name_or_path": "org/encoder"}', encoding="utf-8")
    assert encoder_id(str(d)) == "org/encoder"


def test_a_ledger_line_nested_100000_deep_is_e380_naming_the_ledger_and_line(tmp_path):
    from biaskit.annotate.ledger import events

    led = tmp_path / "ledger.jsonl"
    led.write_text("\n" + DEEP_TEXT + "\n", encoding="utf-8")
    with pytest.raises(BiaskitError) as e:
        events(led)
    assert e.value.code == "E380" and f"{led}:2" in str(e.value)


@pytest.mark.parametrize("timeout", [-1, 0, "nan", "inf", "soon"])
def test_an_openai_timeout_that_is_not_a_positive_finite_number_is_e062_before_any_request(timeout):
    from biaskit.evaluate.runners.openai import OpenAIBackend

    with pytest.raises(BiaskitError) as e:
        OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", timeout=timeout)
    assert e.value.code == "E062" and "--timeout" in str(e.value)
    assert OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", timeout=2.5).timeout == 2.5
