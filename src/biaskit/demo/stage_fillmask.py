"""Demo stage 'fillmask': top-k fill-ins of the West Slavic templates with a masked LM, when one is available.

No masked LM is available offline by default, so this stage runs only when ``BIASKIT_DEMO_MASKED_LM`` names
a local folder or a cached Hub id of a masked LM (e.g. ``xlm-roberta-base``); it then writes ``fillins.parquet``
(top 10 per template). Otherwise it says how to enable it and skips: it never invents fill-ins.
"""

from __future__ import annotations

import os

from biaskit.demo.common import input_table, run_model
from biaskit.evaluate.runners import fill_mask

ENV = "BIASKIT_DEMO_MASKED_LM"


def run(ctx) -> None:
    model = os.environ.get(ENV, "").strip()
    if not model:
        ctx.note(
            "fillmask",
            f"skipped: no masked LM offline; set {ENV} to a local masked-LM folder or a cached Hub id "
            "(e.g. xlm-roberta-base) to fill the template masks",
        )
        ctx.info["fillmask"] = {"skipped": f"{ENV} not set"}
        return
    prompts = input_table(ctx, "fillmask", "prompts_slavic", "(the templates stage did not write one)")
    if prompts is None:
        return
    if "masked" in prompts.column_names:
        import pyarrow.compute as pc

        prompts = prompts.filter(pc.fill_null(prompts.column("masked"), False))
    n = 12 if ctx.quick else 200
    subset = prompts.slice(0, n)
    done = run_model(
        ctx,
        "fillmask",
        "fillins",
        fill_mask,
        subset,
        model=model,
        unavailable=lambda exc: f"{ENV}={model!r} could not be loaded ({exc.what})",
        top_k=10,
    )
    if done is None:
        return
    t, secs = done
    errors = sum(e is not None for e in t.column("error").to_pylist())
    ctx.info["fillmask"] = {"model": model, "templates": subset.num_rows, "top_k": 10, "rows": t.num_rows, "errors": errors, "seconds": secs}
    ctx.note(
        "fillmask",
        f"top-10 fill-ins for {subset.num_rows} templates with {model} in {secs} s" + (f"; {errors} templates with an error" if errors else ""),
    )
