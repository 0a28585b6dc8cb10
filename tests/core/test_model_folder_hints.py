"""A relative model path that does not exist is named as a missing folder before any Hub
attempt (it used to be read as a Hub id and fail with a network error)."""

import time

import pytest

from biaskit.assets import check_model_folder, looks_like_path
from biaskit.errors import BiaskitError


def test_relative_folder_under_an_existing_folder_is_a_path_not_a_hub_id(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    assert looks_like_path("models/nothere") and not looks_like_path("sasha/regardv3") and not looks_like_path("gpt2")
    assert looks_like_path("./x") and looks_like_path("runs/a/b") and looks_like_path("runs/regard-clf/")
    with pytest.raises(BiaskitError) as e:
        check_model_folder("models/nothere", "classifier")
    assert e.value.code == "E271" and str(e.value).startswith("[E271] no folder models/nothere;")
    check_model_folder("sasha/regardv3")  # a Hub id: left to the loader
    (tmp_path / "models" / "here").mkdir()
    check_model_folder("models/here")  # an existing folder passes


@pytest.mark.parametrize(
    "args",
    [
        ["score", "{inp}", "--metrics", "regard", "-p", "regard.model=models/nothere", "--out", "{out}"],
        ["stats", "genbias", "{inp}", "--style-model", "runs/regard-clf", "--out", "{out}"],
    ],
)
def test_cli_says_no_folder_at_once(tmp_path, args, monkeypatch):
    import pyarrow as pa
    from typer.testing import CliRunner

    from biaskit.cli import app
    from biaskit.io import write_table

    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    (tmp_path / "runs").mkdir()
    inp = tmp_path / "g.parquet"
    write_table(
        pa.table(
            {
                "prompt_id": ["a"],
                "text": ["x"],
                "sample_index": [0],
                "model": ["m"],
                "kind": ["generate"],
                "continuation": ["a nice person"],
                "axis": ["age"],
                "descriptor": ["old"],
                "template": ["t"],
            }
        ),
        inp,
        stage="generations",
    )
    t0 = time.perf_counter()
    r = CliRunner().invoke(app, [a.format(inp=inp, out=tmp_path / "o.parquet") for a in args])
    took = time.perf_counter() - t0
    out = r.output
    assert r.exit_code == 1, out
    want = "models/nothere" if "regard.model=models/nothere" in args else "runs/regard-clf"
    assert f"no folder {want}" in out and "E271" in out, out
    assert "Traceback" not in out and took < 120


def test_hub_load_without_network_fails_at_once_without_retries(tmp_path):
    # no offline variable set, the Hub unreachable (a closed local port as HF_ENDPOINT): one probe
    # switches the process offline, so `datasets` does not retry 5 times for 25-50 s
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE", "BIASKIT_OFFLINE")}
    env.update(HF_ENDPOINT="http://127.0.0.1:9", HF_HOME=str(tmp_path / "hf"))
    exe = [os.path.join(os.path.dirname(__import__("sys").executable), "biaskit")]
    t0 = time.perf_counter()
    r = subprocess.run(
        [*exe, "hub", "load", "someorg/somename", "--out", str(tmp_path / "x.parquet")], env=env, capture_output=True, text=True, timeout=120
    )
    took = time.perf_counter() - t0
    out = r.stdout + r.stderr
    assert r.returncode == 1 and "E054" in out and "someorg/somename" in out, out
    assert "retry" not in out.lower() and took < 20, (took, out)


def test_assets_lists_masked_lm_and_train_base_and_no_download_promise_when_unreachable(monkeypatch):
    # no "download on first use" for HurtLex when its host cannot be reached; masked LMs and the
    # default base model of `train classifier` are listed
    import biaskit.evaluate.metrics._assets  # noqa: F401
    from biaskit import assets as a

    for v in a.OFFLINE_VARS:
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setitem(
        a.ASSETS,
        "hurtlex-en",
        a.ASSETS["hurtlex-en"].__class__(**{**a.ASSETS["hurtlex-en"].__dict__, "url": "http://127.0.0.1:9/hurtlex_EN.tsv", "env_var": None}),
    )
    monkeypatch.setattr(a, "_NET", {})
    monkeypatch.setattr(a, "cache_dir", lambda: __import__("pathlib").Path("/nonexistent-h27"))
    w = a.where("hurtlex-en")
    assert not w.startswith("download on first use") and "127.0.0.1:9 not reachable" in w, w
    assert a.ASSETS["xlm-roberta-base"].extra["task"] == "masked"
    assert a.ASSETS["all-minilm-l6-v2"].extra["task"] == "train-base" and "train classifier" in a.ASSETS["all-minilm-l6-v2"].description


def test_annotation_ledger_defaults_to_the_user_cache_not_the_working_folder(tmp_path, monkeypatch):
    # `annotate` no longer drops annotation-rounds.jsonl into the working folder
    from biaskit.annotate import ledger

    monkeypatch.delenv("BIASKIT_ANNOTATION_LEDGER", raising=False)
    monkeypatch.setenv("BIASKIT_CACHE", str(tmp_path / "cache"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    ledger.record("sample", "r1", task_type="sentiment", samples=3)
    assert list(work.iterdir()) == []
    assert (tmp_path / "cache" / "annotation-rounds.jsonl").is_file() and ledger.events()[0]["round"] == "r1"
    # a ledger an earlier version left in the working folder is still the one used (no round lost)
    (work / "annotation-rounds.jsonl").write_text('{"at": "2026-01-01T00:00:00Z", "round": "old", "event": "sample"}\n')
    assert [e["round"] for e in ledger.events()] == ["old"]


def test_stats_ztest_typo_in_grouping_column_says_did_you_mean(tmp_path):
    # a mistyped --group gets "did you mean 'group'", not only "score the table with a metric"
    import pyarrow as pa
    from typer.testing import CliRunner

    from biaskit.cli import app
    from biaskit.io import write_table

    write_table(
        pa.table({"prompt_id": ["a", "b"], "text": ["x", "y"], "group": ["m", "w"], "vader_label": ["positive", "negative"]}), tmp_path / "s.parquet"
    )
    r = CliRunner().invoke(app, ["stats", "ztest", str(tmp_path / "s.parquet"), "--group", "grup"])
    assert r.exit_code == 1 and "E080" in r.output and "did you mean 'group' for 'grup'?" in r.output, r.output
