"""``biaskit score`` and ``biaskit metrics list``: per-text bias metrics over a table."""

from __future__ import annotations

from pathlib import Path

import typer

from biaskit.cli.options import (
    EngineOpt,
    RayActorsOpt,
    RayAddressOpt,
    RayBatchSizeOpt,
    RayCpusOpt,
    RayGpusOpt,
    engine_from_options,
)


def score(
    table: Path = typer.Argument(..., help="Table to score (.parquet, .jsonl, .csv or a datasets folder)."),
    metrics: str = typer.Option(..., "--metrics", "-m", help="Comma-separated metric names (see `biaskit metrics list`)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output table (format by suffix); a manifest is written next to it."),
    text_column: str = typer.Option("continuation", "--text-column", help="Column to score (continuation, full_text, text, token, ...)."),
    param: list[str] | None = typer.Option(None, "--param", "-p", help="METRIC.KEY=VALUE, repeatable (e.g. vader.preset=sheng)."),
    batch_size: int | None = typer.Option(
        None, "--batch-size", help="Rows per score() call (default: per metric; --engine ray uses --ray-batch-size)."
    ),
    engine: EngineOpt = "local",
    ray_address: RayAddressOpt = None,
    ray_actors: RayActorsOpt = 1,
    ray_batch_size: RayBatchSizeOpt = 64,
    ray_gpus: RayGpusOpt = None,
    ray_cpus: RayCpusOpt = 1.0,
) -> None:
    """Add metric columns (<metric>_<field>, <metric>_error) to a table; rows are never dropped.

    Example: biaskit score runs/demo/generations.parquet --metrics vader,gender --out scores.parquet

    Example: biaskit score gens.parquet -m toxicity -p toxicity.backend=offline --out tox.parquet

    Example: biaskit score fills.parquet -m honest --text-column token -p honest.mode=word -p honest.lexicon=hurtlex_EN.tsv --out honest.parquet

    Example (Ray, 2 classifier actors): biaskit score gens.parquet -m regard,toxicity --engine ray --ray-actors 2 --out scores.parquet
    """
    from biaskit.evaluate.metrics import parse_param_args, score_table
    from biaskit.io import read_table, write_table
    from biaskit.manifest import new_manifest

    params = parse_param_args(param or [])
    spec = engine_from_options(engine, ray_address, ray_actors, ray_batch_size, ray_gpus, ray_cpus)
    t = read_table(table)
    from biaskit.schema import validate

    # the checks the output will get (required prompt_id, types, row key), made before the work: never refuse
    # after scoring, and never write a scores table that fails `biaskit schema scores --check`
    validate(t, "scores", where=str(table), keys=True)
    used = []
    facts: dict = {}
    scored = score_table(
        t, metrics, text_column=text_column, params=params, batch_size=batch_size, on_metric=used.append, engine=spec, engine_facts=facts
    )
    manifest = new_manifest(
        "biaskit score",
        config={"metrics": metrics, "text_column": text_column, "params": params},
        inputs=[table],
        stage="scores",
        extra={"metrics": [m.describe() for m in used], "engine": facts or {"engine": "local"}},
    )
    write_table(scored, out, stage="scores", manifest=manifest)
    typer.echo(f"scored {scored.num_rows} rows -> {out}")
    for m in used:
        err = scored.column(m.error_column).drop_null()
        typer.echo(f"  {m.name} v{m.version}: {scored.num_rows - len(err)} scored, {len(err)} with {m.error_column}")


def list_() -> None:
    """List the metrics with their version, columns, source and parameters.

    Example: biaskit metrics list
    """
    from biaskit.evaluate.metrics import metric_class
    from biaskit.registry import metrics as reg

    for name in reg.names():
        cls = metric_class(name)
        typer.echo(f"{name} (v{cls.version}): {cls.description}")
        typer.echo(f"  source: {cls.source}")
        typer.echo(f"  columns: {', '.join(_columns(cls))}")
        for p in cls.params:
            extra = f" [{'|'.join(p.choices)}]" if p.choices else ""
            dflt = "required" if p.required else f"default {p.default!r}"
            typer.echo(f"  --param {name}.{p.name}=<{p.type}>{extra} ({dflt}): {p.help}")
        typer.echo("")


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the root app."""
    import biaskit.evaluate.metrics._assets  # noqa: F401  (HurtLex assets show up in `biaskit assets`)

    metrics_app = typer.Typer(
        name="metrics", help="The registered per-text metrics.", no_args_is_help=True, add_completion=False, rich_markup_mode="rich"
    )
    app.add_typer(metrics_app, name="metrics")
    app.command("score")(score)
    metrics_app.command("list")(list_)


def _columns(cls) -> list[str]:
    """Declared output columns without loading anything (data-dependent ones shown as patterns)."""
    fixed = {
        "toxicity": ["score", "label", "<label> (per model label, backend=hf)"],
        "norms": ["<dim>", "<dim>_class", "coverage", "n_predicted (with extension)"],
        "gender": ["unigram_label", "wavg", "wavg_label", "max", "max_label"],
    }
    if cls.name in fixed:
        fields = fixed[cls.name]
    else:
        try:
            fields = list(cls.fields(cls.__new__(cls)))
        except Exception:  # pragma: no cover - a metric whose fields need setup
            fields = ["..."]
    return [f"{cls.name}_{f}" for f in fields] + [f"{cls.name}_error"]
