"""The OpenAI-compatible client against local fake servers.

Redirects: credentials never cross origins on a redirect; a redirected POST is an error naming the target
unless redirects are allowed. Bad responses: one bad response (not UTF-8, a number as text, a cut-short body,
fewer choices than asked, not an object) is one row's error; the run goes on and writes every row.
"""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.errors import BiaskitError
from biaskit.evaluate.runners import generate, likelihood

KEY = "rk-SECRET-5a6b7c8d"


def _redirect_to(server, target: str, code: int = 302):
    def respond(h, path, body):
        return code, {"Location": target + "/v1/completions"}, b""

    server.respond = respond


@pytest.mark.parametrize("code", [302, 303, 307, 308])
def test_a_redirected_post_is_an_error_naming_the_target(fake_server, fake_server2, write_prompts, tmp_path, monkeypatch, code):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    _redirect_to(fake_server, fake_server2.origin, code)
    prompts = write_prompts(["one", "two"])
    out = tmp_path / "g.parquet"
    with pytest.raises(BiaskitError) as e:
        generate(str(prompts), model="m", backend="openai", out=out, backend_options={"base_url": fake_server.url, "max_retries": 0})
    assert e.value.code == "E142" and f"to {fake_server2.url}/completions" in str(e.value) and f"HTTP {code}" in str(e.value)
    assert "--allow-redirects" in str(e.value)
    assert fake_server2.requests == []  # nothing (and no key) went to the other server
    assert not out.exists()
    # the CLI: one line, exit 1
    r = CliRunner().invoke(
        app, ["generate", str(prompts), "--backend", "openai", "--base-url", fake_server.url, "--model", "m", "--out", str(out), "--max-retries", "0"]
    )
    assert r.exit_code == 1 and r.output.strip().startswith("error[E142]") and len(r.output.strip().splitlines()) == 1
    assert KEY not in r.output and fake_server2.requests == []


def test_allowed_redirects_never_send_the_key_to_another_origin(fake_server, fake_server2, write_prompts, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    _redirect_to(fake_server, fake_server2.origin, 307)
    prompts = write_prompts(["one", "two"])
    r = CliRunner().invoke(
        app,
        [
            "generate",
            str(prompts),
            "--backend",
            "openai",
            "--base-url",
            fake_server.url,
            "--model",
            "m",
            "--out",
            str(tmp_path / "g.parquet"),
            "--max-retries",
            "0",
            "--allow-redirects",
        ],
    )
    assert r.exit_code == 0, r.output
    assert [q["auth"] for q in fake_server.requests] == [f"Bearer {KEY}"] * 2  # the configured origin gets it
    assert [q["auth"] for q in fake_server2.requests] == [None, None]  # another port does not
    assert sorted(q["body"]["prompt"] for q in fake_server2.requests) == ["one", "two"]  # same method and body
    t = pq.read_table(tmp_path / "g.parquet")
    assert t.column("continuation").to_pylist() == [" one-done", " two-done"]
    man = json.loads((tmp_path / "g.parquet.manifest.json").read_text())
    assert man["model"]["allow_redirects"] is True


def test_a_same_origin_redirect_keeps_the_key(fake_server, write_prompts, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    def respond(h, path, body):
        if path == "/v1/completions":
            return 308, {"Location": "/moved/v1/completions"}, b""
        return None

    fake_server.respond = respond
    t = generate(str(write_prompts(["x"])), model="m", backend="openai", backend_options={"base_url": fake_server.url, "allow_redirects": True})
    assert [(q["path"], q["auth"]) for q in fake_server.requests] == [
        ("/v1/completions", f"Bearer {KEY}"),
        ("/moved/v1/completions", f"Bearer {KEY}"),
    ]
    assert t.column("continuation").to_pylist() == [" x-done"]


# --------------------------------------------------------------------------------------- bad responses


def _bad_responses(server):
    def respond(h, path, body):
        p = body.get("prompt", "")
        if "NONUTF8" in p:
            return 200, {}, b'{"choices": [{"text": "caf\xe9 \xff\xfe"}]}'
        if "INTTEXT" in p:
            return 200, {}, json.dumps({"choices": [{"text": 12345}]}).encode()
        if "TRUNCATED" in p:
            data = json.dumps({"choices": [{"text": "this answer is cut"}]}).encode()
            return 200, {"Content-Length": str(len(data) + 50)}, data[:20]
        if "NOCHOICES" in p:
            return 200, {}, json.dumps({"choices": []}).encode()
        if "NOTOBJECT" in p:
            return 200, {}, b"[1, 2, 3]"
        if "NULLCHOICE" in p:
            return 200, {}, b'{"choices": [null]}'
        return None

    server.respond = respond


def test_each_bad_response_is_one_row_error(fake_server, write_prompts, tmp_path):
    _bad_responses(fake_server)
    texts = ["good 1", "NONUTF8", "good 2", "INTTEXT", "TRUNCATED", "NOCHOICES", "NOTOBJECT", "NULLCHOICE", "good 3"]
    out = tmp_path / "g.parquet"
    r = CliRunner().invoke(
        app,
        [
            "generate",
            str(write_prompts(texts)),
            "--backend",
            "openai",
            "--base-url",
            fake_server.url,
            "--model",
            "m",
            "--out",
            str(out),
            "--max-retries",
            "0",
            "--batch-size",
            "3",
        ],
    )
    assert r.exit_code == 0, r.output
    t = pq.read_table(out)
    assert t.column("prompt_id").to_pylist() == [f"p{i:03d}" for i in range(len(texts))]
    cont, err = t.column("continuation").to_pylist(), t.column("error").to_pylist()
    assert [c for c, tx in zip(cont, texts) if tx.startswith("good")] == [" good 1-done", " good 2-done", " good 3-done"]
    assert [e is None for e in err] == [tx.startswith("good") for tx in texts]
    byp = dict(zip(texts, err))
    assert "not UTF-8" in byp["NONUTF8"]
    assert byp["INTTEXT"].startswith("E317") and "choices[0].text" in byp["INTTEXT"] and "12345" in byp["INTTEXT"]
    assert "cut short" in byp["TRUNCATED"]
    assert "0 choice(s); 1 were asked for" in byp["NOCHOICES"]
    assert "a JSON list, not an object" in byp["NOTOBJECT"]
    assert "choice is a NoneType" in byp["NULLCHOICE"]
    assert all(c is None for c, e in zip(cont, err) if e is not None)  # a failure never becomes a text
    assert "6 rows with an error" in r.output


def test_bad_likelihood_responses_are_row_errors(fake_server, write_prompts):
    def respond(h, path, body):
        p = body.get("prompt", "")
        lp = {"tokens": ["a", " b"], "token_logprobs": [None, -1.5], "text_offset": [0, 1]}
        if "SHORT" in p:
            lp["token_logprobs"] = [None]
        if "STRLP" in p:
            lp["token_logprobs"] = [None, "-1.5"]
        return 200, {}, json.dumps({"choices": [{"text": p, "logprobs": lp}]}).encode()

    fake_server.respond = respond
    t = likelihood(
        str(write_prompts(["a b", "a SHORT", "a STRLP"])),
        model="m",
        backend="openai",
        backend_options={"base_url": fake_server.url, "max_retries": 0},
    )
    assert t.column("nll_mean").to_pylist() == [1.5, None, None]  # one scored token, -(-1.5)
    errs = t.column("error").to_pylist()
    assert errs[0] is None and "malformed logprobs" in errs[1]
    # a log-probability given as a string breaks the reply's schema: E317 naming the field
    assert errs[2].startswith("E317") and "token_logprobs[1]" in errs[2]
