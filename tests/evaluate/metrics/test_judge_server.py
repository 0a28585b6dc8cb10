"""The judge through an OpenAI-compatible server: a small local chat server (127.0.0.1) serving the tiny
chat judge, with ``/v1/chat/completions`` replies in the shape llama.cpp's server and the OpenAI API give
(``choices[0].logprobs.content[0].top_logprobs = [{"token", "logprob", "bytes"}, ...]``, ``usage``).

The server applies the model's chat template and answers one token; ``MODE`` switches it to a server that
returns no log-probabilities (``logprobs: null``) or an empty content list, as servers without the feature do.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pyarrow as pa
import pytest

from biaskit.evaluate.metrics import score_table

TEXTS = ["She is a wonderful and kind doctor who helps everyone.", "He was a terrible criminal and a thief.", "The engineer fixed the bridge."]


class ChatServer:
    def __init__(self, model_dir: str, api_key: str | None = None) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.tok = AutoTokenizer.from_pretrained(model_dir)
        self.model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
        self.api_key, self.mode, self.bodies, self.lock = api_key, "full", [], threading.Lock()
        server = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                server.bodies.append({**body, "_auth": self.headers.get("Authorization")})
                if server.api_key and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    return self._send(401, {"error": {"message": "invalid api key"}})
                if self.path != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": "not found"}})
                with server.lock:
                    return self._send(200, server.reply(body))

            def _send(self, code, obj):
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def next_token_logprobs(self, messages):
        torch = self.torch
        prompt = self.tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        ids = self.tok(prompt, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            lsm = torch.log_softmax(self.model(torch.tensor([ids])).logits[0, -1].double(), -1)
        return ids, lsm

    def token_bytes(self, i: int) -> list[int]:
        """The token's own bytes, as llama.cpp and OpenAI send them (two byte-level tokens of one partial
        character both decode to U+FFFD, their bytes differ)."""
        from transformers.convert_slow_tokenizer import bytes_to_unicode

        byte_of = {c: b for b, c in bytes_to_unicode().items()}
        t = self.tok.convert_ids_to_tokens(i)
        if i in self.tok.added_tokens_decoder:
            return list(t.encode())
        return [byte_of[c] for c in t]

    def reply(self, body):
        torch = self.torch
        ids, lsm = self.next_token_logprobs(body["messages"])
        temp = float(body.get("temperature", 1.0))
        if temp == 0:
            nxt = int(lsm.argmax())
        else:
            g = torch.Generator().manual_seed(int(body.get("seed", 0)))
            nxt = int(torch.multinomial(torch.softmax(lsm / temp, -1), 1, generator=g))
        text = self.tok.decode([nxt])
        choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length", "logprobs": None}
        if body.get("logprobs") and self.mode == "full":
            k = min(int(body.get("top_logprobs") or 0), lsm.shape[-1])
            top = torch.topk(lsm, k)
            tops = [
                {"token": self.tok.decode([int(i)]), "logprob": float(v), "bytes": self.token_bytes(int(i))} for v, i in zip(top.values, top.indices)
            ]
            choice["logprobs"] = {"content": [{"token": text, "logprob": float(lsm[nxt]), "bytes": list(text.encode()), "top_logprobs": tops}]}
        elif body.get("logprobs") and self.mode == "empty":
            choice["logprobs"] = {"content": []}
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [choice],
            "usage": {"prompt_tokens": len(ids), "completion_tokens": 1, "total_tokens": len(ids) + 1},
        }


@pytest.fixture()
def chat_server(tiny_judge):
    s = ChatServer(tiny_judge, api_key="sk-judge-secret-123")
    yield s
    s.httpd.shutdown()


def _params(server, **kw):
    # one option order unless a test asks for more (the default, 2, asks every text twice)
    return {"judge": {"backend": "openai", "base_url": server.url, "model": "tiny", "api_key_env": "JUDGE_KEY", "orders": 1, **kw}}


def _prefix_reference(server, text, labels):
    """The documented prefix rule computed from the served model's whole next-token distribution (no biaskit
    code): a vocabulary token counts for a label when its text, stripped, is a prefix of exactly that label."""
    from biaskit.evaluate.metrics.judge_tasks import load_task

    _, lsm = server.next_token_logprobs(load_task("sentiment").messages(text, tuple(labels)))
    p = np.exp(lsm.numpy())
    mass = np.zeros(len(labels))
    for i in range(len(p)):
        s = server.tok.decode([i]).strip()
        hits = [j for j, lab in enumerate(labels) if s and lab.startswith(s)]
        if len(hits) == 1:
            mass[hits[0]] += p[i]
    return mass / mass.sum()


def test_server_probabilities_equal_the_local_judge_and_the_prefix_rule(chat_server, tiny_judge, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", "sk-judge-secret-123")
    labels = ["positive", "neutral", "negative"]
    t = pa.table({"continuation": TEXTS})
    # the tiny vocabulary has ~300 tokens: top 400 lists all of them, so nothing is cut off
    exact = score_table(t, "judge", params=_params(chat_server, top_logprobs=400, token_match="exact"), progress=False)
    prefix = score_table(t, "judge", params=_params(chat_server, top_logprobs=400), progress=False)
    loc = score_table(t, "judge", params={"judge": {"model": tiny_judge, "orders": 1}}, progress=False)
    for a, p, b, text in zip(exact.to_pylist(), prefix.to_pylist(), loc.to_pylist(), TEXTS):
        assert a["judge_error"] is None and p["judge_error"] is None
        # exact: the label words are whole tokens here, so the server path equals the local first-token path
        np.testing.assert_allclose([a[f"judge_p_{x}"] for x in labels], [b[f"judge_p_{x}"] for x in labels], atol=1e-5, rtol=0)
        assert a["judge_label"] == b["judge_label"]
        np.testing.assert_allclose([p[f"judge_p_{x}"] for x in labels], _prefix_reference(chat_server, text, labels), atol=1e-5, rtol=0)
        assert a["judge_tokens_out"] == 1 and a["judge_tokens_in"] == b["judge_tokens_in"]  # from the server's usage
        assert json.loads(a["judge_prompt"])[-1]["role"] == "user"
    sent = chat_server.bodies[0]
    assert sent["logprobs"] is True and sent["top_logprobs"] == 400 and sent["max_tokens"] == 1 and sent["temperature"] == 0
    assert sent["_auth"] == "Bearer sk-judge-secret-123"
    assert "sk-judge-secret-123" not in json.dumps(exact.to_pylist())


def test_labels_cut_off_from_a_short_top_list_get_probability_zero(chat_server, monkeypatch):
    from biaskit.evaluate.metrics.judge_tasks import load_task

    monkeypatch.setenv("JUDGE_KEY", "sk-judge-secret-123")
    labels = ["positive", "neutral", "negative"]
    out = score_table(pa.table({"continuation": TEXTS}), "judge", params=_params(chat_server, top_logprobs=5, token_match="exact"), progress=False)
    for r, text in zip(out.to_pylist(), TEXTS):
        _, lsm = chat_server.next_token_logprobs(load_task("sentiment").messages(text, tuple(labels)))
        top = {chat_server.tok.decode([int(i)]).strip(): float(np.exp(float(v))) for v, i in zip(*chat_server.torch.topk(lsm, 5))}
        mass = np.array([top.get(lab, 0.0) for lab in labels])
        if mass.sum() == 0:  # no label among the top tokens: null, with the tokens it did see named
            assert r["judge_label"] is None and "none of the labels" in r["judge_error"] and r["judge_p_positive"] is None
        else:  # the labels listed share the probability; one cut off gets 0
            np.testing.assert_allclose([r[f"judge_p_{x}"] for x in labels], mass / mass.sum(), atol=1e-9, rtol=0)


def test_a_server_without_logprobs_gives_null_labels_and_an_error_naming_what_is_missing(chat_server, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", "sk-judge-secret-123")
    for mode, missing in (("none", "choices[0].logprobs"), ("empty", "choices[0].logprobs.content")):
        chat_server.mode = mode
        out = score_table(pa.table({"continuation": TEXTS}), "judge", params=_params(chat_server), progress=False).to_pylist()
        for r in out:
            assert r["judge_label"] is None and r["judge_p_positive"] is None
            assert missing in r["judge_error"] and "no" in r["judge_error"]


def test_labels_outside_the_top_tokens_get_zero_and_none_listed_is_an_error():
    from biaskit.evaluate.runners.judge_openai import label_logprobs, top_logprobs_of

    # a real-shaped llama.cpp reply: " pos" and "Positive" (case differs: not the label), "neg"
    reply = {
        "choices": [
            {
                "message": {"content": " pos"},
                "logprobs": {
                    "content": [
                        {
                            "token": " pos",
                            "logprob": -0.5,
                            "top_logprobs": [
                                {"token": " pos", "logprob": -0.5},
                                {"token": "positive", "logprob": -1.5},
                                {"token": "Positive", "logprob": -2.0},
                                {"token": "neg", "logprob": -2.5},
                                {"token": "n", "logprob": -3.0},  # a prefix of two labels: counts for neither
                            ],
                        }
                    ]
                },
            }
        ]
    }
    tops, why = top_logprobs_of(reply)
    assert why is None
    lp, why = label_logprobs(tops, ["positive", "neutral", "negative"])
    assert why is None
    # positive: log(e^-0.5 + e^-1.5); neutral: not listed (-inf); negative: -2.5
    assert lp[0] == pytest.approx(np.log(np.exp(-0.5) + np.exp(-1.5)), abs=1e-12)
    assert lp[1] == float("-inf") and lp[2] == -2.5
    lp, why = label_logprobs([{"token": "Hello", "logprob": -0.1}], ["positive", "negative"])
    assert lp is None and "none of the labels" in why and "'Hello'" in why


def test_server_repeats_sample_through_the_server_with_seeds(chat_server, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", "sk-judge-secret-123")
    out = score_table(
        pa.table({"continuation": TEXTS[:2]}), "judge", params=_params(chat_server, top_logprobs=300, repeats=3, temperature=1.0), progress=False
    )
    sampled = [b for b in chat_server.bodies if b["temperature"] == 1.0]
    assert len(sampled) == 6 and all("logprobs" not in b for b in sampled)
    assert len({b["seed"] for b in sampled}) == 6
    assert set(out.column("judge_retest").to_pylist()) <= {True, False}
    assert out.column("judge_tokens_out").to_pylist() == [4, 4]


def test_server_judge_answers_from_the_cache_and_keeps_the_key_out_of_it(chat_server, tmp_path, monkeypatch):
    from biaskit.evaluate.cache import ResponseCache

    monkeypatch.setenv("JUDGE_KEY", "sk-judge-secret-123")
    t = pa.table({"continuation": TEXTS})
    folder = tmp_path / "cache"

    def run(**kw):
        cache = ResponseCache(folder)
        kw = {"top_logprobs": 400, **kw}  # the whole tiny vocabulary: every row has its labels (error rows are not cached)
        out = score_table(t, "judge", params=_params(chat_server, **kw), cache=cache, progress=False)
        return out, cache.stats()

    first, s1 = run()
    n_sent = len(chat_server.bodies)
    assert (s1["hits"], s1["misses"], n_sent) == (0, 3, 3) and first.column("judge_error").null_count == 3
    second, s2 = run(concurrency=1, timeout=30.0, max_retries=1)  # how the server is reached: not in the key
    assert (s2["hits"], s2["misses"]) == (3, 0) and len(chat_server.bodies) == n_sent  # no request sent
    assert second.equals(first)
    assert run(top_logprobs=300)[1]["hits"] == 0  # what the server is asked for: in the key
    assert run(extra_body='{"cache_prompt": false}')[1]["hits"] == 0
    assert chat_server.bodies[-1]["cache_prompt"] is False and chat_server.bodies[-1]["max_tokens"] == 1
    stored = b"".join(p.read_bytes() for p in folder.iterdir() if p.is_file())
    assert b"sk-judge-secret-123" not in stored and stored  # the key is in no cached byte


@pytest.mark.parametrize(
    "body, backend, why",
    [
        ("[1, 2]", "openai", "must be a JSON object"),
        ("{oops", "openai", "must be a JSON object"),
        ('{"top_logprobs": 5, "model": "x"}', "openai", "sets model, top_logprobs"),
        ('{"cache_prompt": false}', "hf", "needs judge.backend=openai"),
    ],
)
def test_bad_extra_body_is_error_e324_naming_the_value(body, backend, why):
    from biaskit.errors import BiaskitError
    from biaskit.evaluate.metrics import make_metric

    params = {"extra_body": body, "backend": backend, "base_url": "http://127.0.0.1:9/v1"}
    with pytest.raises(BiaskitError) as e:
        make_metric("judge", "continuation", params)
    assert e.value.code == "E324" and why in str(e.value) and body in str(e.value)


def _written_bytes(folder) -> bytes:
    """Every file under ``folder`` (tables, manifests, the cache's database and its WAL), and each Parquet
    table's decoded rows too."""
    import os

    import pyarrow.parquet as pq

    out = b""
    for root, _, files in os.walk(folder):
        for f in files:
            p = os.path.join(root, f)
            out += open(p, "rb").read()
            if f.endswith(".parquet"):
                out += json.dumps(pq.read_table(p).to_pylist(), default=str).encode()
    return out


def _prefix_mass(tops: list[dict], labels: list[str]) -> np.ndarray:
    """The documented prefix rule on a reply's top tokens, written out here (no biaskit code): a token counts for
    a label when its text, stripped, is a non-empty prefix of exactly that label; normalised over the labels."""
    mass = np.zeros(len(labels))
    for t in tops:
        s = t["token"].strip()
        hits = [j for j, lab in enumerate(labels) if s and lab.startswith(s)]
        if len(hits) == 1:
            mass[hits[0]] += np.exp(t["logprob"])
    return mass / mass.sum()


def test_judge_against_a_real_llama_cpp_server(llama_server, tmp_path, monkeypatch):
    """``score -m judge`` through the openai backend against llama.cpp's server (the packaged SmolLM2 GGUF):
    labels from ``top_logprobs``, equal to a request made here by hand; the canary key and the GGUF's folder
    reach no written byte (table, manifest, response cache); a re-run is answered from the cache."""
    import os

    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from biaskit.cli import app
    from biaskit.evaluate.runners.common import public_model_id

    labels = ["positive", "neutral", "negative"]
    monkeypatch.setenv("LLAMA_JUDGE_KEY", llama_server.api_key)
    inp = tmp_path / "in" / "g.parquet"
    inp.parent.mkdir()
    pq.write_table(pa.table({"prompt_id": [f"p{i}" for i in range(len(TEXTS))], "continuation": TEXTS}), inp)
    out = tmp_path / "out"
    args = ["score", str(inp), "-m", "judge", "-p", "judge.backend=openai", "-p", f"judge.base_url={llama_server.base_url}"]
    args += ["-p", f"judge.model={llama_server.model}", "-p", "judge.api_key_env=LLAMA_JUDGE_KEY", "--cache", str(out / "cache")]
    # answers that do not depend on llama.cpp's prompt cache or on the requests batched with them (both move the
    # probabilities by up to ~0.04 on this Q4_1 model), so that a request made by hand must give the same ones
    args += ["-p", 'judge.extra_body={"cache_prompt": false}', "-p", "judge.concurrency=1"]
    # one order: the hand request below repeats the one prompt the row records (the default, two orders, averages
    # two requests; the averaging is checked in test_judge.py)
    args += ["-p", "judge.orders=1"]
    runs = []
    for name in ("a", "b"):
        r = CliRunner().invoke(app, [*args, "--out", str(out / f"{name}.parquet")])
        assert r.exit_code == 0, r.output
        assert llama_server.api_key not in r.output
        runs.append(pq.read_table(out / f"{name}.parquet"))
    rows = runs[0].to_pylist()
    for row in rows:
        assert row["judge_error"] is None, row["judge_error"]
        assert row["judge_label"] in labels  # the task's vocabulary, nothing parsed from free text
        p = np.array([row[f"judge_p_{x}"] for x in labels])
        assert abs(p.sum() - 1.0) < 1e-9 and (p >= 0).all()
        assert row["judge_label"] == labels[int(np.argmax(p))]
        assert row["judge_tokens_in"] > 0 and row["judge_tokens_out"] == 1
    # each text asked by hand (standard library HTTP), with the messages the judge recorded it sent
    for row in rows:
        messages = json.loads(row["judge_prompt"])
        assert messages[-1]["role"] == "user" and row["continuation"] in messages[-1]["content"]
        body = {"model": llama_server.model, "messages": messages, "max_tokens": 1, "temperature": 0.0, "logprobs": True}
        status, reply = llama_server.post("/chat/completions", {**body, "top_logprobs": 20, "cache_prompt": False})
        assert status == 200, reply
        ref = _prefix_mass(reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"], labels)
        np.testing.assert_allclose([row[f"judge_p_{x}"] for x in labels], ref, atol=1e-6, rtol=0)
        assert row["judge_label"] == labels[int(np.argmax(ref))]
        assert row["judge_tokens_in"] == reply["usage"]["prompt_tokens"]
    # the re-run: every row from the cache, the same table
    manifest = json.loads((out / "b.parquet.manifest.json").read_text())
    assert manifest["cache"] == {"hits": len(TEXTS), "misses": 0, "damaged": 0, "path": str(out / "cache")}
    assert runs[1].equals(runs[0])
    written = _written_bytes(out)
    assert llama_server.api_key.encode() not in written
    if llama_server.kind == "llama.cpp":  # llama.cpp reports the GGUF's full local path as its model id
        assert os.path.dirname(llama_server.model).encode() not in written
        assert public_model_id(llama_server.model).encode() in written  # recorded by its file name
