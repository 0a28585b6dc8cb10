"""Model-runner commands: ``biaskit generate``, ``biaskit fill-mask``, ``biaskit likelihood``.

Thin wrappers over :mod:`biaskit.evaluate.runners`; torch/transformers are imported only when a command runs.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import typer

from biaskit.cli import sub_app
from biaskit.cli.options import (
    ENDPOINT_OPTIONS,
    ENGINE_OPTIONS,
    MODEL_RUN_OPTIONS,
    RUN_OPTIONS,
    BackendOpt,
    ModelRevisionOpt,
    RevisionOpt,
    engine_from_options,
    grouped,
)
from biaskit.errors import BiaskitError
from biaskit.evaluate.runners.api import fill_mask, likelihood
from biaskit.evaluate.runners.builtin import describe_backends
from biaskit.evaluate.runners.common import FillMaskSettings, GenerationSettings, LikelihoodSettings, system_prompt_text
from biaskit.evaluate.runners.core import run_facts
from biaskit.evaluate.runners.options import RunOptions

#: the defaults of the endpoint options: an option left at its default is not passed to the backend, so only
#: an option the user set can be refused by a backend that does not take it (E312)
_ENDPOINT_DEFAULTS = ENDPOINT_OPTIONS.defaults


def _backend_options(backend: str, **given: object) -> dict:
    """The backend constructor options the user set: ``None``/``False``/endpoint defaults are left out
    (``--base-url`` from $OPENAI_BASE_URL only counts for the openai backend)."""
    opts = {k: v for k, v in given.items() if v is not None and v is not False and _ENDPOINT_DEFAULTS.get(k, object()) != v}
    if backend != "openai" and opts.get("base_url") == os.environ.get("OPENAI_BASE_URL"):
        opts.pop("base_url", None)  # the environment variable is meant for the openai backend
    return opts


def _run_options(model: str, backend: str, backend_options: dict, engine: dict, run: dict) -> RunOptions:
    """The :class:`~biaskit.evaluate.runners.options.RunOptions` of a runner command from its model, backend, the
    backend constructor options it set, and its engine and run option groups; the command adds the options of
    its own (``out``, ``batch_size``, ``device``, ``dtype``, ``cache``, ``--backend-option``) by name."""
    return RunOptions(
        model,
        backend=backend,
        backend_options=backend_options,
        engine=engine_from_options(**engine),
        limit=run["limit"],
        overwrite=run["overwrite"],
        retry_errors=run["retry_errors"],
    )


def _model_run_options(base: RunOptions, out: Path, model_run: dict) -> RunOptions:
    """``base`` with the command's ``--out`` and its model-run option group (``MODEL_RUN_OPTIONS``) filled in."""
    return replace(
        base,
        out=out,
        batch_size=model_run["batch_size"],
        device=model_run["device"],
        dtype=model_run["dtype"],
        cache=model_run["cache"],
        backend_option=model_run["backend_option"] or (),
    )


def _summary(kind: str, table, out: Path) -> None:
    errs = sum(e is not None for e in table.column("error").to_pylist())
    prompts = len(set(table.column("prompt_id").to_pylist()))
    facts = run_facts(table)
    msg = (
        f"{kind}: {table.num_rows} rows for {prompts} prompts "
        + ("already complete in" if facts.get("already_complete") else "written to")
        + f" {out}"
    )
    retried = facts.get("retried_error_rows") or 0
    if retried:
        msg += f"; {retried} rows that had an error were run again"
    if errs:
        msg += f" ({errs} rows with an error; see the error column; rerunning the command retries rows whose model call failed)"
    typer.echo(msg)


