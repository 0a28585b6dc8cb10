"""``biaskit train``: learn a metric from labelled data (e.g. an annotation round)."""

from __future__ import annotations

from pathlib import Path

import typer

from biaskit.cli import sub_app
from biaskit.cli.options import DeviceOpt
from biaskit.errors import BiaskitError
from biaskit.io import read_table
from biaskit.train.classifier import train_classifier
from biaskit.train.config import TrainConfig
from biaskit.train.data import labelled_data, majority_labels


def classifier_cmd(
    table: Path = typer.Argument(..., help="Labelled table (text + label columns), or an annotations table with --samples."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder: model, tokenizer, README.md (model card), metrics.json."),
    samples: Path | None = typer.Option(
        None, "--samples", help="TABLE is a round's annotations: take the human majority label per item and the text from this samples table."
    ),
    aggregated: Path | None = typer.Option(
        None,
        "--aggregated-labels",
        help="With --samples: take each item's label from this labels table (biaskit annotate aggregate) instead of the majority vote.",
    ),
    text_column: str = typer.Option("text", "--text-column", help="Column holding the text."),
    label_column: str = typer.Option("label", "--label-column", help="Column holding the label."),
    labels: str | None = typer.Option(
        None, "--labels", help="Classes in order (ordinal order for ordinal tasks): a,b,c or RAW=NAME pairs, e.g. -1=negative,0=neutral,1=positive."
    ),
    drop_label: list[str] | None = typer.Option(None, "--drop-label", help="Label value to drop (repeatable), e.g. other or 2 as Sheng et al. did."),
    nominal: bool = typer.Option(False, "--nominal", help="The --labels order is not ordinal (no ordinal score when scoring)."),
    split: str | None = typer.Option(
        None, "--split", help="train/dev/test as counts (212/60/30) or fractions (0.7/0.2/0.1); stratified. Default 0.7/0.2/0.1."
    ),
    split_column: str | None = typer.Option(
        None,
        "--split-column",
        help="Use the table's own split: this column's values train/validation/test (e.g. a released train/dev/test split) instead of --split.",
    ),
    runs: int = typer.Option(5, "--runs", help="Runs with different seeds; mean and sd are reported."),
    resplit: bool = typer.Option(False, "--resplit", help="A new split per run (seed + run) instead of one split for all runs."),
    seed: int = typer.Option(0, "--seed", help="Seed of the split and of the runs."),
    base_model: str | None = typer.Option(
        None, "--base-model", help="Encoder to fine-tune: folder or Hub id (default: the packaged all-MiniLM-L6-v2)."
    ),
    epochs: int = typer.Option(10, "--epochs", help="Most epochs per run."),
    patience: int = typer.Option(3, "--patience", help="Stop after this many epochs without a better dev figure."),
    lr: float = typer.Option(5e-5, "--lr", help="Learning rate (AdamW)."),
    batch_size: int = typer.Option(16, "--batch-size", help="Training batch size."),
    max_length: int = typer.Option(128, "--max-length", help="Truncate texts to this many tokens."),
    select: str = typer.Option("macro_f1", "--select", help="Dev figure for early stopping and the saved run: macro_f1 or accuracy."),
    device: DeviceOpt = "auto",
    baselines: str = typer.Option(
        "majority,vader,tfidf_logreg", "--baselines", help="Baselines on the same split (comma list; empty for none; judge: the LLM judge metric)."
    ),
    judge_param: list[str] | None = typer.Option(
        None, "--judge-param", help="KEY=VALUE for the judge baseline, repeatable (e.g. model=smollm2-135m); task defaults to the data's labels."
    ),
    vader_map: str | None = typer.Option(
        None, "--vader-map", help="VADER label -> class, e.g. positive=pos,neutral=neu,negative=neg (default: by name or ordinal order)."
    ),
    vader_rule: str = typer.Option(
        "vader-sheng-0.05", "--vader-rule", help="The VADER baseline's labelling rule: vader-sheng-0.05 (+-0.05, first sentence) or vader-bold-0.5."
    ),
    data_license: str = typer.Option("unknown", "--data-license", help="Licence of the labelled data (goes into the model card)."),
    baselines_only: bool = typer.Option(False, "--baselines-only", help="Only the baselines (no fine-tuning, no model written)."),
    task: str | None = typer.Option(
        None, "--task", help="What the labels annotate, named in the model card (e.g. 'regard'); default: the label column and classes."
    ),
    threads: int | None = typer.Option(
        None, "--threads", help="Torch CPU threads while fine-tuning (default 1: fastest measured for small encoders, docs/train.md)."
    ),
) -> None:
    """Fine-tune a text classifier with the protocol of Sheng et al. 2019 (stratified train/dev/test split, several runs,
    early stopping on dev) and compare it with a majority, a VADER and a TF-IDF + logistic regression baseline on the same split.
    The folder plugs into `biaskit score --metrics classifier -p classifier.model=OUT` (and `-p regard.model=OUT` for
    regard labels) and `annotate validate --metric classifier`.

    Example: biaskit train classifier labelled.csv --text-column text --label-column label --labels -1=negative,0=neutral,1=positive --drop-label 2 --split 212/60/30 --runs 5 --out models/regard

    Example: biaskit train classifier r1/annotations.parquet --samples r1/samples.parquet --labels negative,neutral,positive --drop-label other --out models/r1

    Example (a released split, column split = train/validation/test): biaskit train classifier regard.csv --labels -1=negative,0=neutral,1=positive --drop-label 2 --split-column split --out models/regard

    Example (the LLM judge as a baseline): biaskit train classifier labelled.csv --labels negative,neutral,positive --baselines majority,judge --judge-param model=smollm2-135m --baselines-only --out models/look
    """
    _check_options(aggregated, samples, split, split_column)
    t = read_table(table)
    if samples is not None:
        t = majority_labels(t, read_table(samples, "samples"), text_column=text_column, label_table=read_table(aggregated) if aggregated else None)
        text_col, label_col = "text", "label"
    else:
        text_col, label_col = text_column, label_column
    drops = [x.strip() for d in (drop_label or []) for x in d.split(",") if x.strip()]
    data = labelled_data(
        t,
        text_column=text_col,
        label_column=label_col,
        labels=labels,
        drop_labels=drops,
        ordinal=False if nominal else None,
        split_column=split_column,
    )
    cfg = TrainConfig(
        base_model=base_model,
        split=split or "0.7/0.2/0.1",
        runs=runs,
        seed=seed,
        resplit=resplit,
        epochs=epochs,
        patience=patience,
        lr=lr,
        batch_size=batch_size,
        max_length=max_length,
        select=select,
        device=device,
        baselines=tuple(b.strip() for b in baselines.split(",") if b.strip()),
        vader_map=vader_map,
        vader_rule=vader_rule,
        judge_params={k: v for k, _, v in (x.partition("=") for x in judge_param or [])} or None,
        threads=threads,
    )
    res = train_classifier(
        data,
        out,
        cfg,
        source=table.name + (f" + {samples.name}" if samples else ""),
        data_license=data_license,
        text_column=text_col,
        label_column=label_col,
        finetune=not baselines_only,
        task=task,
    )
    _print_result(res)
    for w in res.warnings:
        typer.echo(f"warning: {w}")
    typer.echo(f"wrote {out}/ (model card README.md, metrics.json)")


def _check_options(aggregated: Path | None, samples: Path | None, split: str | None, split_column: str | None) -> None:
    """Options that do not go together are E254."""
    if aggregated is not None and samples is None:
        raise BiaskitError(
            "E254",
            "--aggregated-labels needs --samples (the round's samples table, for the texts)",
            value=str(aggregated),
            fix="add --samples r1/samples.parquet",
        )
    if split_column is not None and split is not None:
        raise BiaskitError(
            "E254",
            "--split-column takes the table's own split; --split draws a new one",
            value=f"--split {split} --split-column {split_column}",
            fix="leave out --split (the column decides) or --split-column (a stratified split)",
        )
    if split_column is not None and samples is not None:
        raise BiaskitError(
            "E254",
            "--split-column needs a labelled table; an annotation round (--samples) has no split column",
            value=split_column,
            fix="export the round's labels to a table with a train/validation/test column, or leave out --split-column",
        )


def register(app: typer.Typer) -> None:
    """Attach the ``train`` group to the root app."""
    train = sub_app(app, "train")
    train.command("classifier")(classifier_cmd)


def _print_result(res) -> None:
    """Counts, split and the mean (± sd) test figures of the fine-tuned model and each baseline."""
    m = res.metrics
    typer.echo(
        f"{m['n_used']} labelled texts ({', '.join(f'{k} {v}' for k, v in m['class_counts'].items())}); "
        f"split {m['split']['train']}/{m['split']['dev']}/{m['split']['test']}; {len(m['runs'])} runs"
    )
    for s, v in res.summary.items():

        def f(x):
            return "n/a" if x is None else f"{100 * x:.1f}"

        sd = "" if v["accuracy_sd"] is None else f" ± {f(v['accuracy_sd'])}"
        sdf = "" if v["macro_f1_sd"] is None else f" ± {f(v['macro_f1_sd'])}"
        typer.echo(
            f"  {s:13s} accuracy {f(v['accuracy_mean'])}{sd}  macro F1 {f(v['macro_f1_mean'])}{sdf}" + (f"  ({v['error']})" if v.get("error") else "")
        )
