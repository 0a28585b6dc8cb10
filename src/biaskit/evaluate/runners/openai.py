"""OpenAI-compatible HTTP backend (vLLM, TGI, llama.cpp server, hosted APIs): ``/v1/completions``.

Generation sends one request per (prompt, sample) with ``seed`` = the per-row seed, so a server that honours
seeds (vLLM, llama.cpp) gives the same samples whatever the concurrency. Likelihood uses the legacy
completions options ``echo=true, logprobs=1`` and scores the prompt's own token log-probabilities (the first
token has none: it is context only, like ``add_bos=False`` with the hf backend), read from vLLM's
``prompt_logprobs`` or the echoed legacy ``logprobs`` (:func:`prompt_token_logprobs`); a server that ignores
``echo`` (llama.cpp's) is error E300, never a number. ``chat=True`` uses ``/v1/chat/completions`` instead (no
likelihoods there). A model id that is a local path (llama.cpp reports its GGUF's) is sent as it is and
recorded as its file name (:func:`public_model_id`).

HTTP goes through :mod:`biaskit.net` (requests' ``Session``, one per worker thread). Requests that time out,
lose the connection, get HTTP 408/409/425/429/5xx or a body that is not JSON are retried with exponential
backoff (``Retry-After`` is honoured, in seconds or as an HTTP-date); after ``max_retries`` the row gets
``error`` set and no text, never a made-up value. Other HTTP errors (400, 401, 404) are not retried. A response that cannot be used (not UTF-8, cut short, not JSON,
no choices) is an error of that row only; the run goes on. Every reply is read through the schema of
:mod:`.responses` (a text that is not a string, a log-probability that is not a finite number <= 0, a usage count
that is not a non-negative integer: that row's error, starting with E317). The API key is read from an
environment variable (default ``OPENAI_API_KEY``), never from the command line, and never written to a
manifest; error texts are redacted (:func:`biaskit.secrets.redact`) before they are stored.

The endpoint URL is parsed, not concatenated: ``/completions`` goes after the URL's path and before its
query (``http://host/v1?api-version=2`` -> ``http://host/v1/completions?api-version=2``). User info in the
URL (``http://user:pass@host``) is sent as HTTP Basic credentials (unless there is an API key) and, like
credential-like query values, never appears in a manifest or message. Redirects are not followed: a redirected
request is a run error (E142) naming the target, unless ``allow_redirects`` is set; then the request is sent
again (same method and body) to the target, and the credentials only when the target has the same scheme,
host and port.
"""

from __future__ import annotations

import base64
import json
import math
import os
import urllib.parse
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.evaluate.runners.backend import BackendBase, BackendOption, Capabilities, JudgeSettings
from biaskit.evaluate.runners.cache import server_identity
from biaskit.evaluate.runners.common import (
    GenerationSettings,
    LikelihoodSettings,
    Unit,
    chat_messages,
    derive_seed,
    find_span,
    join_continuation,
    model_prompt,
    public_model_id,
)
from biaskit.evaluate.runners.judge_openai import ServerJudge
from biaskit.formats.responses import BadResponse, EndpointError, chat_reply, completion_reply, decode_reply
from biaskit.log import get_logger
from biaskit.net import Backoff, HttpClient, HttpError
from biaskit.secrets import cut, public_url, redact, register_secret

log = get_logger("runners.openai")

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
MAX_REDIRECTS = 5
ERROR_BODY_READ = 1 << 16  # bytes of an error body read (redacted whole, then cut)
ERROR_TEXT_MAX = 340  # characters of an error text kept in the row's error column


