"""A model backend of another package: one module plus a ``biaskit.backends`` entry point (docs/architecture.md).

The planted package ``biaskit-echo`` declares a backend that runs all three kinds, can judge and declares two
options for ``--backend-option``; a fresh CLI process with it on PYTHONPATH lists it, generates, scores
likelihoods, fills masks and judges through it. Its outputs are fixed by construction (written next to each
check), so every value is known by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from tests.plugins.conftest import doc_example, plant, run_cli

from biaskit.errors import BiaskitError
from biaskit.registry import load_entry_points

#: the worked example of docs/architecture.md, plus (for the E319 check) the same backend without a cache identity
ECHO, ENTRY_POINTS = doc_example("#### Worked example: a backend in its own package")
NO_CACHE = '''

class NoCacheBackend(EchoBackend):
    """The same backend without a cache identity (BackendBase's default)."""

    name = "echo-nocache"

    def cache_identity(self):
        return None
'''

TASK = "name: love\nlabels: [fond, cold]\ninstruction: |-\n  Options: {labels}.\n  Text: {text}\n"


def plant_echo(root, names=None):
    return plant(
        root,
        "biaskit-echo",
        {"biaskit_echo.py": ECHO + NO_CACHE},
        {"biaskit.backends": names or {**ENTRY_POINTS["biaskit.backends"], "echo-nocache": "biaskit_echo:NoCacheBackend"}},
    )


def test_a_planted_backend_lists_generates_scores_fills_and_judges_through_the_cli(tmp_path):
    site = plant_echo(tmp_path / "site")
    pd.DataFrame({"prompt_id": ["p0", "p1"], "text": ["The woman worked as", "He said"]}).to_parquet(tmp_path / "p.parquet")
    pd.DataFrame({"prompt_id": ["m0"], "text": ["She is a <mask>."]}).to_parquet(tmp_path / "m.parquet")
    pd.DataFrame({"prompt_id": ["s0", "s1"], "continuation": ["I love it", "meh"]}).to_parquet(tmp_path / "s.parquet")
    (tmp_path / "love.yaml").write_text(TASK, encoding="utf-8")
    gen = ["generate", "p.parquet", "--backend", "echo", "--model", "toy"]
    judge = ["score", "s.parquet", "-m", "judge", "-p", "judge.backend=echo", "-p", "judge.model=toy", "-p", "judge.task=love.yaml"]
    results = run_cli(
        [site],
        [
            ["backends", "list"],
            [*gen, "--backend-option", "suffix= ok", "--backend-option", "times=2", "--out", "g.parquet"],
            ["likelihood", "p.parquet", "--backend", "echo", "--model", "toy", "--out", "l.parquet"],
            ["fill-mask", "m.parquet", "--backend", "echo", "--model", "toy", "--top-k", "2", "--out", "f.parquet"],
            [
                "score",
                "s.parquet",
                "-m",
                "judge",
                "-p",
                "judge.backend=echo",
                "-p",
                "judge.model=toy",
                "-p",
                "judge.task=love.yaml",
                "--out",
                "j.parquet",
            ],
            [*gen, "--backend-option", "colour=red", "--out", "x.parquet"],
            [*gen, "--backend-option", "times=many", "--out", "x.parquet"],
            ["generate", "p.parquet", "--backend", "echo-nocache", "--model", "toy", "--cache", "cache", "--out", "x.parquet"],
            [*gen, "--cache", "cache", "--out", "c.parquet"],
            [*judge, "-p", "judge.backend_options=times=3", "--out", "j3.parquet"],
            [*judge, "-p", "judge.backend_options=times=3;colour=red", "--out", "j4.parquet"],
        ],
        cwd=tmp_path,
    )
    (rc, listed), gen_r, ll_r, fill_r, judge_r, unknown, badtype, nocache, cached, judge3, judge_bad = results
    assert rc == 0 and "echo (biaskit-echo)" in listed and "kinds: generate, likelihood, fill_mask" in listed
    assert "--backend-option suffix=<str> (default '!')" in listed and "--backend-option times=<int> (default 1)" in listed
    assert "--backend-option max_backoff=<float> (default 30.0)" in listed  # the built-in openai backend's
    for r in (gen_r, ll_r, fill_r, judge_r, cached, judge3):
        assert r[0] == 0, r[1]

    g = pd.read_parquet(tmp_path / "g.parquet")
    assert g["continuation"].tolist() == [" ok ok"] * 2 and g["backend"].tolist() == ["echo"] * 2  # suffix " ok" twice
    ll = pd.read_parquet(tmp_path / "l.parquet")
    assert ll["perplexity"].tolist() == [math.e] * 2 and ll["n_tokens"].tolist() == [4, 2]
    f = pd.read_parquet(tmp_path / "f.parquet")
    assert f["token"].tolist() == ["alpha", "beta"] and f["token_score"].tolist() == [0.5, 0.25] and f["backend"].iloc[0] == "echo"
    j = pd.read_parquet(tmp_path / "j.parquet")
    # p(fond) = 0.8 / (0.8 + 0.2) for the text with "love", 0.2 / (0.2 + 0.8) for the other
    assert j["judge_label"].tolist() == ["fond", "cold"] and j["judge_p_fond"].tolist() == pytest.approx([0.8, 0.2], abs=1e-12)

    assert unknown[0] == 1 and "E318" in unknown[1] and "'colour'" in unknown[1] and "'suffix', 'times'" in unknown[1]
    assert badtype[0] == 1 and "E318" in badtype[1] and "option times takes a int" in badtype[1]
    assert nocache[0] == 1 and "E319" in nocache[1] and "echo-nocache backend gives no cache identity" in nocache[1]
    assert not (tmp_path / "x.parquet").exists()
    # the judge's backend gets the declared options of judge.backend_options (its session reports times in the manifest)
    assert '"times": 3' in (tmp_path / "j3.parquet.manifest.json").read_text(encoding="utf-8")
    assert '"times": 1' in (tmp_path / "j.parquet.manifest.json").read_text(encoding="utf-8")
    assert judge_bad[0] == 1 and "E318" in judge_bad[1] and "'colour'" in judge_bad[1]
    assert pd.read_parquet(tmp_path / "c.parquet")["continuation"].tolist() == ["!"] * 2


def test_a_planted_backend_cannot_take_a_shipped_or_another_plugins_name(tmp_path, monkeypatch, isolated_registries):
    backends, _ = isolated_registries
    monkeypatch.syspath_prepend(str(plant_echo(tmp_path / "a", {"hf": "biaskit_echo:EchoBackend"})))
    with pytest.raises(BiaskitError) as e:
        load_entry_points(backends, "biaskit.backends")
    msg = str(e.value)
    assert e.value.code == "E240" and "'hf' of biaskit-echo (biaskit_echo:EchoBackend)" in msg and "by biaskit (" in msg
    assert "rename the entry point in biaskit-echo's" in msg and backends._entries["hf"] == "biaskit.evaluate.runners.hf:HFBackend"

    monkeypatch.syspath_prepend(str(plant(tmp_path / "b", "biaskit-other", {}, {"biaskit.backends": {"echo2": "other:Backend"}})))
    monkeypatch.syspath_prepend(str(plant(tmp_path / "c", "biaskit-third", {}, {"biaskit.backends": {"echo2": "third:Backend"}})))
    with pytest.raises(BiaskitError) as e:
        load_entry_points(backends, "biaskit.backends")
    assert e.value.code == "E240" and "biaskit-other" in str(e.value) and "biaskit-third" in str(e.value)


def test_an_option_set_by_its_flag_and_by_backend_option_is_refused_before_loading(tmp_path):
    from typer.testing import CliRunner

    from biaskit.cli import app

    pd.DataFrame({"prompt_id": ["p0"], "text": ["a"]}).to_parquet(tmp_path / "p.parquet")
    argv = ["generate", str(tmp_path / "p.parquet"), "--model", str(tmp_path / "not-loaded"), "--out", str(tmp_path / "g.parquet")]
    r = CliRunner().invoke(app, [*argv, "--trust-remote-code", "--backend-option", "trust_remote_code=true"])
    assert r.exit_code == 1 and "E318" in r.output and "set twice" in r.output
    r = CliRunner().invoke(app, [*argv, "--backend-option", "trust_remote_code=maybe"])
    assert r.exit_code == 1 and "E318" in r.output and "option trust_remote_code takes a bool" in r.output
    assert not (tmp_path / "g.parquet").exists()
