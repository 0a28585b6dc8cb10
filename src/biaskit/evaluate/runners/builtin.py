"""The built-in model backends, registered on :data:`biaskit.registry.backends` (names -> lazy
``"module:Class"`` strings: nothing heavy is imported here), and :func:`make_backend`, the one place a
backend object is built (local runs and Ray actors alike). A new backend: a module in this package with a
class like :class:`biaskit.evaluate.runners.openai.OpenAIBackend`, and one ``backends.register`` line here; a
backend of another package declares it in the ``biaskit.backends`` entry-point group instead
(``name = "module:BackendClass"``, docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from biaskit.errors import BiaskitError
from biaskit.evaluate.runners.backend import Backend, BackendBase, check_options, parse_backend_options
from biaskit.registry import backends, plugin_loader

backends.register(
    "hf",
    "biaskit.evaluate.runners.hf:HFBackend",
    help="Hugging Face transformers: any causal or masked LM id, local folder, .gguf file or biaskit asset",
)
backends.register(
    "openai", "biaskit.evaluate.runners.openai:OpenAIBackend", help="any OpenAI-compatible /v1/completions endpoint (vLLM, TGI, llama.cpp server)"
)

#: the entry-point group through which other packages add model backends: ``name = "module:BackendClass"``
ENTRY_POINT_GROUP = "biaskit.backends"
backends.add_loader(plugin_loader(backends, ENTRY_POINT_GROUP))  # on the first lookup of a backend name


def backend_class(name: str) -> type[BackendBase]:
    """The class registered as ``name`` (E020 for an unknown name); E062 when it is no :class:`BackendBase`
    subclass (a registered backend declares its capabilities on the class, read before anything is built)."""
    cls = backends.get(name)
    if not (isinstance(cls, type) and issubclass(cls, BackendBase)):
        raise BiaskitError(
            "E062",
            f"the registered backend {name!r} ({backends.origin(name)}) is not a model backend class",
            value=str(backends.target(name)),
            fix="point the entry point at a class that subclasses biaskit.evaluate.runners.backend.BackendBase and declares its capabilities",
        )
    return cls


def make_backend(backend: str, model: str, backend_options: Mapping[str, object] | None) -> Backend:
    """An instance of the registered backend ``backend`` for ``model`` (options passed to its constructor)."""
    cls = backend_class(backend)
    check_options(backend, cls, backend_options)
    be = cls(model, **(backend_options or {}))  # type: ignore[call-arg]  # a backend class takes (model, **options)
    assert isinstance(be, Backend), f"{cls.__name__} does not keep the Backend protocol"  # BackendBase implements every member
    return be


def parse_options(backend: str, pairs: Sequence[str]) -> dict[str, str | int | float | bool]:
    """``--backend-option key=value`` pairs as the typed constructor options the backend ``backend`` declares
    (:func:`~.backend.parse_backend_options`; E318 for a key it does not declare or a value of the wrong type)."""
    if not pairs:
        return {}
    return parse_backend_options(backend, backend_class(backend), pairs)


def describe_backends() -> list[str]:
    """The lines of ``biaskit backends list``: each registered backend with where it comes from, the kinds it runs,
    whether it can judge, and the options it declares for ``--backend-option`` (type, default, help)."""
    lines = []
    for name in backends.names():
        caps = backend_class(name).capabilities
        lines.append(f"{name} ({backends.origin(name)}): {backends.help(name)}")
        lines.append(f"  kinds: {', '.join(caps.kinds) or 'none'}; prompt formats: {', '.join(caps.formats)}")
        lines.append(f"  judge: {'yes (' + ', '.join(caps.judge) + ')' if caps.can_judge() else 'no'}")
        lines.extend(f"  --backend-option {o.name}=<{o.type}> (default {o.default!r}): {o.help}" for o in caps.settable)
        lines.append("")
    return lines
