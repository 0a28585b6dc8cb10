"""The contract every model backend keeps: :class:`Backend` (a ``typing.Protocol``) and its declared
:class:`Capabilities`.

The run loop (:mod:`.core`) asks a backend's ``capabilities`` what it can do (which kinds of run, which
constructor options) instead of probing for methods. A backend class in its own module (see
:class:`biaskit.evaluate.runners.openai.OpenAIBackend`) subclasses :class:`BackendBase` for the defaults and
declares::

    capabilities = Capabilities(kinds=("generate", "likelihood"), options=("base_url", "timeout"))

An option the backend does not declare is error E312 naming the option and the backend (the hf backend used
to swallow the openai backend's ``--base-url`` without a word); a kind it does not declare is E062.

**Judging.** A backend that can serve as the LLM judge (:mod:`biaskit.evaluate.metrics.judge`) declares what it
offers in ``Capabilities.judge`` (:data:`JUDGE_FEATURES`) and implements ``judge_session(settings)``, returning a
:class:`JudgeSession` (render a chat prompt, answer prompts with the label log-probabilities). The judge needs
``chat_template`` and ``logprobs`` (:data:`JUDGE_NEEDS`); it never asks which backend it has::

    capabilities = Capabilities(kinds=("generate",), judge=("chat_template", "logprobs"))

    def judge_session(self, s: JudgeSettings) -> JudgeSession: ...
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from biaskit.errors import BiaskitError

KINDS = ("generate", "fill_mask", "likelihood")
#: options every backend takes: what the run loop itself passes (the kind of model a run needs)
COMMON_OPTIONS = ("task",)
#: option name -> the command-line flag that sets it (for messages)
FLAGS = {
    "base_url": "--base-url",
    "api_key_env": "--api-key-env",
    "timeout": "--timeout",
    "max_retries": "--max-retries",
    "allow_redirects": "--allow-redirects",
    "model_revision": "--model-revision",
    "device": "--device",
    "dtype": "--dtype",
    "revision": "--revision",
    "trust_remote_code": "--trust-remote-code",
}


#: what a judging backend may declare in ``Capabilities.judge``
JUDGE_FEATURES = {
    "chat_template": "applies a chat template to the judge's messages (its own, or the server's)",
    "logprobs": "gives the log-probabilities of the answer's first token (label_scoring=first)",
    "top_k": "gives them for its top-k tokens only (judge.top_logprobs): no label_scoring=sum, a label outside is p=0",
    "request_per_repeat": "draws each of judge.repeats with a request of its own (counted by --dry-run)",
}
#: the features a backend must declare to judge
JUDGE_NEEDS = ("chat_template", "logprobs")


@dataclass(frozen=True)
class Capabilities:
    """What a backend can run (``kinds``), the constructor options it takes (``options``), the generation
    prompt formats it has (``formats``: ``raw`` completion, ``chat`` template / chat endpoint) and what it offers
    the judge (``judge``: features of :data:`JUDGE_FEATURES`; empty: it cannot judge)."""

    kinds: tuple[str, ...]
    options: tuple[str, ...] = ()
    formats: tuple[str, ...] = ("raw", "chat")
    judge: tuple[str, ...] = ()

    def supports(self, kind: str) -> bool:
        return kind in self.kinds

    def can_judge(self) -> bool:
        return all(f in self.judge for f in JUDGE_NEEDS)


@dataclass(frozen=True)
class JudgeSettings:
    """How a judging backend reads the labels: the label words (the task's order), ``label_scoring`` (``first``:
    the first token's log-probability; ``sum``: all the label's tokens), the prompts per forward pass
    (``batch_size``), and for ``top_k`` backends how many top tokens to ask for and how a token matches a label
    (``token_match``: ``prefix`` or ``exact``)."""

    labels: tuple[str, ...]
    label_scoring: str = "first"
    batch_size: int = 8
    top_logprobs: int = 20
    token_match: str = "prefix"


@dataclass
class JudgeAnswer:
    """What the judge said about one prompt: unnormalised label log-probabilities (in the order of
    ``JudgeSettings.labels``), sampled labels (None for an off-label draw), tokens in/out (None: not reported), and
    an error (then ``logp`` is None)."""

    logp: list[float] | None
    draws: list[str | None] = field(default_factory=list)
    tokens_in: int | None = 0
    tokens_out: int | None = 0
    error: str | None = None


@runtime_checkable
class JudgeSession(Protocol):
    """A backend ready to judge with one :class:`JudgeSettings` (what ``judge_session`` returns)."""

    def render(self, messages: list[dict[str, str]]) -> str:
        """The prompt as the model sees it (a chat template applied), or what is sent (a server applies it)."""
        ...

    def answer(
        self, messages: Sequence[list[dict[str, str]]], *, repeats: int = 0, temperature: float = 1.0, seeds: Sequence[int] = ()
    ) -> list[JudgeAnswer]:
        """One answer per chat, in order; ``repeats`` sampled labels at ``temperature`` with the chat's seed."""
        ...

    def describe(self) -> dict[str, Any]:
        """What the manifest records of the judge (``chat_template``: the template's text, hashed by the judge)."""
        ...

    def cache_identity(self, cache: Any) -> dict[str, Any] | None:
        """What identifies its answers in the response cache (None: not cached)."""
        ...