@grouped
def generate_cmd(
    prompts: Path = typer.Argument(..., help="Prompts table (.parquet, .jsonl, .csv or a datasets folder) with prompt_id and text."),
    model: str = typer.Option(
        "smollm2-135m", "--model", "-m", help="Model: biaskit asset, Hub id, local folder or .gguf file (hf), or the served model name (openai)."
    ),
    out: Path = typer.Option(..., "--out", "-o", help="Output generations table. Rerunning the same command resumes a killed run."),
    backend: BackendOpt = "hf",
    seed: int = typer.Option(0, "--seed", help="Base seed; each (prompt, sample) gets its own generator from it."),
    max_new_tokens: int = typer.Option(20, "--max-new-tokens", help="Tokens to generate per continuation."),
    sample: bool = typer.Option(False, "--sample/--greedy", help="Sample (seeded) instead of greedy decoding."),
    temperature: float = typer.Option(1.0, "--temperature", help="Sampling temperature (with --sample)."),
    top_k: int | None = typer.Option(None, "--top-k", help="Top-k sampling (BOLD: 40)."),
    top_p: float | None = typer.Option(None, "--top-p", help="Nucleus sampling (BOLD: 0.95)."),
    repetition_penalty: float | None = typer.Option(None, "--repetition-penalty", help="CTRL-style repetition penalty (BOLD used 1.2 for CTRL)."),
    num_return_sequences: int = typer.Option(1, "--num-return-sequences", "-n", help="Samples per prompt (needs --sample)."),
    first_sentence: bool = typer.Option(False, "--first-sentence", help="Cut each continuation after its first sentence (Sheng et al.)."),
    chat: bool = typer.Option(False, "--chat", help="The same as --format chat."),
    prompt_format: str | None = typer.Option(
        None,
        "--format",
        help="raw (the prompt as it is, default) or chat (a user turn in the tokenizer's chat template; /v1/chat/completions "
        "with --backend openai). Recorded in generation_config and the prompt_format column.",
    ),
    system_prompt: str | None = typer.Option(
        None, "--system-prompt", help="With --format chat: a system turn before each prompt (TEXT, or a FILE holding it)."
    ),
    keep_trailing_space: bool = typer.Option(
        False, "--keep-trailing-space", help="Feed prompts with their trailing spaces (default: cut before tokenising; see docs/runners.md)."
    ),
    model_run: dict = MODEL_RUN_OPTIONS,
    run: dict = RUN_OPTIONS,
    revision: RevisionOpt = None,
    trust_remote_code: bool = typer.Option(False, "--trust-remote-code", help="Allow custom model code from the Hub."),
    endpoint: dict = ENDPOINT_OPTIONS,
    model_revision: ModelRevisionOpt = None,
    engine: dict = ENGINE_OPTIONS,
) -> None:
    """Continue each prompt with a causal LM: one row per (prompt, sample) in a generations table.

    Example: biaskit generate runs/demo/prompts_bold.parquet --model smollm2-135m --max-new-tokens 20 --out gens.parquet

    Example (BOLD sampling, 5 samples each): biaskit generate prompts.parquet --model gpt2 --sample --top-k 40 --top-p 0.95 -n 5 --seed 1 --out gens.parquet

    Example (vLLM server): biaskit generate prompts.parquet --backend openai --base-url http://127.0.0.1:8000/v1 --model meta-llama/Llama-3.1-8B --out gens.parquet

    Example (Ray cluster, 4 GPU actors): biaskit generate prompts.parquet --model gpt2 --engine ray --ray-address ray://head:10001 --ray-actors 4 --ray-gpus 1 --out gens.parquet

    Example (a backend's declared option): biaskit generate prompts.parquet --backend openai --base-url http://127.0.0.1:8000/v1 --model m --backend-option concurrency=16 --out gens.parquet

    Example (chat template with a system prompt, answers cached): biaskit generate prompts.parquet --model smollm2-135m --format chat --system-prompt "You are a helpful assistant." --cache runs/cache --out gens_chat.parquet
    """
    from biaskit.evaluate.runners.api import generate

    if chat and prompt_format not in (None, "chat"):
        raise BiaskitError("E313", "--chat and --format raw contradict each other", value=prompt_format, fix="give one of --chat or --format")
    settings = GenerationSettings(
        seed=seed,
        max_new_tokens=max_new_tokens,
        do_sample=sample,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        repetition_penalty=repetition_penalty,
        num_return_sequences=num_return_sequences,
        first_sentence=first_sentence,
        prompt_format=prompt_format or ("chat" if chat else "raw"),
        system_prompt=system_prompt_text(system_prompt),
        strip_trailing_space=not keep_trailing_space,
    )
    backend_options = _backend_options(backend, **endpoint, revision=revision, trust_remote_code=trust_remote_code, model_revision=model_revision)
    base = _run_options(model, backend, backend_options, engine, run)
    options = _model_run_options(base, out, model_run)
    table = generate(str(prompts), settings, options)
    _summary("generate", table, out)


