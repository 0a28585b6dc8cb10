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

from dataclasses import fields
from typing import Any

from biaskit.evaluate.runners.backend import RunSettings
from biaskit.evaluate.runners.builtin import make_backend
from biaskit.evaluate.runners.common import FillMaskSettings, GenerationSettings, LikelihoodSettings
from biaskit.evaluate.runners.options import RunOptions
from biaskit.registry import backends

KINDS = ("generate", "fill_mask", "likelihood")


def _split(settings_type: type[RunSettings], model: str, keywords: dict[str, Any]) -> tuple[Any, RunOptions]:
    """The keyword arguments of a convenience call as the kind's settings object (the keywords that are fields of
    ``settings_type``) and the :class:`~.options.RunOptions` (the others; an unknown keyword is a TypeError, as in
    any Python call). Both are built here once and passed on whole."""
    names = {f.name for f in fields(settings_type)}
    settings = settings_type(**{k: v for k, v in keywords.items() if k in names})
    return settings, RunOptions(model, **{k: v for k, v in keywords.items() if k not in names})


def generate(prompts: Any, *, model: str, **keywords: Any):
    """Generate continuations: the fields of :class:`~.common.GenerationSettings` and of :class:`~.options.RunOptions`
    by name; see :func:`biaskit.evaluate.runners.api.generate`."""
    from biaskit.evaluate.runners.api import generate as run_generate

    return run_generate(prompts, *_split(GenerationSettings, model, keywords))


def fill_mask(prompts: Any, *, model: str, **keywords: Any):
    """Top-k fill-ins of a template's mask: the fields of :class:`~.common.FillMaskSettings` and of
    :class:`~.options.RunOptions` by name; see :func:`biaskit.evaluate.runners.api.fill_mask`."""
    from biaskit.evaluate.runners.api import fill_mask as run_fill_mask

    return run_fill_mask(prompts, *_split(FillMaskSettings, model, keywords))


def likelihood(prompts: Any, *, model: str, **keywords: Any):
    """Per-sentence NLL / perplexity: the fields of :class:`~.common.LikelihoodSettings` and of
    :class:`~.options.RunOptions` by name; see :func:`biaskit.evaluate.runners.api.likelihood`."""
    from biaskit.evaluate.runners.api import likelihood as run_likelihood

    return run_likelihood(prompts, *_split(LikelihoodSettings, model, keywords))


__all__ = ["KINDS", "generate", "fill_mask", "likelihood", "backends", "make_backend"]
