"""Core commands: demo, schema, assets, version."""

from __future__ import annotations

from pathlib import Path

import typer

from biaskit import __version__
from biaskit import assets as a
from biaskit import schema as sch
from biaskit.demo import run_demo
from biaskit.errors import BiaskitError
from biaskit.io import read_table


def demo(
    out: Path = typer.Option(Path("runs/demo"), "--out", "-o", help="Run folder to write."),
    seed: int = typer.Option(0, help="Seed for every random choice in the run."),
    label_studio_url: str | None = typer.Option(
        None,
        "--label-studio-url",
        envvar="LABEL_STUDIO_URL",
        help="Also run an annotation round on this Label Studio server (token from LABEL_STUDIO_API_KEY).",
    ),
    quick: bool = typer.Option(False, "--quick", help="Smaller model workload (for smoke tests)."),
    baseline_span: str = typer.Option(
        "continuation",
        "--baseline-span",
        help="Span scored on the model and the Wikipedia baseline alike: continuation (the model's continuation vs the rest of "
        "the Wikipedia sentence after the prompt) or sentence (prompt + continuation vs the whole sentence).",
    ),
) -> None:
    """Run the whole pipeline on bundled data and write a run folder with tables, manifest and report.

    Example: biaskit demo --out runs/demo

    Example: biaskit demo --out runs/demo --quick
    """
    ctx = run_demo(out, seed=seed, label_studio_url=label_studio_url, quick=quick, baseline_span=baseline_span)
    typer.echo(f"demo run written to {ctx.run_dir}")
    for stage, line in ctx.summary:
        typer.echo(f"  {stage:<10} {line}")


def schema(
    stage: str | None = typer.Argument(None, help="prompts, generations, scores, samples, annotations or agreement"),
    check: Path | None = typer.Option(None, "--check", help="Validate this table file against STAGE."),
) -> None:
    """Show the column schema of a stage table, or check a file against it.

    Example: biaskit schema prompts

    Example: biaskit schema prompts --check runs/demo/prompts_bold.parquet
    """
    if check is not None:
        if not stage:
            raise BiaskitError("E008", "--check needs a STAGE", options=list(sch.STAGES), fix="biaskit schema prompts --check FILE")
        t = read_table(check, stage, keys=True)  # the same validator as every staged write and `hub stage`
        typer.echo(f"ok: {check} is a valid {stage} table ({t.num_rows} rows, {t.num_columns} columns)")
        return
    typer.echo(sch.markdown(stage))


def assets() -> None:
    """List the models (language models, classifiers), lexicons, embeddings and pipelines biaskit knows, and
    where each would resolve from now (environment variable, installed package, cache, download on first
    use) or how to provide it. Nothing is downloaded. The environment variable of each is in brackets.

    Example: biaskit assets
    """
    import biaskit.evaluate.metrics._assets  # noqa: F401  (registers the metrics' lexicons; cheap)

    for name, asset in sorted(a.ASSETS.items()):
        env = f" [{asset.env_var}]" if asset.env_var else ""
        typer.echo(f"{name:<22} {asset.kind:<10} {a.where(name)}{env}")


def version() -> None:
    """Print the biaskit version.

    Example: biaskit version
    """
    typer.echo(__version__)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
    app.command("schema")(schema)
    app.command("assets")(assets)
    app.command("version")(version)