@grouped
def fill_mask_cmd(
    prompts: Path = typer.Argument(..., help="Templates table with prompt_id and text holding one <mask> (or [MASK]) slot."),
    model: str = typer.Option(..., "--model", "-m", help="Masked LM: Hub id (e.g. bert-base-cased, xlm-roberta-base) or local folder."),
    out: Path = typer.Option(..., "--out", "-o", help="Output table: top_k rows per prompt (token, token_score, rank)."),
    backend: BackendOpt = "hf",
    top_k: int = typer.Option(10, "--top-k", "-k", help="Fill-ins per prompt (HONEST uses 5, 10 or 20)."),
    whole_word: bool = typer.Option(False, "--whole-word", help="Only whole words: no ## subword pieces, punctuation or special tokens."),
    max_subwords: int = typer.Option(
        1,
        "--max-subwords",
        help="1: single-token fill-ins; N > 1: whole words of 1..N subword tokens (beam search, ranked by pseudo-log-likelihood).",
    ),
    beam_size: int | None = typer.Option(
        None, "--beam-size", help="With --max-subwords > 1: partial fill-ins kept per length (default max(10, top-k))."
    ),
    pll: str = typer.Option(
        "original", "--pll", help="With --max-subwords > 1: original (mask each piece alone) or word_l2r (mask the piece and the pieces after it)."
    ),
    model_run: dict = MODEL_RUN_OPTIONS,
    run: dict = RUN_OPTIONS,
    revision: RevisionOpt = None,
    engine: dict = ENGINE_OPTIONS,
) -> None:
    """Top-k fill-ins of each template's mask slot with a masked LM (HONEST-style completion).

    Example: biaskit fill-mask runs/demo/prompts_slavic.parquet --model xlm-roberta-base --top-k 20 --out fillins.parquet

    Example: biaskit fill-mask templates.jsonl --model ./my-bert --top-k 10 --whole-word --out fillins.parquet

    Example (whole words of up to 3 pieces): biaskit fill-mask prompts_slavic.parquet --model xlm-roberta-base --max-subwords 3 --out fillins.parquet
    Example (local Ray, 2 actors): biaskit fill-mask templates.jsonl --model bert-base-cased --engine ray --ray-actors 2 --out fillins.parquet

    Example (remote model code allowed): biaskit fill-mask templates.jsonl --model ./my-bert --backend hf --backend-option trust_remote_code=true --out fillins.parquet

    Example (answers cached for the next run): biaskit fill-mask templates.jsonl --model ./my-bert --top-k 10 --cache runs/cache --out fillins.parquet
    """
    settings = FillMaskSettings(top_k=top_k, whole_word=whole_word, max_subwords=max_subwords, beam_size=beam_size, pll=pll)
    base = _run_options(model, backend, _backend_options(backend, revision=revision), engine, run)
    options = _model_run_options(base, out, model_run)
    table = fill_mask(str(prompts), settings, options)
    _summary("fill-mask", table, out)


@grouped
def likelihood_cmd(
    prompts: Path = typer.Argument(..., help="Sentences table with prompt_id and text (e.g. HolisticBias sentences)."),
    model: str = typer.Option("smollm2-135m", "--model", "-m", help="Causal LM (NLL/perplexity) or masked LM (pseudo-log-likelihood)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output table with nll_mean, perplexity and n_tokens per sentence."),
    backend: BackendOpt = "hf",
    span_column: str | None = typer.Option(
        None, "--span-column", help="Score only the tokens of this column's text inside the sentence (e.g. descriptor_span)."
    ),
    bos: str = typer.Option(
        "auto", "--bos", help="auto (as the tokenizer does), yes (put BOS/EOS first so every word is scored) or no (first token is context only)."
    ),
    model_run: dict = MODEL_RUN_OPTIONS,
    run: dict = RUN_OPTIONS,
    revision: RevisionOpt = None,
    endpoint: dict = ENDPOINT_OPTIONS,
    model_revision: ModelRevisionOpt = None,
    engine: dict = ENGINE_OPTIONS,
) -> None:
    """Per-sentence mean negative log-likelihood and perplexity (HolisticBias Likelihood Bias).

    Example: biaskit likelihood runs/demo/prompts_holistic.parquet --model smollm2-135m --out likelihoods.parquet

    Example (descriptor span only): biaskit likelihood holistic.parquet --model gpt2 --span-column descriptor_span --bos yes --out ll.parquet

    Example (Ray cluster from $RAY_ADDRESS): biaskit likelihood holistic.parquet --model gpt2 --engine ray --ray-actors 8 --ray-batch-size 128 --out ll.parquet

    Example (an endpoint's retry waits): biaskit likelihood holistic.parquet --backend openai --base-url http://127.0.0.1:8000/v1 --model m --backend-option backoff=0.5 --backend-option max_backoff=10 --out ll.parquet

    Example (answers cached for the next run): biaskit likelihood runs/demo/prompts_holistic.parquet --model smollm2-135m --cache runs/cache --out likelihoods.parquet
    """
    choice = {"auto": None, "yes": True, "no": False}
    if bos not in choice:
        raise BiaskitError("E062", "invalid --bos", value=bos, options=list(choice))
    backend_options = _backend_options(backend, **endpoint, revision=revision, model_revision=model_revision)
    base = _run_options(model, backend, backend_options, engine, run)
    options = _model_run_options(base, out, model_run)
    table = likelihood(str(prompts), LikelihoodSettings(add_bos=choice[bos], span_column=span_column), options)
    _summary("likelihood", table, out)


def backends_list() -> None:
    """List the model backends: where each comes from, the kinds it runs, whether it can judge, and the options
    it declares for --backend-option (type, default, help).

    Example: biaskit backends list
    """
    typer.echo("\n".join(describe_backends()))


def register(app: typer.Typer) -> None:
    """Attach generate, fill-mask and likelihood to the root app, and ``backends list``."""
    sub_app(app, "backends", {"list": backends_list})
    app.command("generate")(generate_cmd)
    app.command("fill-mask")(fill_mask_cmd)
    app.command("likelihood")(likelihood_cmd)
