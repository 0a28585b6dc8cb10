"""The Python API of the runners: :func:`generate`, :func:`fill_mask` and :func:`likelihood`.

Each takes the kind's settings object (:class:`~.common.GenerationSettings`, :class:`~.common.FillMaskSettings`,
:class:`~.common.LikelihoodSettings`) and the run's :class:`~.options.RunOptions`, each built once by the caller (the
CLI command, the demo, or :mod:`biaskit.evaluate.runners` from keyword arguments), adds the backend's constructor
options of the run (:func:`constructor_options`) and hands both whole to :func:`biaskit.evaluate.runners.core.run`.
"""

from __future__ import annotations

from dataclasses import replace

import pyarrow as pa

from biaskit.errors import BiaskitError
from biaskit.evaluate.runners.backend import RunSettings
from biaskit.evaluate.runners.builtin import parse_options
from biaskit.evaluate.runners.common import FillMaskSettings, GenerationSettings, LikelihoodSettings
from biaskit.evaluate.runners.core import run
from biaskit.evaluate.runners.options import RunOptions


def constructor_options(task: str, options: RunOptions) -> dict[str, object]:
    """The backend's constructor options of a run: the model kind the run needs (``task``), ``device``/``dtype`` when
    set (not ``auto``), then ``options.backend_options`` (an option the backend does not take is E312 when it is
    built), then the ``key=value`` texts of ``options.backend_option`` parsed to the types the backend declares (E318
    for a key it does not declare, a bad value, or a key set already by its own flag)."""
    opts: dict[str, object] = {"task": task}
    if options.device not in (None, "auto"):
        opts["device"] = options.device
    if options.dtype not in (None, "auto"):
        opts["dtype"] = options.dtype
    opts.update(options.backend_options or {})
    declared = parse_options(options.backend, options.backend_option)
    twice = sorted(set(declared) & set(opts))
    if twice:
        raise BiaskitError("E318", "a backend option is set twice (by its own flag and by --backend-option)", value=twice, fix="give it once")
    return {**opts, **declared}


def _run(kind: str, task: str, prompts: object, settings: RunSettings, options: RunOptions) -> pa.Table:
    """Run ``kind`` with ``settings`` and ``options``, the backend built with :func:`constructor_options`."""
    settings.check()
    resolved = replace(options, backend_options=constructor_options(task, options), device=None, dtype=None, backend_option=())
    return run(kind, prompts, settings, resolved)


def generate(prompts: object, settings: GenerationSettings, options: RunOptions) -> pa.Table:
    """Continue every prompt: one row per (prompt, sample) with ``continuation`` (prompt stripped) and ``full_text``.

    Greedy by default; ``do_sample=True`` samples with ``temperature``/``top_k``/``top_p`` from a per-row
    generator seeded by (seed, prompt_id, sample_index), so outputs do not depend on ``batch_size`` or the
    prompt order. ``engine="ray"`` (or an :class:`~biaskit.pool.EngineSpec`) runs the model on a Ray
    actor pool with the same result. ``first_sentence`` cuts each continuation after its first sentence. Trailing spaces of a
    prompt (BOLD prompts end in one) are cut before tokenising and the continuation's first space is dropped,
    so ``text + continuation`` reads right (``strip_trailing_space=False`` feeds the prompt as it is). ``out`` makes the run
    resumable (shards in ``<out>.parts/``); rerunning a finished run runs again exactly the rows that ended in
    an error (``retry_errors=False`` leaves them). Prompts longer than the model context are cut from the left
    (``truncated=True``). ``prompt_format="chat"`` (or ``chat=True``) wraps each prompt as a user turn (the
    tokenizer's chat template; ``/v1/chat/completions`` with the openai backend), after ``system_prompt`` when
    given; the format is in ``generation_config`` and the ``prompt_format`` column. ``cache`` (a folder or
    :class:`~biaskit.evaluate.cache.ResponseCache`) answers units computed before (docs/runners.md).
    """
    return _run("generate", "causal", prompts, settings, options)


def fill_mask(prompts: object, settings: FillMaskSettings, options: RunOptions) -> pa.Table:
    """Top-k fill-ins of each prompt's single mask slot (``<mask>`` or ``[MASK]``): ``top_k`` rows per prompt.

    Rows carry ``token`` (the predicted word), ``token_score`` (its probability), ``rank`` (1-based) and
    ``full_text`` (the template with the slot filled). ``whole_word`` keeps only word-initial, alphabetic
    vocabulary entries (no ``##`` continuation pieces, punctuation or special tokens). A prompt without a mask
    or with several gives one row with an error.

    ``max_subwords=N`` (> 1) proposes whole words of 1..N subword tokens instead (needed for languages whose
    words are several pieces, e.g. Czech or Polish): beam search (``beam_size`` per length) fills N mask tokens,
    only whole words are kept, and all lengths are ranked together by pseudo-log-likelihood (``fill_pll``,
    ``pll="original"`` or ``"word_l2r"``); ``n_subwords`` says how many pieces each fill-in has. Every row has
    ``n_subwords`` and ``fill_pll`` (log ``token_score`` for single-token fill-ins).
    """
    return _run("fill_mask", "masked", prompts, settings, options)


def likelihood(prompts: object, settings: LikelihoodSettings, options: RunOptions) -> pa.Table:
    """Per-sentence mean negative log-likelihood (nats/token), perplexity and number of scored tokens.

    Causal LMs: every text token is scored given the ones before it; the BOS position is never scored
    (``add_bos=None`` does what the tokenizer does by default; ``True`` puts BOS (or EOS, GPT-2 style) before
    each sentence so the first word is scored too; ``False`` leaves the first token as context only).
    Masked LMs: pseudo-log-likelihood (mask one token at a time). ``span_column`` (e.g. ``descriptor``)
    scores only the tokens overlapping that column's text inside the sentence.
    """
    return _run("likelihood", "auto", prompts, settings, options)
