"""Model runners: open-ended generation, masked fill-in and token likelihood.

Three entry points read a prompts table and return a *generations*-stage table (``kind`` = ``generate``,
``fill_mask`` or ``likelihood``) that carries the prompt's columns along::

    from biaskit.evaluate.runners import generate, fill_mask, likelihood

    gens = generate(prompts, model="smollm2-135m", max_new_tokens=20, seed=0)
    fills = fill_mask(templates, model="bert-base-cased", top_k=10)
    ppl = likelihood(prompts, model="smollm2-135m", span_column="descriptor_span")

Backends are looked up in :data:`biaskit.registry.backends` (``hf`` = Hugging Face transformers, the
default; ``openai`` = any OpenAI-compatible ``/v1/completions`` endpoint such as vLLM, TGI or llama.cpp
server). Importing this package does not import torch or transformers.

Reproducibility: every (prompt, sample) gets its own random generator seeded from
``sha256(seed, prompt_id, sample_index)``, so sampled outputs do not depend on batch size or prompt order;
greedy outputs are identical across batch sizes. With ``out=`` a run streams shards to ``<out>.parts/``
and a killed run resumes where it stopped.
"""

from __future__ import annotations

from typing import Any

from biaskit.evaluate.runners.builtin import make_backend
from biaskit.registry import backends

KINDS = ("generate", "fill_mask", "likelihood")


def generate(prompts: Any, *, model: str, **kwargs: Any):
    """Generate continuations; see :func:`biaskit.evaluate.runners.core.generate`."""
    from biaskit.evaluate.runners.api import generate as _generate

    return _generate(prompts, model=model, **kwargs)


def fill_mask(prompts: Any, *, model: str, **kwargs: Any):
    """Top-k fill-ins of a template's mask; see :func:`biaskit.evaluate.runners.core.fill_mask`."""
    from biaskit.evaluate.runners.api import fill_mask as _fill_mask

    return _fill_mask(prompts, model=model, **kwargs)


def likelihood(prompts: Any, *, model: str, **kwargs: Any):
    """Per-sentence NLL / perplexity; see :func:`biaskit.evaluate.runners.core.likelihood`."""
    from biaskit.evaluate.runners.api import likelihood as _likelihood

    return _likelihood(prompts, model=model, **kwargs)


__all__ = ["KINDS", "generate", "fill_mask", "likelihood", "backends", "make_backend"]
