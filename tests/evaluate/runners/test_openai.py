"""OpenAI-compatible backend against a small local server (127.0.0.1) that serves the tiny GPT-2.

The server implements ``/v1/completions`` like vLLM / llama.cpp: greedy at temperature 0, seeded sampling
otherwise, ``echo`` + ``logprobs`` with ``token_logprobs`` (first token None) and ``text_offset``. Prompts
containing FLAKY get two 429s before an answer, FAIL500 always gets a 500, SLOW answers after the client's
timeout, BAD400 gets a 400.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from biaskit.errors import BiaskitError
from biaskit.evaluate.runners import fill_mask, generate, likelihood


class TinyServer:
    def __init__(self, model_dir: str, api_key: str | None = None) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.tok = AutoTokenizer.from_pretrained(model_dir)
        self.model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
        self.api_key = api_key
        self.hits: dict[str, int] = {}
        self.broken = True  # failure injection on
        self.lock = threading.Lock()
        self.bodies: list[dict] = []
        server = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(n))
                server.bodies.append({**body, "_auth": self.headers.get("Authorization")})
                if server.api_key and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    return self._send(401, {"error": {"message": "invalid api key"}})
                if self.path == "/v1/chat/completions":  # no chat template here: the user turn is the prompt
                    with server.lock:
                        c = server.complete({**body, "prompt": body["messages"][-1]["content"]})
                    return self._send(200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": c["choices"][0]["text"]}}]})
                if self.path != "/v1/completions":
                    return self._send(404, {"error": {"message": "not found"}})
                prompt = body["prompt"]
                with server.lock:
                    server.hits[prompt] = server.hits.get(prompt, 0) + 1
                    hit = server.hits[prompt]
                if server.broken:
                    if "FAIL500" in prompt:
                        return self._send(500, {"error": {"message": "internal error"}})
                    if "BAD400" in prompt:
                        return self._send(400, {"error": {"message": "bad request"}})
                    if "FLAKY" in prompt and hit <= 2:
                        return self._send(429, {"error": {"message": "rate limited"}}, {"Retry-After": "0"})
                    if "SLOW" in prompt:
                        time.sleep(0.6)
                with server.lock:  # one model call at a time
                    return self._send(200, server.complete(body))

            def _send(self, code, obj, headers=None):
                data = json.dumps(obj).encode()
                try:
                    self.send_response(code)
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def complete(self, body: dict) -> dict:
        torch, tok, model = self.torch, self.tok, self.model
        prompt = body["prompt"]
        enc = tok(prompt, return_offsets_mapping=True)
        ids = list(enc["input_ids"])
        max_tokens = int(body.get("max_tokens", 16))
        temp = float(body.get("temperature", 1.0))
        g = torch.Generator().manual_seed(int(body.get("seed", 0)))
        x = torch.tensor([ids])
        new = []
        with torch.no_grad():
            for _ in range(max_tokens):
                logits = model(x).logits[0, -1].float()
                nxt = int(logits.argmax()) if temp == 0 else int(torch.multinomial(torch.softmax(logits / temp, -1), 1, generator=g))
                if nxt == tok.eos_token_id:
                    break
                new.append(nxt)
                x = torch.cat([x, torch.tensor([[nxt]])], 1)
        text = tok.decode(new)
        choice = {"index": 0, "text": text, "finish_reason": "length"}
        if body.get("echo") and body.get("logprobs") is not None:
            allids = ids + new
            with torch.no_grad():
                lp = torch.log_softmax(model(torch.tensor([allids])).logits[0].float(), -1)
            toks = [tok.decode([i]) for i in allids]
            tlp = [None] + [lp[j - 1, allids[j]].item() for j in range(1, len(allids))]
            offs = [a for a, _ in enc["offset_mapping"]] + [len(prompt)] * len(new)
            choice = {
                "index": 0,
                "text": prompt + text,
                "finish_reason": "length",
                "logprobs": {"tokens": toks, "token_logprobs": tlp, "text_offset": offs, "top_logprobs": None},
            }
        return {"id": "cmpl-1", "object": "text_completion", "model": body.get("model"), "choices": [choice]}

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def server(tiny_causal):
    s = TinyServer(tiny_causal)
    yield s
    s.close()


def _opts(server, **kw):
    return {"base_url": server.url, "backoff": 0.01, "max_retries": 2, "timeout": 5.0, **kw}


def test_greedy_generation_equals_the_hf_backend(server, tiny_causal, gen_prompts):
    hf = generate(gen_prompts, model=tiny_causal, max_new_tokens=8, progress=False)
    oa = generate(gen_prompts, model="tiny", backend="openai", max_new_tokens=8, batch_size=3, backend_options=_opts(server), progress=False)
    assert oa.column("continuation").to_pylist() == hf.column("continuation").to_pylist()
    assert set(oa.column("backend").to_pylist()) == {"openai"} and set(oa.column("model").to_pylist()) == {"tiny"}
    assert oa.column("error").null_count == oa.num_rows


def test_seeded_sampling_is_independent_of_concurrency(server, gen_prompts):
    kw = dict(
        model="tiny",
        backend="openai",
        max_new_tokens=6,
        do_sample=True,
        num_return_sequences=2,
        seed=5,
        progress=False,
        backend_options=_opts(server),
    )
    a = generate(gen_prompts, batch_size=1, **kw)
    b = generate(gen_prompts, batch_size=6, **kw)
    assert a.column("continuation").to_pylist() == b.column("continuation").to_pylist()
    seeds = {bd["seed"] for bd in server.bodies if bd.get("temperature") == 1.0}
    assert len(seeds) == 2 * gen_prompts.num_rows  # one seed per (prompt, sample)


@pytest.mark.parametrize("span", [False, True])
def test_likelihood_equals_the_hf_backend_without_bos(server, tiny_causal, make_prompts, span):
    texts = ["I'm a deaf woman.", "Hi! I am an old man.", "Programmers write software."]
    p = make_prompts(texts, descriptor=["deaf", "old", "software"])
    col = "descriptor" if span else None
    hf = likelihood(p, model=tiny_causal, add_bos=False, span_column=col, progress=False)
    oa = likelihood(p, model="tiny", backend="openai", span_column=col, backend_options=_opts(server), progress=False)
    assert oa.column("nll_mean").to_pylist() == pytest.approx(hf.column("nll_mean").to_pylist(), abs=1e-5)
    assert oa.column("n_tokens").to_pylist() == hf.column("n_tokens").to_pylist()
    assert oa.column("perplexity").to_pylist() == pytest.approx(hf.column("perplexity").to_pylist(), rel=1e-5)


def test_retries_then_records_a_per_row_error(server, make_prompts):
    server.broken = True
    p = make_prompts(["FLAKY The woman worked as ", "FAIL500 The man ", "BAD400 x", "SLOW y", "Programmers "], prefix="e")
    t = generate(p, model="tiny", backend="openai", max_new_tokens=4, batch_size=5, backend_options=_opts(server, timeout=0.3), progress=False)
    rows = {r["prompt_id"]: r for r in t.to_pylist()}
    assert rows["e0"]["error"] is None and rows["e0"]["continuation"] is not None
    assert server.hits["FLAKY The woman worked as"] == 3  # two 429s, then the answer (trailing space cut)
    assert server.hits["FAIL500 The man"] == 3  # 1 + max_retries attempts
    assert rows["e1"]["continuation"] is None and rows["e1"]["full_text"] is None
    assert rows["e1"]["error"].startswith("endpoint error: HTTP 500") and "gave up after 3 attempts" in rows["e1"]["error"]
    assert server.hits["BAD400 x"] == 1  # client errors are not retried
    assert rows["e2"]["error"].startswith("endpoint error: HTTP 400")
    assert "timed out after 0.3 s" in rows["e3"]["error"] and rows["e3"]["continuation"] is None
    assert rows["e4"]["error"] is None


def test_failed_rows_are_retried_on_resume(server, make_prompts, tmp_path):
    out = tmp_path / "g.parquet"
    p = make_prompts(["FAIL500 a ", "Programmers "], prefix="r")
    server.broken = True
    parts = tmp_path / "g.parquet.parts"
    from biaskit.io import ShardedWriter

    # first run: write shards but stop before finalising (as if killed after the last batch)
    orig = ShardedWriter.read_all

    class Killed(Exception):
        pass

    def boom(self):
        raise Killed

    ShardedWriter.read_all = boom
    try:
        with pytest.raises(Killed):
            generate(p, model="tiny", backend="openai", out=out, max_new_tokens=3, backend_options=_opts(server), progress=False)
    finally:
        ShardedWriter.read_all = orig
    assert parts.exists() and not out.exists()
    server.broken = False
    before = server.hits.get("Programmers", 0)
    t = generate(p, model="tiny", backend="openai", out=out, max_new_tokens=3, backend_options=_opts(server), progress=False)
    server.broken = True
    assert t.column("prompt_id").to_pylist() == ["r0", "r1"]  # no duplicates, the failed row was redone
    assert t.column("error").to_pylist() == [None, None]
    assert server.hits.get("Programmers", 0) == before  # the finished row was not requested again


def test_api_key_comes_from_the_named_environment_variable(tiny_causal, make_prompts, monkeypatch):
    s = TinyServer(tiny_causal, api_key="sk-test-123")
    try:
        p = make_prompts(["Programmers "])
        t = generate(p, model="tiny", backend="openai", max_new_tokens=2, backend_options=_opts(s), progress=False)
        assert t.column("error")[0].as_py().startswith("endpoint error: HTTP 401")
        monkeypatch.setenv("MY_KEY", "sk-test-123")
        t = generate(p, model="tiny", backend="openai", max_new_tokens=2, backend_options=_opts(s, api_key_env="MY_KEY"), progress=False)
        assert t.column("error")[0].as_py() is None
        m = json.loads(t.schema.metadata[b"biaskit_manifest"])
        assert "sk-test-123" not in json.dumps(m)
        # a key under a custom variable name is registered as a secret: redacted wherever it would be shown
        from biaskit.secrets import redact

        assert redact("header Bearer sk-test-123") == "header Bearer ***"
    finally:
        s.close()


def test_openai_backend_errors(server, make_prompts, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(BiaskitError) as e:
        generate(make_prompts(["x"]), model="tiny", backend="openai")
    assert e.value.code == "E062" and "--base-url" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        fill_mask(make_prompts(["a <mask>"]), model="tiny", backend="openai", backend_options={"base_url": server.url})
    assert e.value.code == "E062" and "cannot run fill_mask" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        generate(make_prompts(["x"]), model="tiny", backend="vllm")
    assert e.value.code == "E020" and "openai" in str(e.value)


def test_chat_endpoint(server, make_prompts):
    t = generate(
        make_prompts(["Tell me about nurses"]),
        model="tiny",
        backend="openai",
        chat=True,
        max_new_tokens=5,
        backend_options=_opts(server),
        progress=False,
    )
    plain = generate(
        make_prompts(["Tell me about nurses"]), model="tiny", backend="openai", max_new_tokens=5, backend_options=_opts(server), progress=False
    )
    body = [b for b in server.bodies if "messages" in b][-1]
    assert body["messages"] == [{"role": "user", "content": "Tell me about nurses"}] and body["max_tokens"] == 5
    assert t.column("continuation").to_pylist() == plain.column("continuation").to_pylist()
    assert t.column("error").to_pylist() == [None]


def test_cli_generate_and_likelihood_against_the_endpoint(server, tmp_path, make_prompts):
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from biaskit.cli import app
    from biaskit.io import read_manifest, read_table

    server.broken = True
    p = tmp_path / "p.parquet"
    pq.write_table(make_prompts(["The woman worked as ", "FAIL500 x"]), p)
    out = tmp_path / "g.parquet"
    r = CliRunner().invoke(
        app,
        [
            "-q",
            "generate",
            str(p),
            "--backend",
            "openai",
            "--base-url",
            server.url,
            "--model",
            "tiny",
            "--max-new-tokens",
            "4",
            "--max-retries",
            "1",
            "--timeout",
            "5",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "generate: 2 rows for 2 prompts" in r.output and "(1 rows with an error" in r.output
    t = read_table(out)
    assert t.column("error")[0].as_py() is None and "gave up after 2 attempts" in t.column("error")[1].as_py()
    assert read_manifest(out)["config"]["backend"] == "openai"
    out2 = tmp_path / "l.parquet"
    r = CliRunner().invoke(
        app, ["-q", "likelihood", str(p), "--backend", "openai", "--base-url", server.url, "-m", "tiny", "--max-retries", "0", "-o", str(out2)]
    )
    assert r.exit_code == 0, r.output
    assert read_table(out2).column("n_tokens")[0].as_py() >= 3
