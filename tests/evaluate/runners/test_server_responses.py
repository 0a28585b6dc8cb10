"""Server replies are read through one schema (biaskit.formats.responses): property tests generate valid
and broken replies from it, and a broken reply reaching the judge or a likelihood run is that row's coded error
(E317), never a number."""

from __future__ import annotations

import copy
import json
import math

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.hardening.hardening_util import FakeServer

from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics import make_metric, score_table
from biaskit.evaluate.runners import likelihood
from biaskit.formats.responses import BadResponse, chat_reply, completion_reply

LABELS = ["positive", "neutral", "negative"]
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

logprob = st.floats(min_value=-1e6, max_value=0.0, allow_nan=False, allow_infinity=False)
count = st.integers(min_value=0, max_value=10**9)


@st.composite
def chat_replies(draw) -> dict:
    """A valid /v1/chat/completions reply with top_logprobs (distinct tokens, finite log-probabilities <= 0)."""
    tokens = draw(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=8, unique=True))
    tops = [{"token": t, "logprob": draw(logprob)} for t in tokens]
    usage = {"prompt_tokens": draw(count), "completion_tokens": draw(count)}
    content = [{"token": tokens[0], "logprob": tops[0]["logprob"], "top_logprobs": tops}]
    return {"choices": [{"message": {"content": tokens[0]}, "logprobs": {"content": content}}], "usage": usage}


#: ways to break a valid reply: (what the row error names, the change)
BREAKS = {
    "inf": ("top_logprobs[0].logprob", lambda r: _top(r, 0).update(logprob=math.inf)),
    "nan": ("top_logprobs[0].logprob", lambda r: _top(r, 0).update(logprob=math.nan)),
    "positive": ("top_logprobs[0].logprob", lambda r: _top(r, 0).update(logprob=5.0)),
    "true": ("top_logprobs[0].logprob", lambda r: _top(r, 0).update(logprob=True)),
    "string": ("top_logprobs[0].logprob", lambda r: _top(r, 0).update(logprob="-1.0")),
    "duplicate": ("top_logprobs", lambda r: _tops(r).append(dict(_top(r, 0)))),
    "negative usage": ("usage.prompt_tokens", lambda r: r["usage"].update(prompt_tokens=-1)),
    "fractional usage": ("usage.completion_tokens", lambda r: r["usage"].update(completion_tokens=2.5)),
    "string usage": ("usage.completion_tokens", lambda r: r["usage"].update(completion_tokens="one")),
    "no choices": ("choices", lambda r: r.update(choices=[])),
}


def _tops(r: dict) -> list:
    return r["choices"][0]["logprobs"]["content"][0]["top_logprobs"]


def _top(r: dict, i: int) -> dict:
    return _tops(r)[i]


@FAST
@given(chat_replies())
def test_valid_chat_replies_parse_to_the_same_tokens_and_numbers(reply):
    parsed = chat_reply(reply)
    got = [(t.token, t.logprob) for t in parsed.choices[0].logprobs.content[0].top_logprobs]
    assert got == [(t["token"], t["logprob"]) for t in _tops(reply)]
    assert parsed.usage.prompt_tokens == reply["usage"]["prompt_tokens"]


@FAST
@given(chat_replies(), st.sampled_from(sorted(BREAKS)))
def test_every_broken_chat_reply_is_refused_naming_the_field(reply, how):
    field, change = BREAKS[how]
    broken = copy.deepcopy(reply)
    change(broken)
    with pytest.raises(BadResponse) as e:
        chat_reply(broken)
    assert e.value.row_error().startswith("E317: bad response from the server") and field in e.value.where


@FAST
@given(st.lists(st.one_of(st.none(), logprob), min_size=1, max_size=6), st.sampled_from([math.inf, math.nan, 0.5, True]))
def test_completion_logprobs_must_be_finite_and_at_most_zero(values, bad):
    reply = {"choices": [{"text": "x", "logprobs": {"tokens": ["t"] * len(values), "token_logprobs": values}}]}
    assert completion_reply(reply).choices[0].logprobs.token_logprobs == values
    reply["choices"][0]["logprobs"]["token_logprobs"] = [*values, bad]
    with pytest.raises(BadResponse) as e:
        completion_reply(reply)
    assert e.value.where == f"choices[0].logprobs.token_logprobs[{len(values)}]"


def _reply(tops: list[dict], usage: dict | None = None) -> bytes:
    body = {
        "choices": [{"message": {"content": tops[0]["token"]}, "logprobs": {"content": [{**tops[0], "top_logprobs": tops}]}}],
        "usage": usage or {"prompt_tokens": 20, "completion_tokens": 1},
    }
    return json.dumps(body).encode()  # json writes inf as Infinity, as a careless server would


