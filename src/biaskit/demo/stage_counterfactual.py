"""Demo stage 'counterfactual': gender counterfactual pairs of the BOLD-style prompts, continued and scored.

Builds the pairs table of the ``prompts_bold`` prompts on the ``gender`` axis (``biaskit templates counterfactual``;
spaCy's readings of her/his when the English pipeline loads, else the word-list baseline, said in the note), keeps
the first pairs by ``pair_id`` (``ctx.quick``: 3, else 12), continues every variant with the generate stage's
model and settings, and scores the continuations with VADER. Writes ``counterfactual_pairs.parquet``,
``counterfactual_generations.parquet`` and ``counterfactual_scores.parquet``; the report's "Counterfactual pairs"
section reads the last. Without prompts, without a gendered prompt, or without the model, it says so and skips.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from biaskit.demo.common import input_table, run_model
from biaskit.demo.stage_generate import MODEL, model_missing
from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics import make_metric, score_table
from biaskit.evaluate.metrics.scores_out import write_scores
from biaskit.evaluate.runners import generate
from biaskit.io import write_table
from biaskit.manifest import new_manifest
from biaskit.templates.counterfactual import load_axis
from biaskit.templates.counterfactual_swap import Swapper, counterfactual_table, load_swap_nlp

AXIS = "gender"


def _nlp():
    try:
        return load_swap_nlp("en"), "spaCy readings of her/his"
    except BiaskitError as exc:
        return None, f"word-list baseline (spaCy not available: {exc.code})"


def _first_pairs(pairs: pa.Table, n: int) -> pa.Table:
    import pyarrow.compute as pc

    ids = sorted(set(pairs.column("pair_id").to_pylist()))[:n]
    return pairs.filter(pc.is_in(pairs.column("pair_id"), pa.array(ids)))


def run(ctx) -> None:
    prompts = input_table(ctx, "counterfactual", "prompts_bold", "(the scrape stage did not write one)")
    if prompts is None:
        return
    nlp, how = _nlp()
    try:
        pairs, stats = counterfactual_table(prompts, Swapper(load_axis(AXIS), nlp))
    except BiaskitError as exc:
        if exc.code != "E423":
            raise
        ctx.note("counterfactual", f"skipped: no prompt has a word of the {AXIS} axis")
        return
    n, max_new = (3, 8) if ctx.quick else (12, 24)
    subset = _first_pairs(pairs, n)
    path = Path(ctx.run_dir) / "counterfactual_pairs.parquet"
    manifest = new_manifest("biaskit demo: counterfactual", stage="prompts", extra={"counterfactual": stats.as_dict()})
    write_table(subset, path, stage="prompts", manifest=manifest)
    ctx.add("counterfactual_pairs", path)
    sampling = {"do_sample": True, "top_k": 40, "top_p": 0.95, "max_new_tokens": max_new, "seed": ctx.seed}
    done = run_model(ctx, "counterfactual", "counterfactual_generations", generate, subset, model=MODEL, unavailable=model_missing, **sampling)
    if done is None:
        return
    gens, secs = done
    vader = make_metric("vader", "continuation", {})
    scored = score_table(gens, [vader], progress=False)
    out = Path(ctx.run_dir) / "counterfactual_scores.parquet"
    write_scores(scored, out, [vader], command="biaskit demo: counterfactual", config={"axis": AXIS}, inputs=[path], seed=ctx.seed)
    ctx.add("counterfactual_scores", out)
    n_pairs = len(set(subset.column("pair_id").to_pylist()))
    ctx.info["counterfactual"] = {
        "axis": AXIS,
        "swap": how,
        "pairs_built": stats.pairs,
        "pairs_used": n_pairs,
        "no_swappable_word": len(stats.unswapped_rows),
        "seconds": secs,
    }
    ctx.note(
        "counterfactual",
        f"{stats.pairs} gender pairs from {stats.rows} prompts ({len(stats.unswapped_rows)} without a gendered word, listed in the "
        f"manifest; {how}); {n_pairs} pairs ({subset.num_rows} variants) continued with {MODEL} in {secs} s and scored with VADER",
    )
