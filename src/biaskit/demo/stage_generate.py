"""Demo stage 'generate': continue a subset of the BOLD-style prompts with the offline SmolLM2-135M-Instruct.

BOLD's GPT-2 settings (seeded sampling, top-k 40, top-p 0.95) on about 32 prompts spread over the groups,
24 new tokens each (``ctx.quick``: 6 prompts, 8 tokens), batched on the CPU. Writes ``generations.parquet``.
The model is loaded once per process and shared with the likelihood stage (runner model cache).
Without a ``prompts_bold`` table, or without the SmolLM2 asset, the stage says so and skips.
"""

from __future__ import annotations

import pyarrow as pa

from biaskit.assets import display_name
from biaskit.demo.common import input_table, run_model

MODEL = "smollm2-135m"


def pick_spread(table, n: int, group_col: str = "group"):
    """``n`` rows taken round-robin over the values of ``group_col`` (deterministic: prompt_id order)."""
    ids = table.column("prompt_id").to_pylist()
    groups = table.column(group_col).to_pylist() if group_col in table.column_names else [None] * table.num_rows
    by: dict = {}
    for i in sorted(range(table.num_rows), key=lambda i: str(ids[i])):
        by.setdefault(groups[i], []).append(i)
    keys = sorted(by, key=lambda g: "" if g is None else str(g))
    picked: list[int] = []
    depth = 0
    while len(picked) < min(n, table.num_rows):
        for g in keys:
            if depth < len(by[g]) and len(picked) < n:
                picked.append(by[g][depth])
        depth += 1
    return table.take(pa.array(sorted(picked), type=pa.int64()))


def model_missing(exc) -> str:
    """The note of a stage that skips because SmolLM2 cannot be loaded."""
    return f"the SmolLM2 model is not available ({exc.fix or exc.what})"


def run(ctx) -> None:
    from biaskit.evaluate.runners import generate

    prompts = input_table(ctx, "generate", "prompts_bold", "(the scrape stage did not write one)")
    if prompts is None:
        return
    n, max_new = (6, 8) if ctx.quick else (32, 24)
    subset = pick_spread(prompts, n)
    sampling = {"do_sample": True, "top_k": 40, "top_p": 0.95, "max_new_tokens": max_new, "seed": ctx.seed}
    settings = {"model": MODEL, **sampling, "batch_size": "auto"}
    done = run_model(ctx, "generate", "generations", generate, subset, model=MODEL, unavailable=model_missing, **sampling)
    if done is None:
        return
    gens, secs = done
    errors = sum(e is not None for e in gens.column("error").to_pylist())
    ctx.info["generate"] = {
        **settings,
        "prompts": subset.num_rows,
        "of_prompts": prompts.num_rows,
        "rows": gens.num_rows,
        "errors": errors,
        "model_revision": gens.column("model_revision")[0].as_py(),
        "seconds": secs,
    }
    ctx.note(
        "generate",
        f"{gens.num_rows} continuations of {subset.num_rows}/{prompts.num_rows} BOLD prompts with {display_name(MODEL)} "
        f"(top-k 40, top-p 0.95, {max_new} tokens, seed {ctx.seed}) in {secs} s" + (f"; {errors} rows with an error" if errors else ""),
    )
