"""The openai backend as the judge (:meth:`.openai.OpenAIBackend.judge_session`): an OpenAI-compatible server (vLLM,
llama.cpp server, hosted APIs) asked through ``/v1/chat/completions``.

Each prompt is one request ``{"messages": ..., "max_tokens": 1, "temperature": 0, "logprobs": true,
"top_logprobs": N}``; the server applies its own chat template. The label log-probabilities are read from the
reply's ``choices[0].logprobs.content[0].top_logprobs`` (a list of ``{"token": ..., "logprob": ...}``, the
OpenAI shape that vLLM and llama.cpp's server also return). With ``judge.token_match=prefix`` (default) a listed
token counts for a label when the token, without surrounding white space (NFC), is a non-empty prefix of exactly
that one label (``" pos"`` and ``"positive"`` both count for ``positive``; their probabilities add up: every way
the answer can begin the label); ``exact``: only a token that is the whole label (what the local judge's
``first`` scoring gives for labels that are single tokens). Case matters, as in the local judge.
Only the first answer token is seen, so this is the ``first`` label scoring of the local judge.

A label not among the top N gets probability 0 in the restricted distribution (its true probability is below
the smallest listed one; raise ``judge.top_logprobs`` when that matters). A reply without log-probabilities,
or with none of the labels among its top tokens, is that row's error naming what is missing: never a guessed
label. Every reply is parsed by the schema of :mod:`.responses` first: a log-probability that is not a finite
number <= 0, a top token listed twice or a usage count that is not a non-negative integer makes the row's error
(E317, naming the field), never a number. HTTP goes through the openai runner's client (:mod:`biaskit.net`: retries, redirect rules, redacted
errors); the key comes from the environment variable ``judge.api_key_env`` and is never written.

``judge.extra_body`` (a JSON object) adds fields to every request: against llama.cpp's server
``{"cache_prompt": false}`` (with ``judge.concurrency=1``) makes each answer independent of the server's
prompt cache and of the requests batched with it (with both on, the probabilities move by up to about 0.04
with what the server ran before; measured on the packaged SmolLM2 Q4_1 GGUF). Fields the judge sets itself
(model, messages, max_tokens, temperature, logprobs, top_logprobs, seed) are refused.

``judge.repeats=R`` sends R more requests per prompt at ``judge.temperature`` with seeds ``seed + r`` and reads the
sampled answer token from ``choices[0].message.content``.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from biaskit.evaluate.runners.backend import JudgeAnswer, JudgeSettings
from biaskit.formats.responses import BadResponse, ChatReply, EndpointError, chat_reply

#: concurrent requests when the backend was given no ``concurrency``
DEFAULT_CONCURRENCY = 4


def label_of_token(token: str, labels: Sequence[str], match: str = "prefix") -> str | None:
    """The one label the answer token ``token`` begins (``match="prefix"``) or is (``"exact"``); None when it
    begins none or several."""
    s = unicodedata.normalize("NFC", token).strip()
    if not s:
        return None
    hits = [lab for lab in labels if (lab.startswith(s) if match == "prefix" else lab == s)]
    return hits[0] if len(hits) == 1 else None


def top_logprobs_of(reply: Any) -> tuple[list[dict] | None, str | None]:
    """``choices[0].logprobs.content[0].top_logprobs`` of a chat reply as ``{"token", "logprob"}`` dicts, or
    (None, why): the reply breaks its schema (E317, :mod:`.responses`) or lacks the log-probabilities."""
    try:
        parsed = chat_reply(reply)
    except BadResponse as exc:
        return None, exc.row_error()
    return _tops(parsed)


def _tops(parsed: ChatReply) -> tuple[list[dict] | None, str | None]:
    choice = parsed.choices[0]
    if choice.logprobs is None:
        return None, "the server's reply has no choices[0].logprobs (it returned no log-probabilities; the judge needs logprobs=true, top_logprobs=N)"
    if not choice.logprobs.content:
        return (
            None,
            "the server's reply has no choices[0].logprobs.content (it returned no log-probabilities; the judge needs logprobs=true, top_logprobs=N)",
        )
    tops = choice.logprobs.content[0].top_logprobs
    if not tops:
        return None, "the server's reply has no choices[0].logprobs.content[0].top_logprobs (the judge needs the top tokens' log-probabilities)"
    return [{"token": t.token, "logprob": t.logprob} for t in tops], None


def label_logprobs(tops: list[dict], labels: Sequence[str], match: str = "prefix") -> tuple[list[float] | None, str | None]:
    """Unnormalised label log-probabilities from the (checked) top tokens: the tokens that count for a label add
    up; a label none counts for is -inf. (None, why) when no label is among them."""
    acc: dict[str, list[float]] = {lab: [] for lab in labels}
    for t in tops:
        lab = label_of_token(t["token"], labels, match)
        if lab is not None:
            acc[lab].append(float(t["logprob"]))
    if not any(acc.values()):
        shown = ", ".join(repr(t["token"]) for t in tops[:10])
        return None, f"none of the labels {list(labels)} is among the server's top {len(tops)} answer tokens ({shown})"
    out = []
    for lab in labels:
        v = acc[lab]
        if not v:
            out.append(float("-inf"))
        else:
            m = max(v)
            out.append(m + math.log(sum(math.exp(x - m) for x in v)))
    return out, None


class ServerJudge:
    """The judge behind an OpenAI-compatible chat endpoint (see the module docs); ``be`` is the
    :class:`~.openai.OpenAIBackend` that reaches it (HTTP, key, retries, extra request fields)."""

    def __init__(self, be: Any, s: JudgeSettings) -> None:
        self.client = be
        self.labels = list(s.labels)
        self.top_logprobs, self.match = s.top_logprobs, s.token_match
        self.concurrency = be.concurrency or DEFAULT_CONCURRENCY
        self.extra_body = dict(be.extra_body)

    def describe(self) -> dict[str, Any]:
        return {
            **self.client.describe(),
            "model": self.client.model,  # a local path (llama.cpp's model id) cut to its file name
            "top_logprobs": self.top_logprobs,
            "label_scoring": "first",
            "token_match": self.match,
            **({"extra_body": self.extra_body} if self.extra_body else {}),
            "chat_template": "applied by the server",
        }

    def cache_identity(self, cache: Any) -> dict[str, Any] | None:
        """The served model's identity for the response cache: what the server reports of it (``/v1/models``),
        as the openai backend's (:func:`biaskit.evaluate.runners.cache.server_identity`)."""
        return self.client.cache_identity()

    def render(self, messages: list[dict[str, str]]) -> str:
        return json.dumps(messages, ensure_ascii=False)  # what is sent; the server applies its template

    def _ask(self, messages: list[dict], *, temperature: float, seed: int | None, logprobs: bool) -> ChatReply:
        body: dict[str, Any] = {**self.extra_body, "model": self.client.request_model, "messages": messages, "max_tokens": 1}
        body["temperature"] = temperature
        if logprobs:
            body.update({"logprobs": True, "top_logprobs": self.top_logprobs})
        if seed is not None:
            body["seed"] = int(seed) & 0x7FFFFFFF
        return chat_reply(self.client.post_json("/chat/completions", body))

    def _one(self, job: tuple[list[dict], int, int, float]) -> JudgeAnswer:
        messages, seed, repeats, temperature = job
        try:
            reply = self._ask(messages, temperature=0.0, seed=seed, logprobs=True)
            replies = [reply] + [self._ask(messages, temperature=temperature, seed=seed + 1 + r, logprobs=False) for r in range(repeats)]
        except EndpointError as exc:
            return JudgeAnswer(None, error=str(exc))
        except BadResponse as exc:
            return JudgeAnswer(None, error=exc.row_error())
        usages = [r.usage for r in replies]
        seen = all(u is not None and u.prompt_tokens is not None for u in usages)
        tin = sum(u.prompt_tokens or 0 for u in usages if u is not None) if seen else None
        tout = sum(u.completion_tokens or 0 for u in usages if u is not None) if seen else None
        tops, why = _tops(reply)
        logp = None
        if tops is not None:
            logp, why = label_logprobs(tops, self.labels, self.match)
        draws = [_content_label(r, self.labels, self.match) for r in replies[1:]]
        return JudgeAnswer(logp, draws, tokens_in=tin, tokens_out=tout, error=why)

    def answer(
        self, messages: Sequence[list[dict[str, str]]], *, repeats: int = 0, temperature: float = 1.0, seeds: Sequence[int] = ()
    ) -> list[JudgeAnswer]:
        jobs = [(m, seeds[i] if seeds else i, repeats, temperature) for i, m in enumerate(messages)]
        with ThreadPoolExecutor(max_workers=max(1, self.concurrency)) as pool:
            return list(pool.map(self._one, jobs))


def _content_label(reply: ChatReply, labels: Sequence[str], match: str) -> str | None:
    msg = reply.choices[0].message
    return label_of_token(msg.content, labels, match) if msg is not None and msg.content is not None else None
