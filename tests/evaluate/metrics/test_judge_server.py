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
                {"token": self.tok.decode([int(i)]), "logprob": float(v), "bytes": list(self.tok.decode([int(i)]).encode())}
                for v, i in zip(top.values, top.indices)
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
    return {"judge": {"backend": "openai", "base_url": server.url, "model": "tiny", "api_key_env": "JUDGE_KEY", **kw}}


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
    loc = score_table(t, "judge", params={"judge": {"model": tiny_judge}}, progress=False)
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
    from biaskit.evaluate.metrics.judge_server import label_logprobs, top_logprobs_of

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


def pending_test_judge_against_a_real_llama_cpp_server(llama_server):
    """Not collected yet (no ``test_`` prefix): the real llama.cpp server fixture ``llama_server`` (.base_url,
    .model, .api_key) lands on the server branch; after the merge, rename this to ``test_...``. llama.cpp's
    chat replies carry ``choices[0].logprobs.content[0].top_logprobs = [{"token", "logprob"}, ...]``."""
    import os

    os.environ["LLAMA_JUDGE_KEY"] = llama_server.api_key or ""
    params = {"judge": {"backend": "openai", "base_url": llama_server.base_url, "model": llama_server.model, "api_key_env": "LLAMA_JUDGE_KEY"}}
    out = score_table(pa.table({"continuation": TEXTS}), "judge", params=params, progress=False).to_pylist()
    for r in out:
        assert r["judge_error"] is None, r["judge_error"]
        assert abs(sum(r[f"judge_p_{x}"] for x in ("positive", "neutral", "negative")) - 1) < 1e-9
        assert r["judge_tokens_in"] > 0
