"""The built-in model backends, registered on :data:`biaskit.registry.backends` (names -> lazy
``"module:Class"`` strings: nothing heavy is imported here), and :func:`make_backend`, the one place a
backend object is built (local runs and Ray actors alike). A new backend: a module in this package with a
class like :class:`biaskit.evaluate.runners.openai.OpenAIBackend`, and one ``backends.register`` line here."""

from __future__ import annotations

from typing import Any

from biaskit.evaluate.runners.backend import check_options
from biaskit.registry import backends

backends.register(
    "hf",
    "biaskit.evaluate.runners.hf:HFBackend",
    help="Hugging Face transformers: any causal or masked LM id, local folder, .gguf file or biaskit asset",
)
backends.register(
    "openai", "biaskit.evaluate.runners.openai:OpenAIBackend", help="any OpenAI-compatible /v1/completions endpoint (vLLM, TGI, llama.cpp server)"
)


def make_backend(backend: str, model: str, backend_options: dict | None) -> Any:
    """An instance of the registered backend ``backend`` for ``model`` (options passed to its constructor)."""
    cls = backends.get(backend)
    check_options(backend, cls, backend_options)
    return cls(model, **(backend_options or {}))
