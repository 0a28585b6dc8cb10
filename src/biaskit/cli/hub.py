"""``biaskit hub``: stage tables as a Hub-ready dataset folder, push it, load public bias datasets."""

from __future__ import annotations

from pathlib import Path

import typer

from biaskit.cli import sub_app
from biaskit.datasets.load import load_source
from biaskit.datasets.push import human_size, push_folder
from biaskit.io import write_table
from biaskit.manifest import new_manifest


def stage(
    tables: list[str] = typer.Argument(..., help="Table files (.parquet/.jsonl/.csv/folder), each PATH or NAME=PATH; NAME becomes the config."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder to write (Parquet shards under data/, README.md card)."),
    config_by: str | None = typer.Option(None, "--config-by", help="One config per value of this column (e.g. domain)."),
    split_by: str | None = typer.Option(None, "--split-by", help="One split per value of this column (e.g. round); default: a single 'train' split."),
    license: str | None = typer.Option(None, "--license", help="Licence id for the card (default: computed from the data's sources)."),
    pretty_name: str | None = typer.Option(None, "--pretty-name", help="Title of the dataset card."),
    max_shard_mb: int = typer.Option(500, "--max-shard-mb", min=1, help="Largest Parquet shard (in-memory MB)."),
    no_class_labels: bool = typer.Option(False, "--no-class-labels", help="Keep fixed-label columns as strings instead of ClassLabel."),
) -> None:
    """Stage tables as a Hub-ready dataset folder and check it loads with datasets.load_dataset.

    Example: biaskit hub stage runs/demo/prompts_bold.parquet --out hub/bold --config-by domain

    Example: biaskit hub stage prompts=prompts.parquet annotations=annotations.parquet --out hub/r1 --split-by round
    """
    from biaskit.datasets.stage import stage_paths

    res = stage_paths(
        tables,
        out,
        config_by=config_by,
        split_by=split_by,
        license=license,
        pretty_name=pretty_name,
        max_shard_bytes=max_shard_mb << 20,
        class_labels=not no_class_labels,
    )
    typer.echo(
        f"staged {len(res.configs)} config(s), {sum(c.rows for c in res.configs)} rows, licence {res.card_data.get('license')} -> {res.folder}"
    )
    for c in res.configs:
        splits = ", ".join(f"{k}={v.rows}" for k, v in c.splits.items())
        typer.echo(f"  {c.name:<32} {splits}")
    typer.echo("validated with datasets.load_dataset (every config/split: Features and row counts match the card)")


def push(
    folder: Path = typer.Argument(..., help="Folder written by `biaskit hub stage`."),
    repo_id: str = typer.Option(..., "--repo-id", help="Dataset repository ORG/NAME (created if missing)."),
    private: bool = typer.Option(False, "--private", help="Create the repository as private."),
    revision: str | None = typer.Option(None, "--revision", help="Branch to commit to (created if missing; default main)."),
    message: str | None = typer.Option(None, "--message", "-m", help="Commit message."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Validate and list the files and sizes; upload nothing (no token needed)."),
) -> None:
    """Upload a staged folder to the Hub. Token: HF_TOKEN or `hf auth login` (never an argument).

    Interrupted? Rerun the same command: files already on the Hub are skipped.

    Example: biaskit hub push hub/bold --repo-id my-org/bold-demo --dry-run

    Example: HF_TOKEN=... biaskit hub push runs/demo/hub --repo-id my-org/biaskit-demo --private --revision v1
    """
    from biaskit.log import quiet

    if quiet():
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    res = push_folder(folder, repo_id, private=private, revision=revision, message=message, dry_run=dry_run)
    if dry_run:
        typer.echo(f"dry run: would upload {len(res.files)} files ({human_size(res.total_bytes)}) to datasets/{repo_id} @ {res.revision}")
        for f in res.files:
            typer.echo(f"  {human_size(f.size):>10}  {f.path}")
        return
    typer.echo(
        f"pushed {len(res.uploaded)} file(s) in {len(res.commits)} commit(s) to {res.url} @ {res.revision}; {len(res.skipped)} already on the Hub"
    )


def load(
    source: str = typer.Argument(
        ...,
        help="Path (BOLD checkout, sentences.csv, HONEST .tsv, West Slavic template_sentences.xlsx, CrowS-Pairs .csv, staged folder) "
        "or Hub id (AlexaAI/bold).",
    ),
    out: Path = typer.Option(..., "--out", "-o", help="Table to write (.parquet/.jsonl/.csv)."),
    kind: str | None = typer.Option(
        None,
        "--kind",
        help="biaskit, bold_github, bold_hub, holistic_csv, honest, westslavic_xlsx, lm_eval, bbq_jsonl or crows_pairs (default: detected).",
    ),
    config: str | None = typer.Option(None, "--config", help="Config of a staged/Hub dataset."),
    split: str | None = typer.Option(None, "--split", help="Split of a staged/Hub dataset (default: all, concatenated)."),
    revision: str | None = typer.Option(None, "--revision", help="Hub revision."),
    language: str | None = typer.Option(
        None, "--language", help="HONEST: language code when the file name does not say; West Slavic .xlsx: only this language's sheet (cs, pl, sk)."
    ),
    domain: list[str] | None = typer.Option(None, "--domain", help="BOLD: only these domains (repeatable)."),
    keep_empty: bool = typer.Option(False, "--keep-empty", help="BOLD: keep empty prompts (default: drop and count them)."),
    subjects: Path | None = typer.Option(
        None, "--subjects", help="West Slavic .xlsx: your subject list (YAML/JSON) replacing the bundled one for the languages it names."
    ),
) -> None:
    """Load a public bias dataset (or one staged/pushed with biaskit) into a biaskit table.

    Example: biaskit hub load path/to/bold --out bold_prompts.parquet

    Example: biaskit hub load en_template.tsv --out honest_en.parquet

    Example: biaskit hub load runs/demo/hub --config prompts_bold --out prompts_bold.parquet

    Example: biaskit hub load template_sentences.xlsx --out prompts.parquet --subjects my_subjects.yaml

    Example (BBQ's published examples, predictions kept): biaskit hub load BBQ/data/Age.jsonl --out bbq_age.parquet
    Example: biaskit hub load src/biaskit/data/crows_pairs/crows_pairs_anonymized.csv --out crows.parquet

    A West Slavic spreadsheet (sheets Czech/Polish/Slovak) is imported row by row: rows it cannot use are
    listed (sheet, row, reason) and the import goes on.
    """
    res = load_source(
        source, kind=kind, config=config, split=split, revision=revision, language=language, domains=domain, keep_empty=keep_empty, subjects=subjects
    )
    man = new_manifest(
        "biaskit hub load",
        stage=res.stage,
        config={
            "source": source,
            "kind": res.kind,
            "config": config,
            "split": split,
            "revision": revision,
            "language": language,
            "domains": domain,
            "keep_empty": keep_empty,
            "subjects": str(subjects) if subjects else None,
        },
        inputs=[source] + ([str(subjects)] if subjects else []) if Path(source).is_file() else [],
        extra={"filtered": dict(res.filtered), "facts": res.facts},
    )
    write_table(res.table, out, stage=res.stage, manifest=man)
    dropped = f"; dropped {dict(res.filtered)}" if res.filtered else ""
    typer.echo(f"loaded {res.table.num_rows} rows ({res.kind}) -> {out}{dropped}")
    if res.facts.get("skipped_sheets"):
        typer.echo(f"skipped sheet(s) not named after cs/pl/sk (or not asked for): {', '.join(res.facts['skipped_sheets'])}")
    if res.kind == "westslavic_xlsx":
        null = res.facts.get("category_null") or {}
        typer.echo(
            f"subject category null in {sum(null.values())} row(s)"
            + (f" ({', '.join(f'{k}: {v}' for k, v in null.items())})" if null else "")
            + "; reasons in the category_reason column"
        )
    problems = res.facts.get("problems") if isinstance(res.facts.get("problems"), list) else []
    if problems:
        typer.echo(f"{len(problems)} row(s) with problems (all listed in the output manifest):")
        for pr in problems[:20]:
            typer.echo(f"  {pr['sheet']} row {pr['row']}: {pr['reason']} ({'kept' if pr['kept'] else 'left out'}): {pr['text']!r}")
        if len(problems) > 20:
            typer.echo(f"  ... {len(problems) - 20} more")


def register(app: typer.Typer) -> None:
    hub = sub_app(app, "hub")
    hub.command("stage")(stage)
    hub.command("push")(push)
    hub.command("load")(load)
