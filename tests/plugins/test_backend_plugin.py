"""A model backend of another package: one module plus a ``biaskit.backends`` entry point (docs/architecture.md).

The planted package ``biaskit-echo`` declares a backend that runs all three kinds, can judge and declares two
options for ``--backend-option``; a fresh CLI process with it on PYTHONPATH lists it, generates, scores
likelihoods, fills masks and judges through it. Its outputs are fixed by construction (written next to each
check), so every value is known by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from tests.plugins.conftest import plant, run_cli

from biaskit.errors import BiaskitError
from biaskit.registry import load_entry_points

ECHO = '''
"""Echo: a toy model backend of a third-party package (the worked example of docs/architecture.md)."""

import math

from biaskit.evaluate.runners.backend import BackendBase, BackendOption, Capabilities, JudgeAnswer


class EchoJudge:
    """p(first label) = 0.8 when the judged text has the word "love", else 0.2."""

    def __init__(self, labels):
        self.labels = labels

    def render(self, messages):
        return "\\n".join(f"{m['role']}: {m['content']}" for m in messages)

    def answer(self, messages, *, repeats=0, temperature=1.0, seeds=()):
        out = []
        for m in messages:
            p = 0.8 if "love" in m[-1]["content"].rsplit("Text:", 1)[-1].split() else 0.2
            out.append(JudgeAnswer([math.log(p), math.log(1 - p)], tokens_in=len(self.render(m)), tokens_out=1))
        return out

    def describe(self):
        return {"backend": "echo", "chat_template": "role: content"}

    def cache_identity(self, cache):
        return {"model": "echo-judge"}


class EchoBackend(BackendBase):
    name = "echo"
    capabilities = Capabilities(
        kinds=("generate", "likelihood", "fill_mask"),
        formats=("raw",),
        judge=("chat_template", "logprobs"),
        settable=(
            BackendOption("suffix", "str", "!", "the text every continuation is made of"),
            BackendOption("times", "int", 1, "how often the suffix is repeated"),
        ),
    )

    def __init__(self, model, task="auto", suffix="!", times=1):
        self.model, self.suffix, self.times = model, suffix, times

    def cache_identity(self):
        return {"model": self.model, "suffix": self.suffix, "times": self.times}

    def generate(self, units, s, batch_size):
        self.batch_sizes_used.append(len(units))
        cont = self.suffix * self.times
        yield [{"_unit": u, "continuation": cont, "full_text": u.text + cont} for u in units]

    def likelihood(self, units, s, batch_size):
        # every word costs one nat
        yield [
            {"_unit": u, "nll_mean": 1.0, "perplexity": math.e, "sum_logprob": -float(len(u.text.split())), "n_tokens": len(u.text.split())}
            for u in units
        ]

    def fill_mask(self, units, s, batch_size):
        words = ["alpha", "beta", "gamma"][: s.top_k]
        yield [
            {"_unit": u, "sample_index": r, "token": w, "token_score": 0.5 ** (r + 1), "rank": r + 1, "full_text": u.text.replace("<mask>", w),
             "n_subwords": 1, "fill_pll": math.log(0.5 ** (r + 1))}
            for u in units
            for r, w in enumerate(words)
        ]

    def judge_session(self, s):
        return EchoJudge(s.labels)


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
        {"biaskit_echo.py": ECHO},
        {"biaskit.backends": names or {"echo": "biaskit_echo:EchoBackend", "echo-nocache": "biaskit_echo:NoCacheBackend"}},
    )


def test_a_planted_backend_lists_generates_scores_fills_and_judges_through_the_cli(tmp_path):
    site = plant_echo(tmp_path / "site")
    pd.DataFrame({"prompt_id": ["p0", "p1"], "text": ["The woman worked as", "He said"]}).to_parquet(tmp_path / "p.parquet")
    pd.DataFrame({"prompt_id": ["m0"], "text": ["She is a <mask>."]}).to_parquet(tmp_path / "m.parquet")
    pd.DataFrame({"prompt_id": ["s0", "s1"], "continuation": ["I love it", "meh"]}).to_parquet(tmp_path / "s.parquet")
    (tmp_path / "love.yaml").write_text(TASK, encoding="utf-8")
    gen = ["generate", "p.parquet", "--backend", "echo", "--model", "toy"]
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
        ],
        cwd=tmp_path,
    )
    (rc, listed), gen_r, ll_r, fill_r, judge_r, unknown, badtype, nocache, cached = results
    assert rc == 0 and "echo (biaskit-echo)" in listed and "kinds: generate, likelihood, fill_mask" in listed
    assert "--backend-option suffix=<str> (default '!')" in listed and "--backend-option times=<int> (default 1)" in listed
    assert "--backend-option max_backoff=<float> (default 30.0)" in listed  # the built-in openai backend's
    for r in (gen_r, ll_r, fill_r, judge_r, cached):
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
    assert pd.read_parquet(tmp_path / "c.parquet")["continuation"].tolist() == ["!"] * 2


def test_a_planted_backend_cannot_take_a_shipped_or_another_plugins_name(tmp_path, monkeypatch, isolated_registries):
    backends, _ = isolated_registries
    monkeypatch.syspath_prepend(str(plant_echo(tmp_path / "a", {"hf": "biaskit_echo:EchoBackend"})))
    with pytest.raises(BiaskitError) as e:
        load_entry_points(backends, "biaskit.backends")
    msg = str(e.value)
    assert e.value.code == "E240" and "'hf' of biaskit-echo (biaskit_echo:EchoBackend)" in msg and "by biaskit (" in msg
    assert "rename the entry point in biaskit-echo's" in msg and backends.target("hf") == "biaskit.evaluate.runners.hf:HFBackend"

    monkeypatch.syspath_prepend(str(plant(tmp_path / "b", "biaskit-other", {}, {"biaskit.backends": {"echo2": "other:Backend"}})))
    monkeypatch.syspath_prepend(str(plant(tmp_path / "c", "biaskit-third", {}, {"biaskit.backends": {"echo2": "third:Backend"}})))
    with pytest.raises(BiaskitError) as e:
        load_entry_points(backends, "biaskit.backends")
    assert e.value.code == "E240" and "biaskit-other" in str(e.value) and "biaskit-third" in str(e.value)
