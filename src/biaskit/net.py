"""One HTTP layer: retry with exponential backoff, ``Retry-After``, a request-rate limit, the redirect and
credential rules of docs/security.md, and redaction of secrets in every error text.

Two pieces, used by every client biaskit has (MediaWiki, OpenAI-compatible endpoints, the Hugging Face Hub,
Label Studio):

* :class:`Backoff`: the retry policy. ``wait(attempt, retry_after)`` is ``Retry-After`` when the server sent
  one (seconds or an HTTP-date, parsed by urllib3's ``Retry.parse_retry_after``), else
  ``backoff * 2**attempt``; both capped at ``max_backoff``. :meth:`Backoff.call` retries any callable, for the
  clients that go through a library doing its own HTTP (huggingface_hub, label-studio-sdk): the library sends,
  this policy decides what is retried and how long to wait.
* :class:`HttpClient`: requests' ``Session`` (one per thread) with that policy around each request: retries
  on connection errors, timeouts, a cut-short body and the statuses in ``retry_status`` (429/5xx by default);
  ``max_rps`` spaces requests out. Redirects are never followed silently: a redirect raises E142 naming the
  target, unless ``allow_redirects``; then the request is sent again (same method and body, at most
  ``max_redirects`` hops, http(s) only) and ``Authorization``/``Cookie`` go along only to the same origin
  (scheme, host and port) as the first URL. ``retry_response`` lets a client retry a reply that is an error
  only by its content (MediaWiki's ``maxlag``, which arrives as HTTP 200).

After the last try :class:`HttpError` (E242, a :class:`~biaskit.errors.BiaskitError`) says why, with the
status, the reply and the number of tries; its text went through :func:`biaskit.secrets.redact`.
Any other status is returned to the caller, which knows what it means.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

from biaskit.errors import BiaskitError, require
from biaskit.log import get_logger
from biaskit.secrets import public_url, redact

log = get_logger("net")

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUS = frozenset({301, 302, 303, 307, 308})
ERROR_BODY_READ = 1 << 16  # characters of an error reply's body read into a message (redacted whole, then cut)
REASON_MAX = 340  # characters of an error text kept: redact first, cut after (a key straddling the cut never survives)
#: headers that carry credentials: never sent to another origin
CREDENTIAL_HEADERS = ("authorization", "cookie", "proxy-authorization")


def retry_after_seconds(value: Any) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (``"2"``, ``"1.5"`` or an HTTP-date); None if unusable."""
    if value is None or value == "":
        return None
    from urllib3.exceptions import InvalidHeader
    from urllib3.util.retry import Retry

    text = str(value).strip()
    try:
        return max(0.0, float(text))  # urllib3 takes whole seconds only; servers send "1.5" too
    except ValueError:
        pass
    try:
        return max(0.0, float(Retry().parse_retry_after(text)))
    except (InvalidHeader, ValueError, TypeError, OverflowError):
        return None


