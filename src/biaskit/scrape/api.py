"""A MediaWiki Action API client for scraping page text: any ``api.php``, any language edition.

* always ``format=json&formatversion=2`` and ``maxlag`` (default 5 s), a descriptive User-Agent;
* continuation: the ``continue`` object of a reply is merged into the next request until none is left;
* retries with exponential backoff on connection errors, HTTP 429/5xx and the ``maxlag`` error (which
  arrives as HTTP 200 with ``error.code == "maxlag"``: the one special case, passed to the shared HTTP layer
  :mod:`biaskit.net` as ``retry_response``); ``Retry-After`` is honoured;
* a request-rate limit (``max_rps``); redirects (e.g. http -> https) are followed and logged (no credentials
  are sent to a wiki);
* an on-disk cache of every reply, keyed by the endpoint and the request parameters, so a rerun or a
  resumed run sends no request it already made (``client.stats['http_requests']`` counts real ones).

Errors: an unreachable endpoint or a non-JSON reply (an HTML page) raises E031, an API error E030.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biaskit import __version__
from biaskit.errors import BiaskitError, require
from biaskit.io import write_json_atomic
from biaskit.manifest import utcnow
from biaskit.net import Backoff, HttpClient, HttpError

if TYPE_CHECKING:  # pragma: no cover
    from biaskit.scrape.dump import Page
from biaskit.log import get_logger

log = get_logger("scrape.api")

DEFAULT_USER_AGENT = "biaskit/{version} (https://github.com/biaskit/biaskit; bias-dataset builder) python-requests"


def _version() -> str:
    return __version__


class MediaWikiClient:
    """Client for one ``api.php`` endpoint.

    Example::

        client = MediaWikiClient("https://en.wikipedia.org/w/api.php", cache_dir="cache/enwiki")
        for page in client.pages(["Astronomer", "Actor"]):
            print(page.title, page.revision_id, len(page.text))
    """

    def __init__(
        self,
        endpoint: str,
        *,
        cache_dir: str | os.PathLike | None = None,
        user_agent: str | None = None,
        maxlag: int | None = 5,
        max_retries: int = 5,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
        max_rps: float | None = 5.0,
        timeout: float = 30.0,
        session: Any = None,
        sleep=time.sleep,
    ) -> None:
        requests = require("requests", "scrape", "the MediaWiki API client")
        if not isinstance(endpoint, str) or not endpoint.startswith(("http://", "https://")):
            raise BiaskitError(
                "E031",
                "the API endpoint must be an http(s) URL of api.php",
                value=endpoint,
                fix="e.g. https://en.wikipedia.org/w/api.php or https://cs.wikipedia.org/w/api.php",
            )
        self.endpoint = endpoint
        self.cache_dir = Path(cache_dir) if cache_dir else None
        if self.cache_dir:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
        self.maxlag = maxlag
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.timeout = timeout
        self.session = session or requests.Session()
        self.session.headers["User-Agent"] = user_agent or DEFAULT_USER_AGENT.format(version=_version())
        self.stats: dict[str, int] = {"http_requests": 0, "cache_hits": 0, "retries": 0, "maxlag_retries": 0}
        # no credentials are sent, so redirects (http -> https, a moved api.php) are followed, each one logged
        self.http = HttpClient(
            policy=Backoff(max_retries, backoff, max_backoff, sleep),
            timeout=timeout,
            max_rps=max_rps,
            allow_redirects=True,
            session=self.session,
            stats=self.stats,
            on_retry=self._count_retry,
        )
        self.last_retrieved_at: str | None = None

    # ------------------------------------------------------------------ low level

    def _params(self, params: dict[str, Any]) -> dict[str, str]:
        p = {"format": "json", "formatversion": "2"}
        if self.maxlag is not None:
            p["maxlag"] = str(self.maxlag)
        for k, v in params.items():
            if v is None:
                continue
            if isinstance(v, (list, tuple)):
                v = "|".join(str(x) for x in v)
            elif isinstance(v, bool):
                if not v:
                    continue
                v = "1"
            p[k] = str(v)
        return p

    def _cache_file(self, params: dict[str, str]) -> Path | None:
        if not self.cache_dir:
            return None
        key = json.dumps([self.endpoint, sorted((k, v) for k, v in params.items() if k != "maxlag")], ensure_ascii=False)
        h = hashlib.sha256(key.encode("utf-8")).hexdigest()
        return self.cache_dir / h[:2] / f"{h}.json"

    def get(self, params: dict[str, Any]) -> dict:
        """One API request (from the cache when possible), retried as described in the module docs."""
        p = self._params(params)
        cf = self._cache_file(p)
        if cf is not None and cf.is_file():
            try:
                cached = json.loads(cf.read_text(encoding="utf-8"))
                self.stats["cache_hits"] += 1
                self.last_retrieved_at = cached.get("retrieved_at")
                return cached["response"]
            except (ValueError, KeyError):
                cf.unlink(missing_ok=True)  # a damaged cache entry is refetched
        try:
            r = self.http.request("GET", self.endpoint, params=p, retry_response=self._maxlag)
        except HttpError as exc:
            if exc.reason == "maxlag":
                try:
                    info = (exc.response.json().get("error") or {}).get("info", "")
                except (ValueError, AttributeError):
                    info = ""
                raise BiaskitError(
                    "E030",
                    f"the wiki stayed lagged (maxlag) after {exc.attempts} tries: {info}",
                    value=self.endpoint,
                    fix="wait and rerun (finished work is kept)",
                ) from None
            if exc.status is not None:
                raise BiaskitError(
                    "E031",
                    f"MediaWiki endpoint kept answering HTTP {exc.status} after {exc.attempts} tries",
                    value=self.endpoint,
                    fix="wait and rerun (finished work is kept), or lower --max-rps",
                ) from None
            raise BiaskitError(
                "E031",
                f"MediaWiki endpoint unreachable after {exc.attempts} tries: {exc.reason}",
                value=self.endpoint,
                fix="check the URL (it must point to api.php) and the network; rerun to resume",
            ) from None
        if r.status_code != 200:
            raise BiaskitError(
                "E031",
                f"MediaWiki endpoint answered HTTP {r.status_code}",
                value=self.endpoint,
                fix="check that the URL points to api.php (e.g. https://en.wikipedia.org/w/api.php)",
            )
        try:
            data = r.json()
        except ValueError as exc:
            ctype = r.headers.get("Content-Type", "?")
            raise BiaskitError(
                "E031",
                f"the endpoint did not answer JSON (Content-Type {ctype}, starts {r.text[:60]!r})",
                value=self.endpoint,
                fix="point to the wiki's api.php, not an article or index.php URL",
            ) from exc
        if not isinstance(data, dict):
            raise BiaskitError("E031", "the endpoint answered JSON that is not an API reply", value=self.endpoint, fix="point to the wiki's api.php")
        err = data.get("error")
        if isinstance(err, dict):
            raise BiaskitError(
                "E030",
                f"MediaWiki API error {err.get('code')!r}: {err.get('info', '')}",
                value={k: v for k, v in p.items() if k not in ("format", "formatversion")},
                fix="check the parameters (see the wiki's api.php?action=help)",
            )
        for w in (data.get("warnings") or {}).values() if isinstance(data.get("warnings"), dict) else []:
            log.warning("MediaWiki API warning: %s", w)
        self.last_retrieved_at = utcnow()
        if cf is not None:
            cf.parent.mkdir(parents=True, exist_ok=True)
            write_json_atomic(cf, {"params": p, "retrieved_at": self.last_retrieved_at, "response": data})
        return data

    @staticmethod
    def _maxlag(r: Any) -> tuple[str, str | None] | None:
        """MediaWiki's special case: ``maxlag`` is an error reply with HTTP 200 (header and/or JSON body)."""
        if r.status_code != 200:
            return None
        if r.headers.get("MediaWiki-API-Error") == "maxlag":  # the header says it even when the body is not JSON
            return "maxlag", r.headers.get("Retry-After")
        try:
            err = r.json().get("error")
        except (ValueError, AttributeError):
            return None
        if isinstance(err, dict) and err.get("code") == "maxlag":
            return "maxlag", r.headers.get("Retry-After") or str(err.get("lag", "") or "")
        return None

    def _count_retry(self, why: str) -> None:
        if why == "maxlag":
            self.stats["maxlag_retries"] += 1

    def query(self, params: dict[str, Any]) -> Iterator[dict]:
        """``action=query`` with continuation: yields each reply in turn."""
        base = {"action": "query", **params}
        cont: dict[str, Any] = {}
        while True:
            data = self.get({**base, **cont})
            yield data
            nxt = data.get("continue")
            if not nxt:
                return
            cont = dict(nxt)

    # ------------------------------------------------------------------ lists

    def category_members(
        self, category: str, *, namespaces: Iterable[int] = (0,), limit: int | None = None, per_request: int | str = "max"
    ) -> list[str]:
        """Titles of the members of ``category`` (``Category:`` prefix optional), in API order.

        ``per_request`` is the API's page size (``cmlimit``); continuation fetches the rest.
        """
        cat = category if ":" in category else f"Category:{category}"
        out: list[str] = []
        for data in self.query(
            {"list": "categorymembers", "cmtitle": cat, "cmnamespace": list(namespaces), "cmlimit": per_request, "cmtype": "page"}
        ):
            out.extend(m["title"] for m in data.get("query", {}).get("categorymembers", []))
            if limit and len(out) >= limit:
                return out[:limit]
        return out

    def links(self, title: str, *, namespaces: Iterable[int] = (0,), limit: int | None = None, per_request: int | str = "max") -> list[str]:
        """Titles the page links to (``prop=links``), redirects of ``title`` followed. Missing page: E033."""
        out: list[str] = []
        for data in self.query({"prop": "links", "titles": title, "plnamespace": list(namespaces), "pllimit": per_request, "redirects": True}):
            for page in data.get("query", {}).get("pages", []):
                if page.get("missing") or page.get("invalid"):
                    raise BiaskitError(
                        "E033", "seed page not found on the wiki", value=title, fix=f"check the title on {self.endpoint} (spelling, namespace prefix)"
                    )
                out.extend(link["title"] for link in page.get("links", []))
            if limit and len(out) >= limit:
                return out[:limit]
        return out

    def siteinfo(self) -> dict:
        data = self.get({"action": "query", "meta": "siteinfo", "siprop": "general|rightsinfo|namespaces|namespacealiases|magicwords"})
        return data.get("query", {})

    # ------------------------------------------------------------------ page text

    def pages(self, titles: Iterable[str], *, batch: int = 50, missing: list[str] | None = None) -> Iterator[Page]:
        """Latest wikitext of each title (``prop=revisions``, up to ``batch`` titles per request).

        Redirects are followed (the page carries the target's title; ``page.requested`` holds the
        titles asked for). Missing or invalid titles are appended to ``missing`` (and logged), not raised.
        """
        from biaskit.scrape.dump import Page

        titles = list(dict.fromkeys(titles))
        bad = [t for t in titles if not t.strip() or any(ch in t for ch in "|#<>[]{}")]
        if bad:  # characters MediaWiki forbids in titles ("|" would also split the titles parameter)
            for t in bad:
                log.warning("invalid page title skipped: %r", t)
                if missing is not None:
                    missing.append(t)
            titles = [t for t in titles if t not in bad]
        if not 1 <= batch <= 50:
            raise BiaskitError(
                "E005", "batch must be 1..50 titles per request (the API's limit for normal users)", value=batch, fix="use --batch 50 or less"
            )
        for start in range(0, len(titles), batch):
            chunk = titles[start : start + batch]
            got: dict[str, dict] = {}
            alias: dict[str, str] = {}
            for data in self.query({"prop": "revisions", "titles": chunk, "rvprop": "content|ids|timestamp", "rvslots": "main", "redirects": True}):
                q = data.get("query", {})
                for kind in ("normalized", "redirects"):
                    for m in q.get(kind, []):
                        alias[m["from"]] = m["to"]
                for page in q.get("pages", []):
                    t = page.get("title")
                    if page.get("missing") or page.get("invalid"):
                        got.setdefault(t or page.get("title", "?"), {"missing": True})
                        continue
                    revs = page.get("revisions")
                    if not revs:  # the text follows in a continuation reply
                        got.setdefault(t, {"page": page})
                        continue
                    got[t] = {"page": page, "rev": revs[0], "retrieved_at": self.last_retrieved_at}
            wanted_by: dict[str, list[str]] = {}
            for t in chunk:
                target = t
                for _ in range(5):
                    if target in alias:
                        target = alias[target]
                    else:
                        break
                wanted_by.setdefault(target, []).append(t)
            for target, requested in wanted_by.items():
                entry = got.get(target)
                if entry is None or entry.get("missing") or "rev" not in entry:
                    for t in requested:
                        log.warning("page not found on %s: %r", self.endpoint, t)
                        if missing is not None:
                            missing.append(t)
                    continue
                page, rev = entry["page"], entry["rev"]
                slot = (rev.get("slots") or {}).get("main") or {}
                text = slot.get("content", rev.get("content", ""))
                p = Page(
                    title=page["title"],
                    page_id=page.get("pageid"),
                    revision_id=rev.get("revid"),
                    timestamp=rev.get("timestamp"),
                    text=text or "",
                    ns=page.get("ns", 0),
                    wiki=self.endpoint,
                    retrieved_at=entry.get("retrieved_at"),
                    requested=list(requested),
                )
                yield p
