"""Demo stage 'hub': stage the run's tables as a Hub-ready dataset folder ``<run>/hub``.

One config per table (prompts_bold, prompts_holistic, prompts_slavic, generations, likelihoods, scores,
samples, agreement; annotations split per round). The card is computed from the tables, their manifests
and the run facts in ``ctx.info``; the folder is validated with ``datasets.load_dataset`` per config.
Nothing is uploaded (``biaskit hub push <run>/hub --repo-id ORG/NAME`` does that).
"""

from __future__ import annotations

import json
from typing import Any

#: demo tables staged, in this order; value = column to split by (None: one 'train' split)
TABLES: dict[str, str | None] = {
    "prompts_bold": None,
    "prompts_holistic": None,
    "prompts_slavic": None,
    "generations": None,
    "likelihoods": None,
    "scores": None,
    "samples": "round",
    "annotations": "round",
    "agreement": "round",
}


def _run_facts(ctx) -> dict[str, Any]:
    facts: dict[str, Any] = json.loads(json.dumps(ctx.info, default=str))
    facts["notes"] = {stage: line for stage, line in ctx.summary}
    facts["seed"] = ctx.seed
    facts["quick"] = ctx.quick
    return facts


def run(ctx) -> None:
    from biaskit.datasets.stage import spec_from_path, stage_tables

    specs = []
    for name, split_by in TABLES.items():
        path = ctx.tables.get(name)
        if path is None or not path.exists():
            continue
        spec = spec_from_path(path, name)
        if spec.table.num_rows == 0:
            continue
        if split_by and split_by in spec.table.column_names and spec.table.column(split_by).null_count == 0:
            spec.split_by = split_by
        specs.append(spec)
    if not specs:
        ctx.note("hub", "no tables to stage (earlier stages produced none)")
        return
    out = ctx.run_dir / "hub"
    res = stage_tables(specs, out, pretty_name=f"biaskit demo run (seed {ctx.seed})", info=_run_facts(ctx))
    ctx.add("hub_dir", out)
    rows = sum(c.rows for c in res.configs)
    ctx.info["hub"] = {
        "configs": {c.name: {k: v.rows for k, v in c.splits.items()} for c in res.configs},
        "files": len(res.files),
        "license": res.card_data.get("license"),
    }
    ctx.note(
        "hub",
        f"staged {len(res.configs)} configs ({rows} rows, licence {res.card_data.get('license')}) in hub/; validated with datasets.load_dataset",
    )
