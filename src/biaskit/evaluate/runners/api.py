"""The Python API of the runners: :func:`generate`, :func:`fill_mask` and :func:`likelihood`.

Each builds its settings object (:class:`~.common.GenerationSettings`, :class:`~.common.FillMaskSettings`,
:class:`~.common.LikelihoodSettings`) from its own keyword arguments, and the run's :class:`~.common.RunOptions`
from the run options all three take (``backend``, ``out``, ``batch_size``, ``device``, ``dtype``, ``overwrite``,
``limit``, ``backend_options``, ``backend_option``, ``progress``, ``retry_errors``, ``engine``, ``cache``: see :func:`_run`), and hands
both whole to :func:`biaskit.evaluate.runners.core.run`. The CLI commands call these functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from biaskit.errors import BiaskitError
from biaskit.evaluate.runners.builtin import parse_options
from biaskit.evaluate.runners.common import FillMaskSettings, GenerationSettings, LikelihoodSettings, RunOptions
from biaskit.evaluate.runners.core import run


def _run(
    kind: str,
    task: str,
    prompts: Any,
    settings: Any,
    *,
    model: str,
    backend: str = "hf",
    out: str | Path | None = None,
    batch_size: int | str | None = None,
    device: str | None = "auto",
    dtype: str | None = "auto",
    overwrite: bool = False,
    limit: int | None = None,
    backend_options: dict | None = None,
    backend_option: Sequence[str] = (),
    progress: bool | None = None,
    retry_errors: bool = True,
    engine: Any = None,
    cache: Any = None,
) -> pa.Table:
    """Run ``kind`` with ``settings`` and the run options every runner takes (the keyword arguments after
    ``settings``). The backend's constructor options are the model kind the run needs (``task``),
    ``device``/``dtype`` when set (not ``auto``), then ``backend_options``; an option the backend does not take
    is E312. ``backend_option``: ``key=value`` texts (the CLI's ``--backend-option``), parsed to the types the backend
    declares (E318 for a key it does not declare, a bad value, or a key ``backend_options`` sets already)."""
    opts: dict[str, Any] = {"task": task}
    if device not in (None, "auto"):
        opts["device"] = device
    if dtype not in (None, "auto"):
        opts["dtype"] = dtype
    opts.update(backend_options or {})
    declared = parse_options(backend, backend_option)
    twice = sorted(set(declared) & set(opts))
    if twice:
        raise BiaskitError("E318", "a backend option is set twice (by its own flag and by --backend-option)", value=twice, fix="give it once")
    o = RunOptions(
        model=model,
        backend=backend,
        out=out,
        batch_size=batch_size,
        overwrite=overwrite,
        limit=limit,
        backend_options={**opts, **declared},
        progress=progress,
        retry_errors=retry_errors,
        engine=engine,
        cache=cache,
    )
    return run(kind, prompts, settings, o)


def generate(
    prompts: Any,
    *,
    model: str,
    seed: int = 0,
    max_new_tokens: int = 20,
    do_sample: bool = False,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    repetition_penalty: float | None = None,
    num_return_sequences: int = 1,
    first_sentence: bool = False,
    chat: bool = False,
    prompt_format: str = "raw",
    system_prompt: str | None = None,
    strip_trailing_space: bool = True,
    **run_options: Any,
) -> pa.Table:
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
    s = GenerationSettings(
        max_new_tokens=max_new_tokens,
        do_sample=do_sample,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        repetition_penalty=repetition_penalty,
        num_return_sequences=num_return_sequences,
        first_sentence=first_sentence,
        chat=chat,
        strip_trailing_space=strip_trailing_space,
        seed=seed,
        prompt_format=prompt_format,
        system_prompt=system_prompt,
    )
    s.check()
    return _run("generate", "causal", prompts, s, model=model, **run_options)


def fill_mask(
    prompts: Any,
    *,
    model: str,
    top_k: int = 10,
    whole_word: bool = False,
    targets: list[str] | None = None,
    max_subwords: int = 1,
    beam_size: int | None = None,
    pll: str = "original",
    **run_options: Any,
) -> pa.Table:
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
    s = FillMaskSettings(top_k=top_k, whole_word=whole_word, targets=targets, max_subwords=max_subwords, beam_size=beam_size, pll=pll)
    s.check()
    return _run("fill_mask", "masked", prompts, s, model=model, **run_options)


def likelihood(
    prompts: Any,
    *,
    model: str,
    add_bos: bool | None = None,
    span_column: str | None = None,
    **run_options: Any,
) -> pa.Table:
    """Per-sentence mean negative log-likelihood (nats/token), perplexity and number of scored tokens.

    Causal LMs: every text token is scored given the ones before it; the BOS position is never scored
    (``add_bos=None`` does what the tokenizer does by default; ``True`` puts BOS (or EOS, GPT-2 style) before
    each sentence so the first word is scored too; ``False`` leaves the first token as context only).
    Masked LMs: pseudo-log-likelihood (mask one token at a time). ``span_column`` (e.g. ``descriptor``)
    scores only the tokens overlapping that column's text inside the sentence.
    """
    return _run("likelihood", "auto", prompts, LikelihoodSettings(add_bos=add_bos, span_column=span_column), model=model, **run_options)
