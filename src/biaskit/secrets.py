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


def redact(text: str) -> str:
    for s in known_secrets():
        if s in text:
            text = text.replace(s, "***")
    return text


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
