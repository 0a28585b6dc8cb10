"""Demo stage 'likelihood': per-sentence perplexity of HolisticBias sentences under SmolLM2-135M-Instruct.

Scores the demo's HolisticBias sentences (at most 300, spread over the axes) and writes
``likelihoods.parquet`` (``nll_mean``, ``perplexity``, ``n_tokens``), the input of the Likelihood Bias
statistics. Shares the SmolLM2 loaded by the generate stage. Skips with a note when the
``prompts_holistic`` table or the model is missing.
"""

from __future__ import annotations

import statistics

from biaskit.assets import display_name
from biaskit.demo.common import input_table, run_model
from biaskit.demo.stage_generate import MODEL, model_missing, pick_spread
from biaskit.evaluate.runners import likelihood


def run(ctx) -> None:
    prompts = input_table(ctx, "likelihood", "prompts_holistic", "(the templates stage did not write one)")
    if prompts is None:
        return
    n = 300
    subset = pick_spread(prompts, n, group_col="axis")
    done = run_model(ctx, "likelihood", "likelihoods", likelihood, subset, model=MODEL, unavailable=model_missing)
    if done is None:
        return
    ll, secs = done
    ppl = [p for p in ll.column("perplexity").to_pylist() if p is not None]
    errors = ll.num_rows - len(ppl)
    ctx.info["likelihood"] = {
        "model": MODEL,
        "sentences": subset.num_rows,
        "of_sentences": prompts.num_rows,
        "errors": errors,
        "scored": "all tokens but the first (SmolLM2's tokenizer adds no BOS)",
        "seconds": secs,
    }

    med = statistics.median(ppl) if ppl else None  # the mean of the two middle values for an even count
    ctx.note(
        "likelihood",
        f"perplexity of {len(ppl)}/{prompts.num_rows} HolisticBias sentences with {display_name(MODEL)}"
        + (f" (median {med:.1f})" if med is not None else "")
        + f" in {secs} s"
        + (f"; {errors} rows with an error" if errors else ""),
    )
