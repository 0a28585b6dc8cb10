"""Keeping credentials out of output.

Tokens (Hugging Face, Label Studio, OpenAI-compatible endpoints) come from the environment or the
libraries' own login. :func:`scrub` removes credential-like keys from dicts and replaces any known secret
value by ``***`` in strings; :class:`RedactingFilter` does the same for log records.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

SECRET_ENV_VARS = (
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "HUGGINGFACE_TOKEN",
    "LABEL_STUDIO_API_KEY",
    "LABEL_STUDIO_TOKEN",
    "LABEL_STUDIO_USER_TOKEN",
    "OPENAI_API_KEY",
    "BIASKIT_ENDPOINT_API_KEY",
    "LABEL_STUDIO_PASSWORD",
)
# credential-like key names: the whole name or its last part (hf_token, X-Api-Key, client_secret), not any
# name containing one (max_new_tokens, tokenizer, author are settings and must stay in manifests)
_SECRET_KEY = re.compile(
    r"(?:^|[_\-. ])(?:token|secret|password|passwd|pass|api[_\-]?key|apikey|access[_\-]?key|"
    r"secret[_\-]?key|private[_\-]?key|authorization|auth|credentials?|cookie)$",
    re.I,
)
_SECRET_KEY_CAMEL = re.compile(
    r"(?<=[a-z0-9])(?:Token|Secret|Password|Passwd|Api[Kk]ey|APIKey|AccessKey|SecretKey|PrivateKey|"
    r"Auth|Authorization|Credentials?|Cookie)$"
)
_extra_secrets: set[str] = set()


def register_secret(value: str | None) -> None:
    """Remember a secret value (e.g. a token read from a login file) so that it is redacted everywhere."""
    if value and len(value) >= 6:
        _extra_secrets.add(value)


def known_secrets() -> list[str]:
    vals = {os.environ.get(k, "") for k in SECRET_ENV_VARS} | _extra_secrets
    return sorted((v for v in vals if v and len(v) >= 6), key=len, reverse=True)


#: THE list of secret-bearing setting / header / query-parameter names, used by the URL cleaner
#: (:func:`public_url`), by :func:`is_secret_name` and by the text redaction (:func:`redact`), so that what is
#: cleaned in a URL is cleaned in any text that quotes it. Two kinds:
#: - SECRET_NAME_SUFFIXES: a credential as the whole name or its last ``_``/``-`` part (``api_key``,
#:   ``hf_token``, ``x-api-key``, ``client_secret``); redacted wherever ``NAME=value`` / ``"NAME": "value"`` occurs.
#: - SECRET_QUERY_NAMES: short generic names that are credentials only as a whole query-parameter name
#:   (``?key=``, ``&code=``); in free text they are redacted after ``?``, ``&`` or ``;`` (a URL query), so that
#:   prose such as ``exit code=1`` stays readable.
SECRET_NAME_SUFFIXES = (
    "api_key",
    "api-key",
    "apikey",
    "token",
    "secret",
    "password",
    "passwd",
    "sig",
    "signature",
    "access_key",
    "access-key",
    "secret_key",
    "secret-key",
    "private_key",
    "private-key",
    "credential",
    "credentials",
    "authorization",
)
SECRET_QUERY_NAMES = ("key", "code", "pass", "auth", "pwd", "session", "sessionid", "jwt")

_SUFFIX_ALT = "|".join(n.replace("_", r"[_\-]?") for n in sorted({n.replace("-", "_") for n in SECRET_NAME_SUFFIXES}, key=len, reverse=True))
_QUERY_ALT = "|".join(re.escape(n) for n in sorted(SECRET_QUERY_NAMES, key=len, reverse=True))

# credential shapes redacted whatever their value (a server may echo a key biaskit never saw, e.g. another
# user's, or one read from a file): (pattern, replacement)
_PATTERNS: tuple[tuple[re.Pattern, Any], ...] = (  # (pattern, replacement string or function)
    # URL user info: scheme://user:password@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^/\s:@]+):[^/\s@]+@"), r"\1:***@"),
    # Authorization / Proxy-Authorization header values (with or without a scheme word)
    (
        re.compile(r"(?i)\b((?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?)(?:(bearer|basic|token|digest)\s+)?[^\s\"',;&]+"),
        lambda m: m.group(1) + (m.group(2) + " " if m.group(2) else "") + "***",
    ),
    # a bare bearer credential: "Bearer sk-..." (Basic credentials are caught in an Authorization context only:
    # "basic" is too common a word)
    # (the credential must contain a digit or one of - _ . so that prose such as "Bearer certificates" stays)
    (re.compile(r"\b([Bb]earer|BEARER)\s+(?!\*\*\*)(?=[A-Za-z~+/]*[0-9\-_.])[A-Za-z0-9\-._~+/]{6,}=*"), r"\1 ***"),
    # NAME=value in URLs, forms and messages for every name of SECRET_NAME_SUFFIXES: api_key=..., token=...,
    # access_token=..., password=...; a bare true/false/yes/no/on/off is a switch, not a secret
    # (LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN=true in a hint stays readable)
    (
        re.compile(
            r"(?i)(?<![A-Za-z0-9])((?:[A-Za-z0-9]+[_\-])*(?:" + _SUFFIX_ALT + r")=)(?!\*\*\*)"
            r"(?!(?:true|false|yes|no|on|off)(?:[\s\"'&,;<>)\]}]|\.(?:\s|$)|$))[^\s\"'&,;<>)\]}]+"
        ),
        r"\1***",
    ),
    # the generic query names of SECRET_QUERY_NAMES in a query: ?key=..., &code=...
    (re.compile(r"(?i)([?&;](?:" + _QUERY_ALT + r")=)(?!\*\*\*)[^\s\"'&,;<>)\]}#]+"), r"\1***"),
    # the same names as JSON members: "api_key": "..."
    (re.compile(r"(?i)(\"(?:[A-Za-z0-9]+[_\-])*(?:" + _SUFFIX_ALT + r")\"\s*:\s*\")(?!\*\*\*)[^\"]+"), r"\1***"),
    # well-known key formats: OpenAI-style sk-..., Hugging Face hf_...
    (re.compile(r"\bsk-(?!\*)[A-Za-z0-9_\-]{16,}"), "sk-***"),
    (re.compile(r"\bhf_(?!\*)[A-Za-z0-9]{20,}"), "hf_***"),
)

#: a text that holds this many leading characters of a known secret (a key cut by a length limit, or by a
#: server that echoes only part of it) has that part masked too
MIN_SECRET_PREFIX = 8


def redact_known(text: str, secrets: list[str] | None = None) -> str:
    """``text`` with every known secret value, and every run of :data:`MIN_SECRET_PREFIX` or more leading
    characters of one, replaced by ``***`` (no credential shapes: safe for data columns such as continuations).

    Every secret is removed in full first (longest first), and only then are prefixes masked: a prefix pass of
    one secret must not cut the head off another secret that shares it (the rest would then be left in clear).
    A masked prefix runs as far as the longest secret that matches there.
    """
    if not isinstance(text, str) or not text:
        return text
    secrets = known_secrets() if secrets is None else sorted(set(secrets), key=len, reverse=True)
    for s in secrets:
        if s in text:
            text = text.replace(s, "***")
    by_head: dict[str, list[str]] = {}
    for s in secrets:
        if len(s) >= MIN_SECRET_PREFIX:
            by_head.setdefault(s[:MIN_SECRET_PREFIX], []).append(s)
    for head, group in by_head.items():
        start = text.find(head)
        while start != -1:
            n = max(_common_run(text, start, s) for s in group)
            text = text[:start] + "***" + text[start + n :]
            start = text.find(head, start + 3)
    return text


def _common_run(text: str, start: int, secret: str) -> int:
    """How many leading characters of ``secret`` ``text`` holds from ``start``."""
    n = 0
    while n < len(secret) and start + n < len(text) and text[start + n] == secret[n]:
        n += 1
    return n


def redact(text: str) -> str:
    """``text`` with every known secret value and every credential-shaped substring replaced by ``***``.

    Known values: the environment variables in :data:`SECRET_ENV_VARS` and :func:`register_secret` (e.g.
    the key named by ``--api-key-env``), and any run of 8+ leading characters of one (a key cut short).
    Shapes: ``Authorization: ...``, ``Bearer ...``, ``NAME=...`` and ``"NAME": "..."`` for the names of
    :data:`SECRET_NAME_SUFFIXES`, ``?key=...`` style query values for :data:`SECRET_QUERY_NAMES`,
    ``user:password@`` in URLs, ``sk-...``/``hf_...`` keys.
    """
    if not isinstance(text, str) or not text:
        return text
    text = redact_known(text)
    for pat, rep in _PATTERNS:
        text = pat.sub(rep, text)
    return text


_URL_USERINFO = _PATTERNS[0][0]
_URL_QUERY_SECRET = re.compile(r"(?i)([?&;](?:[A-Za-z0-9]+[_\-])*(?:" + _SUFFIX_ALT + "|" + _QUERY_ALT + r")=)(?!\*\*\*)[^\s\"'&,;<>)\]}#]+")


def redact_urls(text: str) -> str:
    """``text`` with the credentials of every URL in it removed: ``user:password@`` and the values of
    secret-named query parameters (``?token=``, ``&api_key=``, ``&sig=``, ``?key=``). Safe for data values: only
    URL shapes are touched (``token=3`` in prose stays)."""
    if not isinstance(text, str) or not text:
        return text
    if "@" in text and "://" in text:
        text = _URL_USERINFO.sub(r"\1:***@", text)
    if "=" in text and any(c in text for c in "?&;"):
        text = _URL_QUERY_SECRET.sub(r"\1***", text)
    return text


def redact_data(text: str, secrets: list[str] | None = None) -> str:
    """The redaction of every byte biaskit writes or prints (data values included): every known secret in full,
    then its prefixes (:func:`redact_known`), then URL credentials (:func:`redact_urls`)."""
    return redact_urls(redact_known(text, secrets))


def cut(text: str, limit: int) -> str:
    """Redact ``text`` first, then cut it to ``limit`` characters (never the other way round: a secret
    straddling the cut would survive as a prefix the redaction no longer recognises)."""
    return redact(text)[:limit]


_SUFFIX_NAME = re.compile(r"(?i)^(?:[A-Za-z0-9]+[_\-. ])*(?:" + _SUFFIX_ALT + r")$")


def is_secret_name(name: str) -> bool:
    """Whether a setting / header / query-parameter name holds a credential (api_key, X-Api-Key, hfToken, key)."""
    return bool(_SECRET_KEY.search(name) or _SECRET_KEY_CAMEL.search(name) or _SUFFIX_NAME.match(name) or name.lower() in SECRET_QUERY_NAMES)


def public_url(url: str, *, register: bool = True) -> str:
    """``url`` without user info and with credential-like query values replaced by ``***``.

    With ``register`` the removed password and query values are remembered as secrets (:func:`register_secret`),
    so they are redacted wherever else they turn up (an error body that echoes them).
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact(url)
    if register and parts.password:
        register_secret(unquote(parts.password))
        register_secret(parts.password)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host + (f":{port}" if port else "")
    q = parse_qsl(parts.query, keep_blank_values=True)
    safe = []
    for k, v in q:
        if is_secret_name(k):
            if register:
                register_secret(v)
            v = "***"
        safe.append((k, v))
    query = urlencode(safe, safe="*") if safe else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def scrub(obj: Any) -> Any:
    """A copy of ``obj`` without credential-like keys and with secret values redacted."""
    if isinstance(obj, dict):  # keys too: a group or annotator name can hold a secret (strata, per-group figures)
        return {
            (redact(k) if isinstance(k, str) else k): scrub(v)
            for k, v in obj.items()
            if not (isinstance(k, str) and (_SECRET_KEY.search(k) or _SECRET_KEY_CAMEL.search(k)))
        }
    if isinstance(obj, (list, tuple)):
        return [scrub(v) for v in obj]
    if isinstance(obj, str):
        return redact(obj)
    return obj


class RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        try:
            msg = record.getMessage()
        except Exception:
            return True
        red = redact(msg)
        if red != msg:
            record.msg, record.args = red, None
        return True