class OpenAIBackend(BackendBase):
    """Client for an OpenAI-compatible completions endpoint (see module docs)."""

    name = "openai"
    capabilities = Capabilities(
        kinds=("generate", "likelihood"),
        options=(
            "base_url",
            "api_key_env",
            "served_model",  # the id sent to the server when the recorded one is a local path's file name
            "timeout",
            "max_retries",
            "backoff",
            "max_backoff",
            "concurrency",
            "extra_body",
            "allow_redirects",
            "model_revision",
            "task",
        ),
        judge=("chat_template", "logprobs", "top_k", "request_per_repeat"),
        settable=(
            BackendOption("backoff", "float", 1.0, "seconds before the first retry (doubled each retry; a Retry-After header wins)"),
            BackendOption("max_backoff", "float", 30.0, "the longest wait between two retries, in seconds"),
            BackendOption("concurrency", "int", None, "requests in flight when --batch-size is auto (default 8)"),
        ),
    )

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        concurrency: int | None = None,
        extra_body: dict | None = None,
        allow_redirects: bool = False,
        served_model: str | None = None,
        model_revision: str | None = None,
        task: str = "auto",
    ) -> None:
        url = base_url or os.environ.get("OPENAI_BASE_URL")
        if not url:
            raise BiaskitError(
                "E062",
                "the openai backend needs the endpoint's base URL",
                value=None,
                fix="pass --base-url http://127.0.0.1:8000/v1 (vLLM/TGI/llama.cpp server) or set OPENAI_BASE_URL",
            )
        self.api_key = os.environ.get(api_key_env) or None
        register_secret(self.api_key)  # a key under any variable name is redacted from logs and errors
        public = public_url(url)  # registers user-info passwords and query credentials as secrets too
        try:
            parts = urllib.parse.urlsplit(url.strip())
            parts.port  # noqa: B018 - raises ValueError on a bad port
        except ValueError:
            parts = None
        if parts is None or parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise BiaskitError("E062", "the endpoint base URL is not an http(s) URL", value=public, fix="pass --base-url http://HOST:PORT/v1")
        path = parts.path.rstrip("/")
        if not path.endswith("/v1"):
            path = path + "/v1"
        netloc = parts.netloc.rpartition("@")[2]  # user info is sent as a header, never in the request line
        self._scheme, self._netloc, self._path, self._query = parts.scheme.lower(), netloc, path, parts.query
        self._basic = None
        if parts.username is not None:
            cred = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
            self._basic = base64.b64encode(cred.encode("utf-8")).decode("ascii")
            register_secret(self._basic)
        #: the endpoint without credentials (what manifests and messages show)
        self.base_url = public_url(urllib.parse.urlunsplit((self._scheme, netloc, path, parts.query, "")))
        #: the model name biaskit records (a local path reduced to its file name: :func:`public_model_id`)
        self.model = public_model_id(model)
        #: the id sent in requests: the server's own name for the model, which may be a local path
        self.request_model = served_model or model
        self.allow_redirects = bool(allow_redirects)
        self.timeout = _positive_seconds("timeout", timeout)
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.concurrency = concurrency
        self.extra_body = dict(extra_body or {})
        self.truncated_count = 0
        self.batch_sizes_used: list[int] = []
        self._http: Any = None  # the HttpClient, made on first use
        #: the served model's revision as the user names it (--model-revision): recorded, and part of the cache key
        self.model_revision = model_revision
        self.revision = model_revision

    def cache_identity(self) -> dict[str, Any] | None:
        """The model id and revision the server reports (``/v1/models``) and ``--model-revision`` (see :mod:`.cache`)."""
        return server_identity(self)

    def judge_session(self, s: JudgeSettings) -> ServerJudge:
        """The served chat model as the judge (:class:`~.judge_openai.ServerJudge`: ``/v1/chat/completions`` with
        ``top_logprobs``)."""
        return ServerJudge(self, s)

    def describe(self) -> dict[str, Any]:
        d = {"backend": "openai", "base_url": self.base_url, "timeout_s": self.timeout, "max_retries": self.max_retries}
        if self.allow_redirects:
            d["allow_redirects"] = True
        return d

    def url(self, path: str) -> str:
        """The request URL of ``path`` (e.g. ``/completions``): after the base path, before the query."""
        return urllib.parse.urlunsplit((self._scheme, self._netloc, self._path + path, self._query, ""))

    # ------------------------------------------------------------------ HTTP
    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "User-Agent": "biaskit"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        elif self._basic:
            headers["Authorization"] = f"Basic {self._basic}"
        return headers

    def _client(self) -> Any:
        if self._http is None:
            self._http = HttpClient(
                policy=Backoff(self.max_retries, self.backoff, self.max_backoff),
                timeout=self.timeout,
                allow_redirects=self.allow_redirects,
                max_redirects=MAX_REDIRECTS,
                retry_status=RETRY_STATUS,
                redirect_fix="use the target as --base-url if you trust it, or pass --allow-redirects "
                "(credentials are never sent to another scheme, host or port)",
            )
        return self._http

    def post_json(self, path: str, body: dict) -> dict:
        """POST JSON through :mod:`biaskit.net` (retries on timeouts, connection errors, 429/5xx and a body that
        is not JSON; redirects as in the module docs); raise EndpointError when it fails."""
        try:
            r = self._client().request(
                "POST", self.url(path), what=path, headers=self._headers(), data=json.dumps(body).encode(), retry_response=_not_json
            )
        except HttpError as exc:
            if exc.retryable:
                raise EndpointError(redact(f"{exc.reason} (gave up after {exc.attempts} attempts)"), retryable=True) from None
            raise EndpointError(exc.reason, retryable=False) from None
        if not 200 <= r.status_code < 300:
            detail = (r.content[:ERROR_BODY_READ].decode("utf-8", "replace") if r.content else "").strip()
            if self.request_model != self.model:  # a server quoting its model path in an error: the file name only
                detail = detail.replace(self.request_model, self.model)
            # redacted whole, cut after: a key straddling the cut cannot survive as a prefix
            raise EndpointError(cut(f"HTTP {r.status_code} from {path}: {detail}", ERROR_TEXT_MAX), retryable=False)
        try:
            text = r.content.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise EndpointError(f"bad response from {path}: the body is not UTF-8 ({exc.reason} at byte {exc.start})", retryable=False) from None
        obj = decode_reply(text, f"reply of {path}")
        if not isinstance(obj, dict):
            raise EndpointError(f"bad response from {path}: a JSON {type(obj).__name__}, not an object", retryable=False)
        return obj

    def _map(self, units: Sequence[Unit], batch_size: int | None, fn) -> Iterator[list[dict]]:
        """Run ``fn`` on units with ``batch_size`` requests in flight; yield results in chunks, in order."""
        n = batch_size or self.concurrency or 8
        with ThreadPoolExecutor(max_workers=n) as pool:
            for start in range(0, len(units), n):
                chunk = list(units[start : start + n])
                self.batch_sizes_used.append(len(chunk))
                yield list(pool.map(fn, chunk))

    # ------------------------------------------------------------------ generate
    def generate(self, units: Sequence[Unit], s: GenerationSettings, batch_size: int | None) -> Iterator[list[dict]]:
        def one(u: Unit) -> dict:
            body: dict[str, Any] = {
                "model": self.request_model,
                "max_tokens": s.max_new_tokens,
                "n": 1,
                "seed": derive_seed(s.seed, u.prompt_id, u.sample_index) & 0x7FFFFFFF,
            }
            if s.do_sample:
                body["temperature"] = s.temperature
                if s.top_p is not None:
                    body["top_p"] = s.top_p
                if s.top_k:
                    body["top_k"] = s.top_k  # vLLM / llama.cpp / TGI extension
            else:
                body["temperature"] = 0.0
            if s.repetition_penalty:
                body["repetition_penalty"] = s.repetition_penalty  # vLLM / llama.cpp / TGI extension
            body.update(self.extra_body)
            sent, stripped = model_prompt(u.text, s)
            fail = {"_unit": u, "continuation": None, "full_text": None, "truncated": False}

            def ask() -> Any:
                if s.chat:
                    body["messages"] = chat_messages(u.text, s)
                    resp = self.post_json("/chat/completions", body)
                    _choice(resp, body["n"])
                    msg = chat_reply(resp).choices[0].message
                    return None if msg is None else msg.content
                body["prompt"] = sent
                resp = self.post_json("/completions", body)
                _choice(resp, body["n"])
                return completion_reply(resp).choices[0].text

            text, failed = _answer(ask, fail, "endpoint error: unexpected response shape ({!r})")
            if failed is not None:
                return failed
            if text is None:
                return {**fail, "error": "endpoint error: no text in response"}
            if not isinstance(text, str):
                return {**fail, "error": f"endpoint error: the response text is a {type(text).__name__} ({str(text)[:40]}), not a string"}
            cont, full = join_continuation(u.text, sent, stripped, text, s.first_sentence)
            return {"_unit": u, "continuation": cont, "full_text": full, "truncated": False, "error": None}

        yield from self._map(units, batch_size, one)

    # ------------------------------------------------------------------ likelihood
    def bos_policy(self, s: LikelihoodSettings) -> None:
        if s.add_bos:
            raise BiaskitError(
                "E062",
                "add_bos=True is not available with the openai backend (the server tokenises)",
                value=True,
                fix="leave add_bos at auto/False; the first token is context only",
            )
        return None

    def likelihood(self, units: Sequence[Unit], s: LikelihoodSettings, batch_size: int | None) -> Iterator[list[dict]]:
        def one(u: Unit) -> dict:
            base = {"_unit": u, "nll_mean": None, "perplexity": None, "n_tokens": None, "truncated": False}
            if not u.text or not u.text.strip():
                return {**base, "error": "empty text"}
            span = None
            if u.span is not None:
                k = find_span(u.text, u.span)
                if k < 0:
                    return {**base, "error": f"span {u.span!r} does not occur in the text"}
                span = (k, k + len(u.span))
            body = {"model": self.request_model, "prompt": u.text, "max_tokens": 1, "echo": True, "logprobs": 1, "temperature": 0.0}
            body.update(self.extra_body)
            got, failed = _answer(
                lambda: prompt_token_logprobs(_checked_choice(self.post_json("/completions", body)), u.text, self.base_url),
                base,
                "endpoint did not return prompt logprobs (needs echo+logprobs support): {!r}",
            )
            if failed is not None:
                return failed
            if isinstance(got, str):
                return {**base, "error": f"endpoint error: {got}"}
            toks, tlp, offs = got
            if span is not None and offs is None:
                return {**base, "error": "endpoint error: the prompt's tokens do not spell the text, so the span cannot be placed"}
            if offs is None:  # prompt tokens only (vLLM's prompt_logprobs), none of them generated
                offs = [0] * len(toks)
            total, n = 0.0, 0
            for t, v, o in zip(toks, tlp, offs):
                if o >= len(u.text):  # the generated token (echo returns prompt + completion)
                    break
                if v is None:
                    continue
                if span is not None and not (o + len(t) > span[0] and o < span[1]):
                    continue
                total -= float(v)
                n += 1
            if n == 0:
                return {**base, "n_tokens": 0, "error": "no token to score" + (f" in span {u.span!r}" if span else "")}
            mean = total / n
            return {**base, "nll_mean": mean, "perplexity": math.exp(mean), "sum_logprob": -total, "n_tokens": n, "error": None}

        yield from self._map(units, batch_size, one)


