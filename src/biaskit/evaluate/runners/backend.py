"""The contract every model backend keeps: :class:`Backend` (a ``typing.Protocol``) and its declared
:class:`Capabilities`.

The run loop (:mod:`.core`) asks a backend's ``capabilities`` what it can do (which kinds of run, which
constructor options) instead of probing for methods. A backend class in its own module (see
:class:`biaskit.evaluate.runners.openai.OpenAIBackend`) subclasses :class:`BackendBase` for the defaults and
declares::

    capabilities = Capabilities(kinds=("generate", "likelihood"), options=("base_url", "timeout"))

An option the backend does not declare is error E312 naming the option and the backend (the hf backend used
to swallow the openai backend's ``--base-url`` without a word); a kind it does not declare is E062.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Capabilities:
    """What a backend can run (``kinds``), the constructor options it takes (``options``) and the generation
    prompt formats it has (``formats``: ``raw`` completion, ``chat`` template / chat endpoint)."""

    kinds: tuple[str, ...]
    options: tuple[str, ...] = ()
    formats: tuple[str, ...] = ("raw", "chat")

    def supports(self, kind: str) -> bool:
        return kind in self.kinds


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
