"""Demo stage 'likelihood': per-sentence perplexity of HolisticBias sentences under SmolLM2-135M-Instruct.

Scores the demo's HolisticBias sentences (at most 300, spread over the axes) and writes
``likelihoods.parquet`` (``nll_mean``, ``perplexity``, ``n_tokens``), the input of the Likelihood Bias
statistics. Shares the SmolLM2 loaded by the generate stage. Skips with a note when the
``prompts_holistic`` table or the model is missing.
"""

from __future__ import annotations

import time
from pathlib import Path

from biaskit.assets import display_name
from biaskit.demo.stage_generate import MODEL, pick_spread


def run(ctx) -> None:
    from biaskit.errors import BiaskitError
    from biaskit.evaluate.runners import likelihood
    from biaskit.io import read_table

    path = ctx.tables.get("prompts_holistic")
    if path is None or not Path(path).exists():
        ctx.note("likelihood", "skipped: no prompts_holistic table (the templates stage did not write one)")
        return
    prompts = read_table(path)
    n = 300
    subset = pick_spread(prompts, n, group_col="axis")
    out = Path(ctx.run_dir) / "likelihoods.parquet"
    t0 = time.perf_counter()
    try:
        ll = likelihood(subset, model=MODEL, out=out, batch_size="auto", overwrite=True)
    except BiaskitError as exc:
        if exc.code not in ("E010", "E011", "E060"):
            raise
        ctx.note("likelihood", f"skipped: the SmolLM2 model is not available ({exc.fix or exc.what})")
        ctx.info["likelihood"] = {"skipped": str(exc)}
        return
    secs = round(time.perf_counter() - t0, 1)
    ctx.add("likelihoods", out)
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
    import statistics

    med = statistics.median(ppl) if ppl else None  # the mean of the two middle values for an even count
    ctx.note(
        "likelihood",
        f"perplexity of {len(ppl)}/{prompts.num_rows} HolisticBias sentences with {display_name(MODEL)}"
        + (f" (median {med:.1f})" if med is not None else "")
        + f" in {secs} s"
        + (f"; {errors} rows with an error" if errors else ""),
    )