def _answer(ask: Any, fail: dict, unexpected: str) -> tuple[Any, dict | None]:
    """``(ask(), None)``, or ``(None, the row fail with its error)`` when the endpoint failed (after its retries) or
    answered in a shape ``ask`` cannot read (``unexpected``, formatted with the exception's repr)."""
    try:
        return ask(), None
    except EndpointError as exc:
        return None, {**fail, "error": f"endpoint error: {exc}"}
    except BadResponse as exc:
        return None, {**fail, "error": exc.row_error()}
    except BiaskitError:
        raise
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        return None, {**fail, "error": unexpected.format(exc)}


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _cumulative_offsets(toks: list[str]) -> list[int]:
    offs, pos = [], 0
    for t in toks:
        offs.append(pos)
        pos += len(t)
    return offs


def prompt_token_logprobs(choice: dict, prompt: str, endpoint: str) -> tuple[list[str], list, list[int] | None] | str:
    """The prompt's tokens, their log-probabilities (None: not scored) and character offsets from a completions
    choice, read from the first of:

    1. vLLM's ``prompt_logprobs``: one entry per prompt token (the first None), each a dict token id ->
       ``{"logprob", "rank", "decoded_token"}`` whose first entry is the prompt's own token (vLLM puts it before
       the top-k); with ``prompt_token_ids`` the entry of that id. Offsets when the tokens spell the prompt.
    2. OpenAI's legacy ``echo=true`` + ``logprobs``: ``tokens``, ``token_logprobs`` (first None) and
       ``text_offset`` of the prompt followed by the completion, when the returned text does start with the prompt.

    A server that answers neither (llama.cpp's server ignores ``echo`` and gives log-probs of generated tokens
    only) is error E300: no number can be made from it. A malformed answer is a string (that row's error)."""
    plp = choice.get("prompt_logprobs")
    if plp is not None:
        return _vllm_prompt_logprobs(plp, choice.get("prompt_token_ids"), prompt)
    lp = choice.get("logprobs")
    text = choice.get("text")
    legacy = isinstance(lp, dict) and isinstance(lp.get("tokens"), list) and isinstance(lp.get("token_logprobs"), list)
    if not (legacy and isinstance(text, str) and text.startswith(prompt)):
        raise BiaskitError(
            "E300",
            "the endpoint returns no log-probabilities for the prompt's tokens (it ignored echo=true"
            + (", as llama.cpp's server does" if isinstance(lp, dict) and "content" in lp else "")
            + "), so likelihood cannot be computed",
            value=endpoint,
            fix="serve the model with vLLM (echo+logprobs or prompt_logprobs) or another server that echoes prompt "
            "log-probs, or run likelihood with --backend hf on the same weights (docs/scale.md)",
        )
    assert isinstance(lp, dict)  # legacy, checked above
    toks, tlp, offs = lp["tokens"], lp["token_logprobs"], lp.get("text_offset")
    if not (
        len(toks) == len(tlp)
        and all(isinstance(t, str) for t in toks)
        and all(v is None or _is_number(v) for v in tlp)
        and (offs is None or (isinstance(offs, list) and len(offs) == len(toks) and all(isinstance(o, int) for o in offs)))
    ):
        return "malformed logprobs (tokens, token_logprobs and text_offset must be lists of strings, numbers and integers of one length)"
    return toks, tlp, offs if offs is not None else _cumulative_offsets(toks)


