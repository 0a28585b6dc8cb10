"""OpenAI-compatible HTTP backend (vLLM, TGI, llama.cpp server, hosted APIs): ``/v1/completions``.

Generation sends one request per (prompt, sample) with ``seed`` = the per-row seed, so a server that honours
seeds (vLLM, llama.cpp) gives the same samples whatever the concurrency. Likelihood uses the legacy
completions options ``echo=true, logprobs=1`` and scores the prompt's own token log-probabilities (the first
token has none: it is context only, like ``add_bos=False`` with the hf backend). ``chat=True`` uses
``/v1/chat/completions`` instead (no likelihoods there).

Requests that time out or get HTTP 429/5xx are retried with exponential backoff (``Retry-After`` is
honoured); after ``max_retries`` the row gets ``error`` set and no text, never a made-up value. Other HTTP
errors (400, 401, 404) are not retried. The API key is read from an environment variable (default
``OPENAI_API_KEY``), never from the command line, and never written to a manifest.
"""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.evaluate.runners.common import GenerationSettings, LikelihoodSettings, Unit, derive_seed, find_span, join_continuation, model_prompt
from biaskit.log import get_logger

log = get_logger("runners.openai")

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class EndpointError(Exception):
    def __init__(self, message: str, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


class OpenAIBackend:
    """Client for an OpenAI-compatible completions endpoint (see module docs)."""

    name = "openai"

    def __init__(self, model: str, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY", timeout: float = 60.0,
                 max_retries: int = 4, backoff: float = 1.0, max_backoff: float = 30.0, concurrency: int | None = None,
                 extra_body: dict | None = None, **_: Any) -> None:
        url = base_url or os.environ.get("OPENAI_BASE_URL")
        if not url:
            raise BiaskitError("E062", "the openai backend needs the endpoint's base URL", value=None,
                               fix="pass --base-url http://127.0.0.1:8000/v1 (vLLM/TGI/llama.cpp server) or set OPENAI_BASE_URL")
        url = url.rstrip("/")
        if not url.endswith("/v1"):
            url = url + "/v1"
        self.base_url = url
        self.model = model
        self.api_key = os.environ.get(api_key_env) or None
        from biaskit.secrets import register_secret

        register_secret(self.api_key)  # a key under any variable name is redacted from logs and errors
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.concurrency = concurrency
        self.extra_body = dict(extra_body or {})
        self.truncated_count = 0
        self.batch_sizes_used: list[int] = []
        self.requests_sent = 0
        self.retries = 0

    revision = None

    def describe(self) -> dict[str, Any]:
        return {"backend": "openai", "base_url": self.base_url, "timeout_s": self.timeout, "max_retries": self.max_retries}

    # ------------------------------------------------------------------ HTTP
    def _post(self, path: str, body: dict) -> dict:
        """POST JSON with retries on timeouts, connection errors and 429/5xx; raise EndpointError at the end."""
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "User-Agent": "biaskit"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.max_retries + 1):
            wait = min(self.max_backoff, self.backoff * (2 ** attempt))
            req = urllib.request.Request(self.base_url + path, data=data, headers=headers, method="POST")
            self.requests_sent += 1
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as r:
                    return json.loads(r.read().decode("utf-8"))
            except urllib.error.HTTPError as exc:
                detail = exc.read()[:300].decode("utf-8", "replace") if exc.fp else ""
                last = f"HTTP {exc.code} from {path}: {detail.strip()}"
                if exc.code not in RETRY_STATUS:
                    raise EndpointError(last, retryable=False) from None
                ra = exc.headers.get("Retry-After") if exc.headers else None
                if ra:
                    try:
                        wait = min(self.max_backoff, max(wait, float(ra)))
                    except ValueError:
                        pass
            except (TimeoutError, socket.timeout) as exc:
                last = f"timed out after {self.timeout:g} s ({exc})"
            except urllib.error.URLError as exc:
                reason = exc.reason
                last = f"timed out after {self.timeout:g} s" if isinstance(reason, (TimeoutError, socket.timeout)) else f"connection failed: {reason}"
            except (ConnectionError, json.JSONDecodeError) as exc:
                last = f"bad response: {exc}"
            if attempt < self.max_retries:
                self.retries += 1
                log.debug("endpoint error (%s); retry %d/%d in %.2f s", last, attempt + 1, self.max_retries, wait)
                time.sleep(wait)
        raise EndpointError(f"{last} (gave up after {self.max_retries + 1} attempts)", retryable=True)

    def _map(self, units: Sequence[Unit], batch_size: int | None, fn) -> Iterator[list[dict]]:
        """Run ``fn`` on units with ``batch_size`` requests in flight; yield results in chunks, in order."""
        n = batch_size or self.concurrency or 8
        with ThreadPoolExecutor(max_workers=n) as pool:
            for start in range(0, len(units), n):
                chunk = list(units[start:start + n])
                self.batch_sizes_used.append(len(chunk))
                yield list(pool.map(fn, chunk))

    # ------------------------------------------------------------------ generate
    def generate(self, units: Sequence[Unit], s: GenerationSettings, batch_size: int | None) -> Iterator[list[dict]]:
        def one(u: Unit) -> dict:
            body: dict[str, Any] = {"model": self.model, "max_tokens": s.max_new_tokens, "n": 1,
                                    "seed": derive_seed(s.seed, u.prompt_id, u.sample_index) & 0x7FFFFFFF}
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
            try:
                if s.chat:
                    body["messages"] = [{"role": "user", "content": u.text}]
                    resp = self._post("/chat/completions", body)
                    text = resp["choices"][0]["message"]["content"]
                else:
                    body["prompt"] = sent
                    resp = self._post("/completions", body)
                    text = resp["choices"][0]["text"]
            except EndpointError as exc:
                return {"_unit": u, "continuation": None, "full_text": None, "truncated": False, "error": f"endpoint error: {exc}"}
            except (KeyError, IndexError, TypeError) as exc:
                return {"_unit": u, "continuation": None, "full_text": None, "truncated": False,
                        "error": f"endpoint error: unexpected response shape ({exc!r})"}
            if text is None:
                return {"_unit": u, "continuation": None, "full_text": None, "truncated": False, "error": "endpoint error: no text in response"}
            cont, full = join_continuation(u.text, sent, stripped, text, s.first_sentence)
            return {"_unit": u, "continuation": cont, "full_text": full, "truncated": False, "error": None}

        yield from self._map(units, batch_size, one)

    # ------------------------------------------------------------------ likelihood
    def bos_policy(self, s: LikelihoodSettings) -> None:
        if s.add_bos:
            raise BiaskitError("E062", "add_bos=True is not available with the openai backend (the server tokenises)",
                               value=True, fix="leave add_bos at auto/False; the first token is context only")
        return None

    def likelihood(self, units: Sequence[Unit], s: LikelihoodSettings, batch_size: int | None) -> Iterator[list[dict]]:
        import math

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
            body = {"model": self.model, "prompt": u.text, "max_tokens": 1, "echo": True, "logprobs": 1, "temperature": 0.0}
            body.update(self.extra_body)
            try:
                resp = self._post("/completions", body)
                lp = resp["choices"][0]["logprobs"]
                toks, tlp, offs = lp["tokens"], lp["token_logprobs"], lp.get("text_offset")
            except EndpointError as exc:
                return {**base, "error": f"endpoint error: {exc}"}
            except (KeyError, IndexError, TypeError) as exc:
                return {**base, "error": f"endpoint did not return prompt logprobs (needs echo+logprobs support): {exc!r}"}
            if offs is None:
                offs = []
                pos = 0
                for t in toks:
                    offs.append(pos)
                    pos += len(t)
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
            return {**base, "nll_mean": mean, "perplexity": math.exp(mean), "n_tokens": n, "error": None}

        yield from self._map(units, batch_size, one)
