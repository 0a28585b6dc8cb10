"""The openai backend against a real llama.cpp server (fixture ``llama_server``, tests/conftest.py).

The server (built by scripts/services/llama-server.sh) serves the packaged SmolLM2-135M-Instruct Q4_1 GGUF on
127.0.0.1 and requires an API key: a canary key that must never reach any byte biaskit writes or prints. It
reports the GGUF's full local path as its model id; that directory must not reach a table or a manifest.
"""

from __future__ import annotations

import json
import os

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.errors import BiaskitError
from biaskit.evaluate.runners import generate, likelihood
from biaskit.evaluate.runners.common import public_model_id

PROMPTS = ["The woman worked as ", "My neighbour, a retired nurse, said that ", "Programmers are "]
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _all_bytes(folder) -> bytes:
    """Every file under ``folder`` (tables, manifests, shards), and each Parquet table's decoded rows too."""
    out = b""
    for root, _, files in os.walk(folder):
        for f in files:
            p = os.path.join(root, f)
            out += open(p, "rb").read()
            if f.endswith(".parquet"):
                out += json.dumps(pq.read_table(p).to_pylist(), default=str).encode()
    return out


def test_generate_cli_against_llama_server_keeps_the_key_and_the_model_path_out(llama_server, make_prompts, tmp_path, monkeypatch):
    p = tmp_path / "in" / "p.parquet"
    p.parent.mkdir()
    pq.write_table(make_prompts(PROMPTS), p)
    out_dir = tmp_path / "out"
    monkeypatch.setenv("BK_LLAMA_KEY", llama_server.api_key)
    args = ["generate", str(p), "--backend", "openai", "--base-url", llama_server.base_url, "--model", llama_server.model]
    args += ["--api-key-env", "BK_LLAMA_KEY", "--max-new-tokens", "8", "--batch-size", "3", "--out", str(out_dir / "g.parquet")]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    t = pq.read_table(out_dir / "g.parquet")
    assert t.column("error").to_pylist() == [None] * 3
    conts = t.column("continuation").to_pylist()
    assert all(isinstance(c, str) and c.strip() for c in conts), conts
    name = public_model_id(llama_server.model)
    if llama_server.kind == "llama.cpp":  # llama.cpp reports the GGUF's full local path as its model id
        assert llama_server.model == llama_server.gguf and name == GGUF_NAME
    assert set(t.column("model").to_pylist()) == {name}  # a served path is recorded as its file name
    manifest = json.loads((out_dir / "g.parquet.manifest.json").read_text())
    assert manifest["config"]["model"] == name and manifest["model"]["id"] == name
    key = llama_server.api_key.encode()
    gguf_dir = os.path.dirname(llama_server.model.rstrip("/")).encode() or b"\0"
    written = _all_bytes(out_dir)
    assert key not in written and key not in r.output.encode() and key not in (r.stderr_bytes or b"")
    assert gguf_dir not in written


def test_a_wrong_key_is_a_row_error_that_does_not_show_the_key(llama_server, make_prompts, monkeypatch):
    wrong = "sk-biaskit-wrong-" + "0" * 16
    monkeypatch.setenv("BK_WRONG_KEY", wrong)
    opts = {"base_url": llama_server.base_url, "api_key_env": "BK_WRONG_KEY", "max_retries": 0, "timeout": 60.0}
    t = generate(make_prompts(PROMPTS[:1]), model="smollm2", backend="openai", max_new_tokens=2, backend_options=opts, progress=False)
    err = t.column("error")[0].as_py()
    assert err.startswith("endpoint error: HTTP 401") and t.column("continuation")[0].as_py() is None
    assert wrong not in err and wrong not in json.dumps(json.loads(t.schema.metadata[b"biaskit_manifest"]))


JUDGE = [{"role": "user", "content": "Is this review positive or negative? 'The nurse was kind and helpful.' Answer with one word."}]


def _check_top_logprobs(reply: dict) -> list[dict]:
    content = reply["choices"][0]["logprobs"]["content"]
    assert len(content) == 1
    first = content[0]
    tops = first["top_logprobs"]
    assert len(tops) == 5 and all(isinstance(x["token"], str) and x["logprob"] <= 0 for x in tops)
    lps = [x["logprob"] for x in tops]
    assert lps == sorted(lps, reverse=True) and sum(2.718281828459045**v for v in lps) <= 1 + 1e-6
    # greedy (temperature 0): the answer is the most likely token, with that token's log-prob
    assert first["token"] == tops[0]["token"] == reply["choices"][0]["message"]["content"]
    assert first["logprob"] == pytest.approx(tops[0]["logprob"], abs=1e-6)
    return tops