GOOD = [{"token": "positive", "logprob": -0.5}, {"token": "negative", "logprob": -1.5}]
BAD_REPLIES = {
    "INF": _reply([{"token": "positive", "logprob": math.inf}, {"token": "negative", "logprob": -1.0}]),
    "PLUS5": _reply([{"token": "positive", "logprob": 5.0}, {"token": "negative", "logprob": -1.0}]),
    "TRUE": _reply([{"token": "positive", "logprob": True}, {"token": "negative", "logprob": -1.0}]),
    "DUP": _reply([{"token": "positive", "logprob": -1.0}, {"token": "positive", "logprob": -1.0}, {"token": "negative", "logprob": -1.0}]),
    "USAGE_WORD": _reply(GOOD, {"prompt_tokens": 20, "completion_tokens": "one"}),
    "USAGE_HALF": _reply(GOOD, {"prompt_tokens": 20, "completion_tokens": 1.5}),
    "GOOD": _reply(GOOD),
}


@pytest.fixture()
def judge_server():
    s = FakeServer()

    def respond(h, path, body):
        text = body["messages"][-1]["content"].rsplit("Text: ", 1)[1]
        return 200, {"Content-Type": "application/json"}, BAD_REPLIES[text]

    s.respond = respond
    yield s
    s.close()


def test_a_broken_server_reply_is_the_judge_rows_coded_error_never_a_probability(judge_server):
    texts = list(BAD_REPLIES)
    # one order: the fake server answers with the same tokens whatever the order of the labels, and the usage
    # counts below are those of one request (orders=2, the default, sums two)
    params = {"backend": "openai", "base_url": judge_server.url, "model": "m", "max_retries": 0, "orders": 1}
    rows = score_table(pa.table({"continuation": texts}), "judge", params={"judge": params}, progress=False).to_pylist()
    by = dict(zip(texts, rows))
    # the good reply: positive e^-0.5, negative e^-1.5, neutral not listed (0)
    good = by.pop("GOOD")
    assert good["judge_error"] is None and good["judge_label"] == "positive"
    assert good["judge_p_positive"] == pytest.approx(1 / (1 + math.exp(-1.0)), abs=1e-12) and good["judge_p_neutral"] == 0.0
    assert good["judge_tokens_in"] == 20 and good["judge_tokens_out"] == 1
    for name, r in by.items():
        assert r["judge_label"] is None and r["judge_p_positive"] is None and r["judge_p_negative"] is None, name
        assert r["judge_error"].startswith("E317"), (name, r["judge_error"])
    assert "logprob" in by["INF"]["judge_error"] and "finite" in by["INF"]["judge_error"]
    assert "less than or equal to 0" in by["PLUS5"]["judge_error"]
    assert "listed twice" in by["DUP"]["judge_error"]
    assert "usage.completion_tokens" in by["USAGE_WORD"]["judge_error"] and "usage.completion_tokens" in by["USAGE_HALF"]["judge_error"]


def test_an_infinite_or_positive_prompt_logprob_is_a_likelihood_row_error(tmp_path):
    server = FakeServer()

    def respond(h, path, body):
        p = body["prompt"]
        second = {"INF": math.inf, "PLUS": 2.0}.get(p.split()[-1], -1.5)
        lp = {"tokens": ["a", " " + p.split()[-1]], "token_logprobs": [None, second], "text_offset": [0, 1]}
        return 200, {}, json.dumps({"choices": [{"text": p, "logprobs": lp}]}).encode()

    server.respond = respond
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"prompt_id": f"p{i}", "text": t}) + "\n" for i, t in enumerate(["a OK", "a INF", "a PLUS"])))
    try:
        t = likelihood(str(path), model="m", backend="openai", backend_options={"base_url": server.url, "max_retries": 0})
    finally:
        server.close()
    assert t.column("nll_mean").to_pylist() == [1.5, None, None]  # one scored token: -(-1.5)
    errs = t.column("error").to_pylist()
    assert errs[0] is None and all(e.startswith("E317") and "token_logprobs[1]" in e for e in errs[1:])


@pytest.mark.parametrize("timeout", [-1, "nan", 0, "inf"])
def test_a_judge_timeout_that_is_not_a_positive_finite_number_is_refused_when_parsed(timeout):
    with pytest.raises(BiaskitError) as e:
        make_metric("judge", "continuation", {"backend": "openai", "base_url": "http://127.0.0.1:9/v1", "timeout": timeout})
    assert e.value.code == "E324" and "judge.timeout" in str(e.value)