def _vllm_prompt_logprobs(plp: Any, ids: Any, prompt: str) -> tuple[list[str], list, list[int] | None] | str:
    """Tokens, log-probs and offsets from vLLM's ``prompt_logprobs`` (see :func:`prompt_token_logprobs`)."""
    bad = "malformed prompt_logprobs (a list of null or token id -> {logprob, decoded_token} objects, one per prompt token)"
    if not isinstance(plp, list) or (ids is not None and (not isinstance(ids, list) or len(ids) != len(plp))):
        return bad
    toks: list[str] = []
    tlp: list = []
    for k, pos in enumerate(plp):
        if pos is None:
            toks.append("")  # the first token: context only, its text is not given
            tlp.append(None)
            continue
        if not isinstance(pos, dict) or not pos:
            return bad
        entry = pos.get(str(ids[k])) if ids is not None else next(iter(pos.values()))
        if not isinstance(entry, dict) or not _is_number(entry.get("logprob")) or not isinstance(entry.get("decoded_token", ""), str):
            return bad
        toks.append(entry.get("decoded_token") or "")
        tlp.append(entry["logprob"])
    # the first token's text is what the prompt holds before the second token's: offsets from the end
    rest = "".join(toks[1:])
    if plp and plp[0] is None and prompt.endswith(rest):
        toks[0] = prompt[: len(prompt) - len(rest)]
    offs = _cumulative_offsets(toks) if "".join(toks) == prompt else None
    return toks, tlp, offs