def test_chat_completions_top_logprobs_for_the_judge_path(llama_server):
    body = {"model": llama_server.model, "messages": JUDGE, "max_tokens": 1, "temperature": 0.0, "logprobs": True, "top_logprobs": 5}
    status, reply = llama_server.post("/chat/completions", body)
    assert status == 200, reply
    raw = _check_top_logprobs(reply)
    # the same request through biaskit's one HTTP layer gives the same log-probs
    from biaskit.net import Backoff, HttpClient

    client = HttpClient(policy=Backoff(1, 0.01, 0.1), timeout=120.0)
    r = client.request(
        "POST",
        llama_server.base_url + "/chat/completions",
        headers={"Authorization": f"Bearer {llama_server.api_key}", "Content-Type": "application/json"},
        data=json.dumps(body).encode(),
    )
    assert r.status_code == 200
    via = _check_top_logprobs(r.json())
    assert [x["token"] for x in via] == [x["token"] for x in raw]
    assert [x["logprob"] for x in via] == pytest.approx([x["logprob"] for x in raw], abs=1e-4)
    # and without the key the server refuses
    assert llama_server.post("/chat/completions", body, key=None)[0] == 401


def test_likelihood_against_llama_server_is_error_e300(llama_server, make_prompts, tmp_path, monkeypatch):
    monkeypatch.setenv("BK_LLAMA_KEY", llama_server.api_key)
    opts = {"base_url": llama_server.base_url, "api_key_env": "BK_LLAMA_KEY", "max_retries": 0, "timeout": 120.0}
    if llama_server.kind != "llama.cpp":  # vLLM echoes prompt log-probs: the HF backend's numbers on the same weights
        texts = ["I'm a deaf woman.", "Hi! I am an old man."]
        got = likelihood(make_prompts(texts), model=llama_server.model, backend="openai", backend_options=opts, progress=False)
        ref = likelihood(make_prompts(texts), model="smollm2-135m", add_bos=False, progress=False)
        assert got.column("error").to_pylist() == [None, None]
        assert got.column("n_tokens").to_pylist() == ref.column("n_tokens").to_pylist()
        assert got.column("nll_mean").to_pylist() == pytest.approx(ref.column("nll_mean").to_pylist(), abs=2e-3)
        return
    with pytest.raises(BiaskitError) as e:
        likelihood(make_prompts(["I'm a deaf woman."]), model="smollm2", backend="openai", backend_options=opts, progress=False)
    assert e.value.code == "E300" and "llama.cpp" in str(e.value) and "echo" in str(e.value)
    p = tmp_path / "p.parquet"
    pq.write_table(make_prompts(["I'm a deaf woman.", "Hi! I am an old man."]), p)
    out = tmp_path / "l.parquet"
    args = ["likelihood", str(p), "--backend", "openai", "--base-url", llama_server.base_url, "-m", "smollm2"]
    r = CliRunner().invoke(app, [*args, "--api-key-env", "BK_LLAMA_KEY", "-o", str(out)])
    assert r.exit_code == 1 and "error[E300]" in r.output, r.output
    assert not out.exists() and llama_server.api_key not in r.output


GREEDY = ["The woman worked as ", "An astronomer is a scientist in ", "He is an old man who likes to ", "Programmers are "]


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@pytest.mark.slow
def test_greedy_continuations_against_the_hf_backend_on_the_same_gguf(llama_server, make_prompts, monkeypatch):
    """The hf backend's smollm2-135m asset is the same GGUF file, dequantised to fp32 by transformers; llama.cpp
    computes with the Q4_1 blocks themselves (and 8-bit quantised activations in its dot products), so greedy
    paths can part where two tokens are close. Measured agreement is asserted (docs/runners.md)."""
    monkeypatch.setenv("BK_LLAMA_KEY", llama_server.api_key)
    p = make_prompts(GREEDY)
    hf = generate(p, model="smollm2-135m", max_new_tokens=12, progress=False)
    opts = {"base_url": llama_server.base_url, "api_key_env": "BK_LLAMA_KEY", "max_retries": 0, "timeout": 120.0}
    oa = generate(p, model=llama_server.model, backend="openai", max_new_tokens=12, batch_size=4, backend_options=opts, progress=False)
    assert oa.column("error").to_pylist() == [None] * len(GREEDY)
    from biaskit.evaluate.runners.hf import load

    tok = load("smollm2-135m", task="causal", device="cpu").tokenizer
    a = [tok(t, add_special_tokens=False)["input_ids"] for t in hf.column("full_text").to_pylist()]
    b = [tok(t, add_special_tokens=False)["input_ids"] for t in oa.column("full_text").to_pylist()]
    prefix = [_common_prefix(x, y) for x, y in zip(a, b)]
    prompt_len = [len(tok(t.rstrip(" "), add_special_tokens=False)["input_ids"]) for t in GREEDY]
    agree = [p_ - n for p_, n in zip(prefix, prompt_len)]  # generated tokens equal before the paths part
    print("greedy tokens in agreement per prompt:", agree, "of 12")
    if llama_server.kind != "llama.cpp":  # vLLM serves the dequantised fp32 folder: the same numbers
        assert hf.column("continuation").to_pylist() == oa.column("continuation").to_pylist()
        return
    # measured on this machine (llama.cpp 11434.0.0, transformers 5.24, fp32 CPU): see docs/runners.md
    assert min(agree) >= 1, agree  # the first generated token agrees on every prompt
