"""``biaskit score`` and ``biaskit metrics list``: per-text bias metrics over a table."""

from __future__ import annotations

from pathlib import Path

import typer

from biaskit.cli import sub_app
from biaskit.cli.options import ENGINE_OPTIONS, CacheOpt, engine_from_options, grouped
from biaskit.errors import BiaskitError
from biaskit.evaluate.cache import open_cache
from biaskit.evaluate.metrics import make_metric, metric_class, parse_param_args, score_table
from biaskit.evaluate.metrics.cost import estimate
from biaskit.evaluate.metrics.scores_out import params_as_used, scoring_input, write_scores
from biaskit.io import read_table
from biaskit.registry import metrics as reg


@grouped
def score(
    table: Path = typer.Argument(..., help="Table to score (.parquet, .jsonl, .csv or a datasets folder)."),
    metrics: str = typer.Option(..., "--metrics", "-m", help="Comma-separated metric names (see `biaskit metrics list`)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output table (format by suffix); a manifest is written next to it."),
    text_column: str = typer.Option("continuation", "--text-column", help="Column to score (continuation, full_text, text, token, ...)."),
    param: list[str] | None = typer.Option(None, "--param", "-p", help="METRIC.KEY=VALUE, repeatable (e.g. vader.preset=sheng)."),
    batch_size: int | None = typer.Option(
        None, "--batch-size", help="Rows per score() call (default: per metric; --engine ray uses --ray-batch-size)."
    ),
    cache: CacheOpt = None,
    engine: dict = ENGINE_OPTIONS,
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the model cost estimate (tokens in/out) and stop; nothing is loaded or written."),
) -> None:
    """Add metric columns (<metric>_<field>, <metric>_error) to a table; rows are never dropped.

    Example: biaskit score runs/demo/generations.parquet --metrics vader,gender --out scores.parquet

    Example: biaskit score gens.parquet -m toxicity -p toxicity.backend=offline --out tox.parquet

    Example: biaskit score fills.parquet -m honest --text-column token -p honest.mode=word -p honest.lexicon=hurtlex_EN.tsv --out honest.parquet

    Example (Ray, 2 classifier actors): biaskit score gens.parquet -m regard,toxicity --engine ray --ray-actors 2 --out scores.parquet

    Example (classifier answers cached for the next run): biaskit score gens.parquet -m regard --cache runs/cache --out scores.parquet

    Example (an LLM judge, its token estimate first): biaskit score gens.parquet -m judge -p judge.model=smollm2-135m -p judge.orders=2 --dry-run --out judged.parquet
    """
    params = parse_param_args(param or [])
    spec = engine_from_options(**engine)
    t = read_table(table)
    if dry_run:
        return _dry_run(t, metrics, text_column, params)
    # the checks the output will get (types, row key), made before the work: never refuse after scoring, and never
    # write a scores table that fails `biaskit schema scores --check`; a table without prompt_id gets row ids
    t, row_ids = scoring_input(t, source=str(table))
    used: list = []
    facts: dict = {}
    store = open_cache(cache)
    scored = score_table(
        t, metrics, text_column=text_column, params=params, batch_size=batch_size, on_metric=used.append, engine=spec, engine_facts=facts, cache=store
    )
    write_scores(
        scored,
        out,
        used,
        config={"metrics": metrics, "text_column": text_column, "params": params_as_used(params, used), "row_ids_added": row_ids},
        inputs=[table],
        engine_facts=facts,
        cache=store,
    )
    typer.echo(f"scored {scored.num_rows} rows -> {out}")
    for m in used:
        err = scored.column(m.error_column).drop_null()
        typer.echo(f"  {m.name} v{m.version}: {scored.num_rows - len(err)} scored, {len(err)} with {m.error_column}")
        for note in m.notes(scored):
            typer.echo(f"    note: {note}")


def _dry_run(t, metrics: str, text_column: str, params: dict) -> None:
    """Print each metric's cost estimate from the table's texts; builds the metrics without setting them up."""
    names = [m.strip() for m in metrics.split(",") if m.strip()]
    objs = [make_metric(n, text_column, params.get(n)) for n in names]
    if text_column not in t.column_names:
        raise BiaskitError("E001", f"the table has no text column {text_column!r}", value=sorted(t.column_names), fix="pass --text-column")
    est = estimate(objs, t.column(text_column).to_pylist())
    typer.echo(f"dry run: {t.num_rows} rows; nothing loaded, nothing written")
    for n in names:
        e = est.get(n)
        if e is None:
            typer.echo(f"  {n}: no model tokens")
        else:
            typer.echo(
                f"  {n}: ~{e['tokens_in']} tokens in, ~{e['tokens_out']} out over {e['rows']} texts "
                f"({e['prompts_per_row']} prompts per text; {e['method']})"
            )


def list_() -> None:
    """List the metrics with their version, columns, source and parameters.

    Example: biaskit metrics list
    """
    for name in reg.names():
        cls = metric_class(name)
        typer.echo(f"{name} (v{cls.version}): {cls.description}")
        typer.echo(f"  source: {cls.source}")
        typer.echo(f"  columns: {', '.join(cls.declared_columns())}")
        for p in cls.params:
            extra = f" [{'|'.join(p.choices)}]" if p.choices else ""
            dflt = "required" if p.required else f"default {p.default!r}"
            typer.echo(f"  --param {name}.{p.name}=<{p.type}>{extra} ({dflt}): {p.help}")
        typer.echo("")


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the root app."""
    import biaskit.evaluate.metrics._assets  # noqa: F401  (HurtLex assets show up in `biaskit assets`)

    sub_app(app, "metrics", {"list": list_})
    app.command("score")(score)
