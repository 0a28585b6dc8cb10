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

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, runtime_checkable

from biaskit.errors import BiaskitError
from biaskit.evaluate.cache import ResponseCache
from biaskit.evaluate.runners.common import FillMaskSettings, GenerationSettings, LikelihoodSettings, Unit

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


#: one result row a backend yields: ``_unit`` (the :class:`~.common.Unit` it answers) and the kind's output
#: columns (:data:`ROW_KEYS`); a value the run loop writes into the generations table
ResultRow = dict[str, object]
#: what ``generate``/``likelihood``/``fill_mask`` return: result rows, batch by batch
Batches = Iterator[list[ResultRow]]
#: the settings object of each kind
RunSettings = GenerationSettings | LikelihoodSettings | FillMaskSettings
#: kind -> its settings type (part of the contract: the run loop hands each kind's method exactly this type)
SETTINGS_TYPES: dict[str, type[GenerationSettings] | type[LikelihoodSettings] | type[FillMaskSettings]] = {
    "generate": GenerationSettings,
    "likelihood": LikelihoodSettings,
    "fill_mask": FillMaskSettings,
}
#: kind -> the keys a result row has (besides ``_unit``); every row may have ``error`` (a string: the row failed,
#: its output columns null) and ``truncated`` (the prompt was cut to fit the context). A missing key is null.
ROW_KEYS = {
    "generate": ("continuation", "full_text", "truncated", "error"),
    "likelihood": ("nll_mean", "perplexity", "sum_logprob", "n_tokens", "truncated", "error"),
    "fill_mask": ("sample_index", "token", "token_score", "rank", "full_text", "n_subwords", "fill_pll", "truncated", "error"),
}
# (fill_mask: one row per fill-in of the unit, ``sample_index`` = rank - 1, so that the rows of a template stay apart)
#: the value types a declared backend option may have (``--backend-option key=value`` is parsed to it)
OPTION_TYPES = ("str", "int", "float", "bool")


@dataclass(frozen=True)
class BackendOption:
    """A constructor option a backend declares for ``--backend-option name=value``: its ``type`` (one of
    :data:`OPTION_TYPES`), the constructor's ``default`` (shown by ``biaskit backends list``) and its ``help``."""

    name: str
    type: str = "str"
    default: str | int | float | bool | None = None
    help: str = ""

    def parse(self, backend: str, text: str) -> str | int | float | bool:
        """``text`` as this option's type; E318 naming the option, the backend and the type when it is not one."""
        v = text.strip()
        try:
            if self.type == "int":
                return int(v)
            if self.type == "float":
                f = float(v)
                if not math.isfinite(f):
                    raise ValueError(v)
                return f
            if self.type == "bool":
                low = v.lower()
                if low in ("true", "yes", "1", "on"):
                    return True
                if low in ("false", "no", "0", "off"):
                    return False
                raise ValueError(v)
        except ValueError:
            raise BiaskitError(
                "E318",
                f"the {backend} backend's option {self.name} takes a {self.type}",
                value=text,
                options=["true", "false"] if self.type == "bool" else None,
                fix=f"e.g. --backend-option {self.name}={self.default if self.default is not None else _EXAMPLE[self.type]}",
            ) from None
        return text  # a str option as given (spaces included)