def _choice(resp: dict, n: int) -> dict:
    """The first choice of a completions response, checking it has the ``n`` choices asked for."""
    choices = resp.get("choices")
    if not isinstance(choices, list):
        raise EndpointError(f"the response has no choices list (keys: {', '.join(map(str, list(resp)[:8]))})", retryable=False)
    if len(choices) < n:
        raise EndpointError(f"the response has {len(choices)} choice(s); {n} were asked for", retryable=False)
    if not isinstance(choices[0], dict):
        raise EndpointError(f"the response's choice is a {type(choices[0]).__name__}, not an object", retryable=False)
    return choices[0]


def _checked_choice(resp: dict) -> dict:
    """The first choice of a completions reply that has one and keeps the schema of :mod:`.responses` (finite
    log-probabilities <= 0, integer offsets and counts; :class:`~.responses.BadResponse` otherwise)."""
    choice = _choice(resp, 1)
    completion_reply(resp)
    return choice


def _positive_seconds(name: str, value: Any) -> float:
    """``value`` as a positive, finite number of seconds (E062 otherwise: -1, 0, nan and inf used to reach urllib3)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if not (math.isfinite(v) and v > 0):
        raise BiaskitError("E062", f"--{name} must be a positive, finite number of seconds", value=value, fix=f"e.g. --{name} 60")
    return v


def _not_json(r: Any) -> tuple[str, None] | None:
    """A 2xx reply whose UTF-8 body is not JSON is retried (a proxy's error page, a body cut by a restart)."""
    if not 200 <= r.status_code < 300:
        return None
    try:
        decode_reply(r.content, "reply")
    except BadResponse as exc:
        # not JSON (E381) is retried; not UTF-8, too deep (E380) or too large (E387) is that row's error at once
        return (f"bad response: {exc.why}", None) if exc.why.startswith("[E381]") else None
    return None
