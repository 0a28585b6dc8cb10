"""Secrets never reach a written byte. A real local server echoes the key (and other
credentials it makes up) in its 401 body; generate (openai backend), score and hub stage run as separate
processes; then every file written is searched for every secret."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hardening_util import cli_env, run_biaskit

from biaskit.secrets import public_url, redact

KEY = "zq9-SECRET-KEY-7f3a1c"  # named by --api-key-env, a variable biaskit does not know
PASSWORD = "pw-SECRET-0b7e22"  # user info in the endpoint URL
QKEY = "qk-SECRET-9d1e4f"  # ?api_key= in the endpoint URL
ECHOED = "echoedSECRET123456"  # a credential the client never had, echoed by the server
SECRETS = [KEY, PASSWORD, QKEY, ECHOED, base64.b64encode(f"user:{PASSWORD}".encode()).decode()]


def _echo_401(server, echo_key=True):
    def respond(h, path, body):
        if "DENY" not in (body.get("prompt") or ""):
            return None
        msg = (
            f"Incorrect API key provided: {h.headers.get('Authorization')}. "
            + (f"You sent key {KEY}; " if echo_key else "")
            + f"try api_key={ECHOED}&x=1 or token={ECHOED}; header Authorization: Bearer {ECHOED}"
        )
        return 401, {}, json.dumps({"error": {"message": msg, "api_key": ECHOED}}).encode()

    server.respond = respond


def _all_written_bytes(root: Path, skip: set[Path]) -> list[tuple[Path, bytes]]:
    return [(p, p.read_bytes()) for p in sorted(root.rglob("*")) if p.is_file() and p not in skip]


def test_no_secret_in_any_written_byte(fake_server, write_prompts, tmp_path):
    _echo_401(fake_server)
    prompts = write_prompts(["The doctor said", "DENY this one", "A nurse is", "DENY again"])
    base = f"http://user:{PASSWORD}@127.0.0.1:{fake_server.port}/v1?api_key={QKEY}&api-version=2"
    gens, scores, staged = tmp_path / "gens.parquet", tmp_path / "scores.parquet", tmp_path / "staged"
    outputs = []
    r = run_biaskit(
        "-v",
        "generate",
        prompts,
        "--backend",
        "openai",
        "--base-url",
        base,
        "--api-key-env",
        "MY_ENDPOINT_KEY",
        "--model",
        "m",
        "--out",
        gens,
        "--max-retries",
        "0",
        env=cli_env(MY_ENDPOINT_KEY=KEY),
    )
    outputs.append(r)
    assert r.returncode == 0, r.stderr
    # the endpoint URL was built with urllib.parse: path /v1/completions, the query kept (not ...?api_key=X/v1/completions)
    assert {q["path"] for q in fake_server.requests} == {"/v1/completions"}
    assert {q["query"] for q in fake_server.requests} == {f"api_key={QKEY}&api-version=2"}
    assert {q["auth"] for q in fake_server.requests} == {f"Bearer {KEY}"}  # the API key wins over the URL's user info
    t = pq.read_table(gens)
    errs = t.column("error").to_pylist()
    assert [e is not None for e in errs] == [False, True, False, True]
    assert errs[1].startswith("endpoint error: HTTP 401 from /completions: ") and "Bearer ***" in errs[1] and "api_key=***" in errs[1]
    man = json.loads((tmp_path / "gens.parquet.manifest.json").read_text())
    assert man["model"]["base_url"] == f"http://127.0.0.1:{fake_server.port}/v1?api_key=***&api-version=2"

    r = run_biaskit("score", gens, "--metrics", "vader", "--out", scores)  # a new process that never saw the key
    outputs.append(r)
    assert r.returncode == 0, r.stderr
    r = run_biaskit("hub", "stage", f"generations={gens}", f"scores={scores}", "--out", staged)
    outputs.append(r)
    assert r.returncode == 0, r.stderr
    assert (staged / "README.md").is_file() and list((staged / "data").rglob("*.parquet"))

    written = _all_written_bytes(tmp_path, skip={prompts})
    assert len(written) >= 8  # tables, manifests, shards, card
    for path, data in written:
        for s in SECRETS:
            assert s.encode() not in data, f"{s} in {path}"
    for r in outputs:
        for s in SECRETS:
            assert s not in r.stdout + r.stderr


def test_basic_credentials_from_the_url_are_sent_but_never_shown(fake_server, write_prompts, tmp_path):
    _echo_401(fake_server, echo_key=False)  # (this client has no key; the Basic credential is echoed)
    prompts = write_prompts(["DENY me"])
    out = tmp_path / "g.jsonl"
    r = run_biaskit(
        "generate",
        prompts,
        "--backend",
        "openai",
        "--base-url",
        f"http://user:{PASSWORD}@127.0.0.1:{fake_server.port}",
        "--model",
        "m",
        "--out",
        out,
        "--max-retries",
        "0",
    )
    assert r.returncode == 0, r.stderr
    assert fake_server.requests[0]["auth"] == "Basic " + base64.b64encode(f"user:{PASSWORD}".encode()).decode()
    assert fake_server.requests[0]["path"] == "/v1/completions"
    for path, data in _all_written_bytes(tmp_path, skip={prompts}):
        for s in SECRETS:
            assert s.encode() not in data, f"{s} in {path}"
    assert "Basic ***" in out.read_text()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("HTTP 401: Incorrect API key provided: Bearer abcdefgh12345", "HTTP 401: Incorrect API key provided: Bearer ***"),
        ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic ***"),
        ("authorization=xyzsecret1 rest", "authorization=*** rest"),
        ("GET /v1?api_key=K1234567&x=1", "GET /v1?api_key=***&x=1"),
        ("token=abc123&z=1, access_token=zzz", "token=***&z=1, access_token=***"),
        ('{"api_key": "abcdef12", "max_new_tokens": 20}', '{"api_key": "***", "max_new_tokens": 20}'),
        ("see http://me:hunter22@host:8/x", "see http://me:***@host:8/x"),
        ("key sk-abcdefghijklmnopqrstuvwx leaked", "key sk-*** leaked"),
        # settings and words that look alike stay as they are
        ("max_new_tokens=20 n_tokens=3 no token to score", "max_new_tokens=20 n_tokens=3 no token to score"),
        ("a basic idea; the bearer of bad news; Bearer certificates", "a basic idea; the bearer of bad news; Bearer certificates"),
    ],
)
def test_credential_shapes_are_redacted(text, expected):
    assert redact(text) == expected


def test_public_url_removes_credentials_and_keeps_the_rest():
    assert (
        public_url("https://u:p%40ss-long-1@h.example:8443/base/v1?api-version=2&key=abc123456", register=False)
        == "https://h.example:8443/base/v1?api-version=2&key=***"
    )


def test_query_url_is_not_mangled(monkeypatch):
    from biaskit.evaluate.runners.openai import OpenAIBackend

    be = OpenAIBackend("m", base_url="http://127.0.0.1:9/api?api_key=qk-SECRET-9d1e4f")
    assert be.url("/completions") == "http://127.0.0.1:9/api/v1/completions?api_key=qk-SECRET-9d1e4f"
    assert be.describe()["base_url"] == "http://127.0.0.1:9/api/v1?api_key=***"
    assert redact("echo qk-SECRET-9d1e4f") == "echo ***"  # the query credential is a known secret from now on