def _short_read(exc: BaseException) -> str:
    """``N bytes read, M more expected`` from urllib3's IncompleteRead inside requests' error, else its text."""
    todo: list[Any] = [exc]
    while todo:
        e = todo.pop()
        partial, expected = getattr(e, "partial", None), getattr(e, "expected", None)
        if isinstance(partial, int) and isinstance(expected, int):
            return f"{partial} bytes read, {expected} more expected"
        todo.extend(a for a in getattr(e, "args", ()) if isinstance(a, BaseException))
    return str(exc)


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of ``url``, the port filled in from the scheme."""
    p = urlsplit(url)
    scheme = (p.scheme or "").lower()
    try:
        port = p.port
    except ValueError:
        port = None
    return scheme, (p.hostname or "").lower(), port or {"http": 80, "https": 443}.get(scheme)


class HttpError(BiaskitError):
    """A request that failed for good: retries used up (``retryable``) or a failure retrying cannot fix."""

    def __init__(
        self,
        reason: str,
        *,
        url: str,
        status: int | None = None,
        attempts: int = 1,
        retryable: bool = True,
        response: Any = None,
        fix: str | None = None,
    ) -> None:
        self.reason = redact(reason)[:REASON_MAX]
        self.status, self.attempts, self.retryable, self.response = status, attempts, retryable, response
        super().__init__(
            "E242",
            f"{self.reason} (gave up after {attempts} tries)" if retryable else self.reason,
            value=public_url(url, register=False),
            fix=fix or "check the URL and the network, then rerun (finished work is kept)",
        )

    def __reduce__(self):
        return (BiaskitError, (self.code, self.what, self.value, self.options, self.fix))


@dataclass
class Backoff:
    """Retry policy: ``retries`` more tries after the first, waits as in the module docs."""

    retries: int = 4
    backoff: float = 1.0
    max_backoff: float = 60.0
    sleep: Callable[[float], None] | None = None  # default: time.sleep, looked up at each call

    def wait(self, attempt: int, retry_after: Any = None) -> float:
        after = retry_after_seconds(retry_after)
        return min(self.max_backoff, after if after is not None else self.backoff * (2**attempt))

    def pause(self, attempt: int, retry_after: Any = None, *, why: str = "", where: str = "") -> float:
        """Wait before try ``attempt + 2`` (logged); returns the wait."""
        wait = self.wait(attempt, retry_after)
        log.info(
            "%s from %s; retry %d/%d in %.2fs",
            redact(why)[:REASON_MAX],
            public_url(where, register=False) if where else "?",
            attempt + 1,
            self.retries,
            wait,
        )
        (time.sleep if self.sleep is None else self.sleep)(wait)
        return wait

    def call(
        self,
        fn: Callable[[], Any],
        *,
        retryable: Callable[[BaseException], bool],
        what: str = "",
        retry_after: Callable[[BaseException], Any] = lambda exc: None,
        waits: list[float] | None = None,
    ) -> Any:
        """``fn()``, retried while ``retryable(exc)`` and tries are left; the last exception propagates.

        A :class:`~biaskit.errors.BiaskitError` is never retried. ``waits`` collects the waits.
        """
        attempt = 0
        while True:
            try:
                return fn()
            except BiaskitError:
                raise
            except Exception as exc:
                if attempt >= self.retries or not retryable(exc):
                    raise
                w = self.pause(attempt, retry_after(exc), why=f"{type(exc).__name__} ({what})" if what else type(exc).__name__)
                if waits is not None:
                    waits.append(w)
                attempt += 1


class HttpClient:
    """requests ``Session`` + :class:`Backoff` + rate limit + redirect/credential rules (module docs)."""

    def __init__(
        self,
        *,
        policy: Backoff | None = None,
        timeout: float = 30.0,
        max_rps: float | None = None,
        allow_redirects: bool = False,
        max_redirects: int = 5,
        retry_status: frozenset[int] = RETRY_STATUS,
        headers: dict[str, str] | None = None,
        session: Any = None,
        stats: dict[str, int] | None = None,
        on_retry: Callable[[str], None] | None = None,
        redirect_fix: str | None = None,
    ) -> None:
        self._requests = require("requests", "scrape", "biaskit's HTTP client")
        self.policy = policy or Backoff()
        self.timeout = float(timeout)
        self.min_interval = 1.0 / max_rps if max_rps else 0.0
        self.allow_redirects, self.max_redirects = bool(allow_redirects), int(max_redirects)
        self.retry_status = frozenset(retry_status)
        self.headers = dict(headers or {})
        self._shared = session
        self._local = threading.local()
        self._lock = threading.Lock()
        self._last = 0.0
        self.stats = stats if stats is not None else {}
        self.stats.setdefault("http_requests", 0)
        self.stats.setdefault("retries", 0)
        self.on_retry = on_retry
        self.redirect_fix = redirect_fix or (
            "use the target URL if you trust it, or allow redirects (--allow-redirects; credentials are never sent to another scheme, host or port)"
        )

    @property
    def session(self) -> Any:
        if self._shared is not None:
            return self._shared
        s = getattr(self._local, "session", None)
        if s is None:
            s = self._local.session = self._requests.Session()
        return s

    def _throttle(self) -> None:
        if not self.min_interval:
            return
        with self._lock:
            wait = self._last + self.min_interval - time.monotonic()
            if wait > 0:
                (time.sleep if self.policy.sleep is None else self.policy.sleep)(wait)
            self._last = time.monotonic()

    def _send(self, method: str, url: str, headers: dict[str, str], **kw: Any) -> Any:
        """One request and its allowed redirects; the final reply (not a redirect)."""
        first = origin(url)
        for _ in range(self.max_redirects + 1):
            with self._lock:
                self.stats["http_requests"] += 1
            r = self.session.request(method, url, headers=headers, timeout=self.timeout, allow_redirects=False, **kw)
            if r.status_code not in REDIRECT_STATUS:
                return r
            loc = r.headers.get("Location")
            r.close()
            if not loc:
                raise HttpError(f"HTTP {r.status_code} redirect without a Location header", url=url, status=r.status_code, retryable=False)
            target = urljoin(url, loc)
            if not self.allow_redirects:
                raise BiaskitError(
                    "E142",
                    f"the endpoint redirected the request (HTTP {r.status_code}) to {public_url(target, register=False)}",
                    value=public_url(url, register=False),
                    fix=self.redirect_fix,
                )
            if origin(target)[0] not in ("http", "https"):
                raise HttpError(
                    f"HTTP {r.status_code} redirect to a non-http(s) URL {public_url(target, register=False)}",
                    url=url,
                    status=r.status_code,
                    retryable=False,
                )
            if origin(target) != first:
                headers = {k: v for k, v in headers.items() if k.lower() not in CREDENTIAL_HEADERS}
                kw.pop("auth", None)
            log.info("following HTTP %d redirect to %s", r.status_code, public_url(target, register=False))
            url = target
            kw.pop("params", None)  # the Location carries the query
        raise HttpError(f"more than {self.max_redirects} redirects", url=url, retryable=False)

    def request(
        self,
        method: str,
        url: str,
        *,
        what: str = "",
        headers: dict[str, str] | None = None,
        retry_response: Callable[[Any], tuple[str, Any] | None] | None = None,
        **kw: Any,
    ) -> Any:
        """Send with retries (module docs). ``retry_response(reply) -> (why, retry_after) | None`` marks a reply
        to retry; when tries run out for such a reply, or for a retryable status, :class:`HttpError` carries it.
        Any other reply is returned, whatever its status. ``what`` names the request in messages (default: the URL).
        """
        req = self._requests
        hdrs = {**self.headers, **(headers or {})}
        where = what or public_url(url, register=False)
        attempt = 0
        while True:
            self._throttle()
            resp, retry_after = None, None
            try:
                r = self._send(method, url, hdrs, **kw)
            except req.Timeout as exc:
                why = f"timed out after {self.timeout:g} s ({exc})"
            except req.exceptions.ChunkedEncodingError as exc:
                why = f"bad response: the body was cut short ({_short_read(exc)})"
            except req.ConnectionError as exc:
                why = f"connection failed: {exc}"
            except req.RequestException as exc:  # a malformed reply (bad headers, bad encoding): retried too
                why = f"bad response: {type(exc).__name__}: {exc}"
            else:
                mark = retry_response(r) if retry_response is not None else None
                if r.status_code in self.retry_status:
                    detail = (r.text or "")[:ERROR_BODY_READ].strip()
                    why, retry_after, resp = f"HTTP {r.status_code} from {where}" + (f": {detail}" if detail else ""), r.headers.get("Retry-After"), r
                elif mark is not None:
                    (why, retry_after), resp = mark, r
                else:
                    return r
            if attempt >= self.policy.retries:
                raise HttpError(why, url=url, status=getattr(resp, "status_code", None), attempts=attempt + 1, response=resp)
            with self._lock:
                self.stats["retries"] += 1
            if self.on_retry is not None:
                self.on_retry(why)
            self.policy.pause(attempt, retry_after, why=why, where=url)
            attempt += 1
