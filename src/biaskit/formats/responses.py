"""The reader of OpenAI-compatible server responses: one pydantic schema per response biaskit uses.

Every reply of ``/v1/chat/completions`` (the judge; ``generate --format chat``), ``/v1/completions``
(``generate``, ``likelihood``) and ``/v1/models`` (the cache's model identity) is parsed here before a value is taken
from it. The body is decoded by :func:`decode_reply`, through the one JSON reader (:func:`biaskit.jsonread.loads_json`:
nested deeper than 200 levels or larger than 64 MiB is a :class:`BadResponse`, never a ``RecursionError``). What the
schemas hold:

* **Log-probabilities** are JSON numbers, finite and ``<= 0`` (a probability is at most 1): ``+inf``, ``NaN``,
  ``+5.0``, ``true``/``false`` and numeric strings are refused.
* **Top tokens** (``top_logprobs``) are distinct: a token listed twice (the same text, and the same ``bytes`` when
  the server gives them: two byte-level tokens of one partial character both read ``"\ufffd"``) is refused, never
  summed.
* **Usage** counts (``prompt_tokens``, ``completion_tokens``, ``total_tokens``) are non-negative integers when
  given (``3.5``, ``"12"``, ``-1`` and ``true`` are refused).
* **Texts** (``message.content``, ``text``) are strings or null.

Unknown fields are ignored (servers add their own). A reply that breaks a schema is :class:`BadResponse`:
that row's ``error`` (``*_error`` of a metric) starts with the code ``E317`` and names the field and the
reason (:meth:`BadResponse.row_error`), never a number made from it. :class:`EndpointError` is a request that
failed (HTTP, connection, a body that is not JSON).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from biaskit.errors import BiaskitError
from biaskit.jsonread import loads_json

#: the code every row error from a response that breaks its schema starts with
BAD_RESPONSE = "E317"


class EndpointError(Exception):
    """A request to the server failed (``retryable``: the HTTP layer would retry it)."""

    def __init__(self, message: str, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


class BadResponse(Exception):
    """A reply that breaks its schema: ``where`` (the field path) and ``why``."""

    def __init__(self, what: str, where: str, why: str) -> None:
        super().__init__(f"{what}: {where}: {why}")
        self.what, self.where, self.why = what, where, why

    def row_error(self) -> str:
        """The row's error text: the code, the reply's field and what is wrong with it."""
        return f"{BAD_RESPONSE}: bad response from the server ({self.what}): {self.where}: {self.why}"


#: a log-probability: a finite JSON number at most 0 (no bool, no string)
Logprob = Annotated[float, Field(strict=True, allow_inf_nan=False, le=0.0)]
#: a token count: a non-negative JSON integer (no bool, no float, no string)
Count = Annotated[int, Field(strict=True, ge=0)]


class _Schema(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class TopLogprob(_Schema):
    token: Annotated[str, Field(strict=True)]
    logprob: Logprob
    bytes: list[Annotated[int, Field(strict=True, ge=0, le=255)]] | None = None


class TokenLogprob(_Schema):
    """One answer token of ``choices[i].logprobs.content`` with its top alternatives."""

    token: Annotated[str, Field(strict=True)] = ""
    logprob: Logprob | None = None
    top_logprobs: list[TopLogprob] = []

    @field_validator("top_logprobs")
    @classmethod
    def _distinct(cls, tops: list[TopLogprob]) -> list[TopLogprob]:
        seen: set[tuple[str, tuple[int, ...] | None]] = set()
        for t in tops:
            key = (t.token, tuple(t.bytes) if t.bytes is not None else None)
            if key in seen:
                raise ValueError(f"the token {t.token!r} is listed twice")
            seen.add(key)
        return tops


class ChatLogprobs(_Schema):
    content: list[TokenLogprob] | None = None


class ChatMessage(_Schema):
    content: Annotated[str, Field(strict=True)] | None = None


class ChatChoice(_Schema):
    message: ChatMessage | None = None
    logprobs: ChatLogprobs | None = None


class Usage(_Schema):
    prompt_tokens: Count | None = None
    completion_tokens: Count | None = None
    total_tokens: Count | None = None


class ChatReply(_Schema):
    """A ``/v1/chat/completions`` reply."""

    choices: Annotated[list[ChatChoice], Field(min_length=1)]
    usage: Usage | None = None


class LegacyLogprobs(_Schema):
    """OpenAI's legacy completions ``logprobs`` (``echo=true``): per token its text, log-probability, offset."""

    tokens: list[Annotated[str, Field(strict=True)]] | None = None
    token_logprobs: list[Logprob | None] | None = None
    text_offset: list[Count] | None = None


class PromptLogprob(_Schema):
    """One entry of vLLM's ``prompt_logprobs`` (token id -> this)."""

    logprob: Logprob
    rank: Count | None = None
    decoded_token: Annotated[str, Field(strict=True)] | None = None


class CompletionChoice(_Schema):
    text: Annotated[str, Field(strict=True)] | None = None
    logprobs: LegacyLogprobs | None = None
    prompt_logprobs: list[dict[str, PromptLogprob] | None] | None = None


class CompletionReply(_Schema):
    """A ``/v1/completions`` reply."""

    choices: Annotated[list[CompletionChoice], Field(min_length=1)]
    usage: Usage | None = None


class ModelEntry(_Schema):
    """One entry of ``/v1/models``: its id and the facts the cache keys a server's model by (kept as sent)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    id: Annotated[str, Field(strict=True)]


class ModelList(_Schema):
    """A ``/v1/models`` reply."""

    data: list[ModelEntry]


def decode_reply(body: bytes | str, what: str) -> Any:
    """A reply's body as JSON through the one JSON reader (UTF-8; depth and size limits; ``NaN``/``Infinity`` are
    read, so that the schema names the field that holds one); :class:`BadResponse` when it is none of that."""
    try:
        text = body.decode("utf-8") if isinstance(body, bytes) else body
    except UnicodeDecodeError as exc:
        raise BadResponse(what, "(the body)", f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    try:
        return loads_json(text, source="the body", nonfinite=True)
    except BiaskitError as exc:
        raise BadResponse(what, "(the body)", f"[{exc.code}] {exc.what}") from None


def _where(err: Any) -> str:
    out = ""
    for part in err.get("loc", ()):
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(the reply)"


def parse(schema: type[_Schema], reply: Any, what: str) -> Any:
    """``reply`` (the decoded JSON) checked against ``schema``; :class:`BadResponse` naming the first bad field."""
    try:
        return schema.model_validate(reply)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        got = first.get("input")
        shown = repr(got)[:60] if not isinstance(got, (dict, list)) else type(got).__name__
        raise BadResponse(what, _where(first), f"{first.get('msg', 'invalid')} (got {shown})") from None


def chat_reply(reply: Any) -> ChatReply:
    """A chat completions reply, checked (:class:`BadResponse` otherwise)."""
    out: ChatReply = parse(ChatReply, reply, "chat completion")
    return out


def model_list(reply: Any) -> ModelList:
    """A ``/v1/models`` reply, checked (:class:`BadResponse` otherwise)."""
    out: ModelList = parse(ModelList, reply, "model list")
    return out


def completion_reply(reply: Any) -> CompletionReply:
    """A completions reply, checked (:class:`BadResponse` otherwise)."""
    out: CompletionReply = parse(CompletionReply, reply, "completion")
    return out
