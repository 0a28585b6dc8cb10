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

SECRET_ENV_VARS = (
    "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HUGGINGFACE_TOKEN", "LABEL_STUDIO_API_KEY", "LABEL_STUDIO_TOKEN",
    "LABEL_STUDIO_USER_TOKEN", "OPENAI_API_KEY", "BIASKIT_ENDPOINT_API_KEY", "LABEL_STUDIO_PASSWORD",
)
# credential-like key names: the whole name or its last part (hf_token, X-Api-Key, client_secret), not any
# name containing one (max_new_tokens, tokenizer, author are settings and must stay in manifests)
_SECRET_KEY = re.compile(r"(?:^|[_\-. ])(?:token|secret|password|passwd|pass|api[_\-]?key|apikey|access[_\-]?key|"
                         r"secret[_\-]?key|private[_\-]?key|authorization|auth|credentials?|cookie)$", re.I)
_SECRET_KEY_CAMEL = re.compile(r"(?<=[a-z0-9])(?:Token|Secret|Password|Passwd|Api[Kk]ey|APIKey|AccessKey|SecretKey|PrivateKey|"
                               r"Auth|Authorization|Credentials?|Cookie)$")
_extra_secrets: set[str] = set()


def register_secret(value: str | None) -> None:
    """Remember a secret value (e.g. a token read from a login file) so that it is redacted everywhere."""
    if value and len(value) >= 6:
        _extra_secrets.add(value)


def known_secrets() -> list[str]:
    vals = {os.environ.get(k, "") for k in SECRET_ENV_VARS} | _extra_secrets
    return sorted((v for v in vals if v and len(v) >= 6), key=len, reverse=True)


# credential shapes redacted whatever their value (a server may echo a key biaskit never saw, e.g. another
# user's, or one read from a file): (pattern, replacement)
_PATTERNS: tuple[tuple[re.Pattern, str], ...] = (
    # URL user info: scheme://user:password@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^/\s:@]+):[^/\s@]+@"), r"\1:***@"),
    # Authorization / Proxy-Authorization header values (with or without a scheme word)
    (re.compile(r"(?i)\b((?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?)(?:(bearer|basic|token|digest)\s+)?[^\s\"',;&]+"),
     lambda m: m.group(1) + (m.group(2) + " " if m.group(2) else "") + "***"),
    # a bare bearer credential: "Bearer sk-..." (Basic credentials are caught in an Authorization context only:
    # "basic" is too common a word)
    # (the credential must contain a digit or one of - _ . so that prose such as "Bearer certificates" stays)
    (re.compile(r"\b([Bb]earer|BEARER)\s+(?!\*\*\*)(?=[A-Za-z~+/]*[0-9\-_.])[A-Za-z0-9\-._~+/]{6,}=*"), r"\1 ***"),
    # key=value in URLs, forms and messages: api_key=..., token=..., access_token=..., password=...
    (re.compile(r"(?i)(?<![A-Za-z0-9])((?:[A-Za-z0-9]+[_\-])*(?:api[_\-]?key|apikey|token|secret|password|passwd|sig|signature)=)(?!\*\*\*)[^\s\"'&,;<>)\]}]+"),
     r"\1***"),
    # the same keys as JSON members: "api_key": "..."
    (re.compile(r"(?i)(\"(?:[A-Za-z0-9]+[_\-])*(?:api[_\-]?key|apikey|token|secret|password|passwd)\"\s*:\s*\")(?!\*\*\*)[^\"]+"), r"\1***"),
    # well-known key formats: OpenAI-style sk-..., Hugging Face hf_...
    (re.compile(r"\bsk-(?!\*)[A-Za-z0-9_\-]{16,}"), "sk-***"),
    (re.compile(r"\bhf_(?!\*)[A-Za-z0-9]{20,}"), "hf_***"),
)


def redact(text: str) -> str:
    """``text`` with every known secret value and every credential-shaped substring replaced by ``***``.

    Known values: the environment variables in :data:`SECRET_ENV_VARS` and :func:`register_secret` (e.g.
    the key named by ``--api-key-env``). Shapes: ``Authorization: ...``, ``Bearer ...``, ``api_key=...``,
    ``token=...``, ``"api_key": "..."``, ``user:password@`` in URLs, ``sk-...``/``hf_...`` keys.
    """
    if not isinstance(text, str) or not text:
        return text
    for s in known_secrets():
        if s in text:
            text = text.replace(s, "***")
    for pat, rep in _PATTERNS:
        text = pat.sub(rep, text)
    return text


#: query parameters whose value is a credential (besides names like api_key / token, see is_secret_name)
_SECRET_QUERY = {"key", "sig", "signature", "code", "auth", "apikey", "api-key", "access_token", "password", "pass"}


def is_secret_name(name: str) -> bool:
    """Whether a setting / header / query-parameter name holds a credential (api_key, X-Api-Key, hfToken)."""
    return bool(_SECRET_KEY.search(name) or _SECRET_KEY_CAMEL.search(name) or name.lower() in _SECRET_QUERY)


def public_url(url: str, *, register: bool = True) -> str:
    """``url`` without user info and with credential-like query values replaced by ``***``.

    With ``register`` the removed password and query values are remembered as secrets (:func:`register_secret`),
    so they are redacted wherever else they turn up (an error body that echoes them).
    """
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return redact(url)
    if register and parts.password:
        from urllib.parse import unquote

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
    if isinstance(obj, dict):
        return {k: scrub(v) for k, v in obj.items() if not (isinstance(k, str) and (_SECRET_KEY.search(k) or _SECRET_KEY_CAMEL.search(k)))}
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