@runtime_checkable
class Backend(Protocol):
    """A model backend: runs units of one kind and yields result rows batch by batch.

    ``generate``/``likelihood``/``fill_mask`` take the units, the kind's settings object
    (:class:`~.common.GenerationSettings`, :class:`~.common.LikelihoodSettings`,
    :class:`~.common.FillMaskSettings`) and the batch size (None: automatic) and yield lists of result dicts,
    each with ``_unit`` (the :class:`~.common.Unit`) and the output columns. Only the kinds in
    ``capabilities.kinds`` are called.
    """

    name: str
    capabilities: ClassVar[Capabilities]
    revision: str | None
    truncated_count: int
    batch_sizes_used: list[int]

    def describe(self) -> dict[str, Any]: ...

    def bos_policy(self, s: Any) -> int | None: ...

    def cache_identity(self) -> dict[str, Any] | None: ...

    def generate(self, units: Sequence[Any], s: Any, batch_size: int | None) -> Iterator[list[dict]]: ...

    def likelihood(self, units: Sequence[Any], s: Any, batch_size: int | None) -> Iterator[list[dict]]: ...

    def fill_mask(self, units: Sequence[Any], s: Any, batch_size: int | None) -> Iterator[list[dict]]: ...


class BackendBase:
    """Defaults for a :class:`Backend`: no BOS policy, no cache identity, kinds not declared refused."""

    name: str = ""
    capabilities: ClassVar[Capabilities] = Capabilities(kinds=())
    revision: str | None = None
    truncated_count: int = 0

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name}

    def bos_policy(self, s: Any) -> int | None:
        """The BOS token put before each likelihood sentence (None: none; the first token is context only)."""
        return None

    def cache_identity(self) -> dict[str, Any] | None:
        """What identifies the model for the response cache (None: answers of this backend are not cached)."""
        return None

    def _not_supported(self, kind: str) -> BiaskitError:
        return not_supported(self, kind)

    def generate(self, units: Sequence[Any], s: Any, batch_size: int | None) -> Iterator[list[dict]]:
        raise self._not_supported("generate")

    def likelihood(self, units: Sequence[Any], s: Any, batch_size: int | None) -> Iterator[list[dict]]:
        raise self._not_supported("likelihood")

    def fill_mask(self, units: Sequence[Any], s: Any, batch_size: int | None) -> Iterator[list[dict]]:
        raise self._not_supported("fill_mask")

    def judge_session(self, s: JudgeSettings) -> JudgeSession:
        raise self._not_supported("judge")


def not_supported(be: Any, kind: str) -> BiaskitError:
    """E062: the backend ``be`` cannot run ``kind`` (naming the kinds it can run)."""
    return BiaskitError(
        "E062",
        f"the {be.name} backend cannot run {kind}",
        value=be.name,
        options=list(capabilities_of(be).kinds),
        fix="use --backend hf for this kind of run",
    )


def capabilities_of(be: Any) -> Capabilities:
    """The declared capabilities of ``be``; an object that declares none (a user's own backend object) is
    taken to run the kinds it has methods for."""
    caps = getattr(be, "capabilities", None)
    if isinstance(caps, Capabilities):
        return caps
    return Capabilities(kinds=tuple(k for k in KINDS if callable(getattr(be, k, None))))


def check_options(name: str, cls: Any, options: Mapping[str, Any] | None) -> None:
    """E312 for an option in ``options`` that the backend class ``cls`` (registered as ``name``) does not take."""
    caps = getattr(cls, "capabilities", None)
    if not isinstance(caps, Capabilities):
        return
    known = set(caps.options) | set(COMMON_OPTIONS)
    bad = [k for k in (options or {}) if k not in known]
    if bad:
        shown = ", ".join(f"{k} ({FLAGS[k]})" if k in FLAGS else k for k in bad)
        raise BiaskitError(
            "E312",
            f"the {name} backend does not take the option(s) {shown}",
            value=bad,
            options=sorted(caps.options),
            fix=f"drop {', '.join(FLAGS.get(k, k) for k in bad)}, or choose the backend that takes it (e.g. --backend openai for an endpoint)",
        )