_EXAMPLE = {"str": "VALUE", "int": "4", "float": "0.5", "bool": "true"}


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
    prompt formats it has (``formats``: ``raw`` completion, ``chat`` template / chat endpoint), what it offers
    the judge (``judge``: features of :data:`JUDGE_FEATURES`; empty: it cannot judge) and the options a user
    sets with ``--backend-option name=value`` (``settable``: :class:`BackendOption`, typed; their names are
    constructor options too)."""

    kinds: tuple[str, ...]
    options: tuple[str, ...] = ()
    formats: tuple[str, ...] = ("raw", "chat")
    judge: tuple[str, ...] = ()
    settable: tuple[BackendOption, ...] = ()

    def __post_init__(self) -> None:
        for o in self.settable:
            if o.type not in OPTION_TYPES:
                raise ValueError(f"backend option {o.name!r}: type must be one of {OPTION_TYPES}, got {o.type!r}")

    @property
    def option_names(self) -> tuple[str, ...]:
        """Every constructor option the backend takes: ``options``, the settable ones and :data:`COMMON_OPTIONS`."""
        return tuple(dict.fromkeys([*self.options, *(o.name for o in self.settable), *COMMON_OPTIONS]))

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

    def describe(self) -> dict[str, object]:
        """What the manifest records of the judge (``chat_template``: the template's text, hashed by the judge)."""
        ...

    def cache_identity(self, cache: ResponseCache) -> dict[str, object] | None:
        """What identifies its answers in the response cache (None: not cached)."""
        ...


@runtime_checkable
class Backend(Protocol):
    """A model backend: runs units of one kind and yields result rows batch by batch.

    ``generate``/``likelihood``/``fill_mask`` take the units, the kind's settings object (:data:`SETTINGS_TYPES`)
    and the batch size (None: automatic) and yield lists of :data:`ResultRow` (``_unit`` and the kind's
    :data:`ROW_KEYS`). Only the kinds in ``capabilities.kinds`` are called (:func:`run_kind`); ``judge_session``
    only when ``capabilities.can_judge()``. ``cache_identity`` None: the backend's answers cannot be keyed, and a
    run with ``--cache`` is refused (E319).
    """

    name: str
    capabilities: ClassVar[Capabilities]
    revision: str | None
    truncated_count: int
    batch_sizes_used: list[int]

    def describe(self) -> dict[str, object]: ...

    def bos_policy(self, s: LikelihoodSettings) -> int | None: ...

    def cache_identity(self) -> dict[str, object] | None: ...

    def generate(self, units: Sequence[Unit], s: GenerationSettings, batch_size: int | None) -> Batches: ...

    def likelihood(self, units: Sequence[Unit], s: LikelihoodSettings, batch_size: int | None) -> Batches: ...

    def fill_mask(self, units: Sequence[Unit], s: FillMaskSettings, batch_size: int | None) -> Batches: ...

    def judge_session(self, s: JudgeSettings) -> JudgeSession: ...


class BackendBase:
    """Defaults for every member of :class:`Backend`: no BOS policy, no cache identity (a ``--cache`` run is
    refused), no batch sizes or truncations counted yet, and the kinds and the judge not declared refused (E062)."""

    name: str = ""
    capabilities: ClassVar[Capabilities] = Capabilities(kinds=())
    revision: str | None = None
    truncated_count: int = 0

    @property
    def batch_sizes_used(self) -> list[int]:
        """The batch sizes the backend ran with (the manifest records them); this instance's own list."""
        return self.__dict__.setdefault("_batch_sizes_used", [])

    @batch_sizes_used.setter
    def batch_sizes_used(self, value: list[int]) -> None:
        self.__dict__["_batch_sizes_used"] = value

    def describe(self) -> dict[str, object]:
        return {"backend": self.name}

    def bos_policy(self, s: LikelihoodSettings) -> int | None:
        """The BOS token put before each likelihood sentence (None: none; the first token is context only)."""
        return None

    def cache_identity(self) -> dict[str, object] | None:
        """What identifies the model for the response cache (None: none; a run with ``--cache`` is refused, E319)."""
        return None

    def generate(self, units: Sequence[Unit], s: GenerationSettings, batch_size: int | None) -> Batches:
        raise not_supported(self, "generate")

    def likelihood(self, units: Sequence[Unit], s: LikelihoodSettings, batch_size: int | None) -> Batches:
        raise not_supported(self, "likelihood")

    def fill_mask(self, units: Sequence[Unit], s: FillMaskSettings, batch_size: int | None) -> Batches:
        raise not_supported(self, "fill_mask")

    def judge_session(self, s: JudgeSettings) -> JudgeSession:
        raise not_supported(self, "judge")


def run_kind(be: Backend, kind: str, units: Sequence[Unit], settings: RunSettings, batch_size: int | None) -> Batches:
    """The one dispatch from a kind to the backend's method, with the kind's settings type checked (E062)."""
    want = SETTINGS_TYPES.get(kind)
    if want is None or not isinstance(settings, want):
        raise BiaskitError(
            "E062",
            f"a {kind} run needs {want.__name__ if want else 'a known kind'} settings",
            value=type(settings).__name__,
            options=[f"{k}: {t.__name__}" for k, t in SETTINGS_TYPES.items()],
            fix="build the settings of the kind you run (biaskit.evaluate.runners.common)",
        )
    match settings:
        case GenerationSettings():
            return be.generate(units, settings, batch_size)
        case LikelihoodSettings():
            return be.likelihood(units, settings, batch_size)
        case FillMaskSettings():
            return be.fill_mask(units, settings, batch_size)
    raise AssertionError(kind)  # pragma: no cover - SETTINGS_TYPES has the three kinds


def not_supported(be: Backend | BackendBase, kind: str) -> BiaskitError:
    """E062: the backend ``be`` cannot run ``kind`` (naming the kinds it can run)."""
    return BiaskitError(
        "E062",
        f"the {be.name} backend cannot run {kind}",
        value=be.name,
        options=list(be.capabilities.kinds),
        fix="choose a backend that runs it (biaskit backends list), e.g. --backend hf",
    )


def capabilities_of(be: Backend | BackendBase | type[BackendBase]) -> Capabilities:
    """The declared capabilities of a backend (object or registered class)."""
    return be.capabilities


def check_options(name: str, cls: type[BackendBase], options: Mapping[str, object] | None) -> None:
    """E312 for an option in ``options`` that the backend class ``cls`` (registered as ``name``) does not take."""
    caps = cls.capabilities
    known = set(caps.option_names)
    bad = [k for k in (options or {}) if k not in known]
    if bad:
        shown = ", ".join(f"{k} ({FLAGS[k]})" if k in FLAGS else k for k in bad)
        raise BiaskitError(
            "E312",
            f"the {name} backend does not take the option(s) {shown}",
            value=bad,
            options=sorted(caps.option_names),
            fix=f"drop {', '.join(FLAGS.get(k, k) for k in bad)}, or choose the backend that takes it (e.g. --backend openai for an endpoint)",
        )


def parse_backend_options(name: str, cls: type[BackendBase], pairs: Sequence[str]) -> dict[str, str | int | float | bool]:
    """``--backend-option key=value`` (repeatable) of the backend ``name`` as typed constructor options: each key one
    of its declared :class:`BackendOption` (E318 naming the key, the valid keys and the fix), each value parsed to
    the option's type, no key given twice."""
    declared = {o.name: o for o in cls.capabilities.settable}
    out: dict[str, str | int | float | bool] = {}
    for pair in pairs:
        key, eq, text = pair.partition("=")
        key = key.strip()
        if not eq or not key:
            raise BiaskitError("E318", "a backend option is key=value", value=pair, options=sorted(declared), fix="e.g. --backend-option KEY=VALUE")
        if key not in declared:
            raise BiaskitError(
                "E318",
                f"the {name} backend declares no option {key!r}" if declared else f"the {name} backend declares no options",
                value=key,
                options=sorted(declared),
                fix=("use one of its options (biaskit backends list)" if declared else "drop --backend-option")
                + ", or choose a backend that declares it",
            )
        if key in out:
            raise BiaskitError("E318", f"the backend option {key} is given twice", value=key, fix="give each --backend-option once")
        out[key] = declared[key].parse(name, text)
    return out
