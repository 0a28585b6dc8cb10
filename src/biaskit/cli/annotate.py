"""``biaskit annotate``: crowd annotation rounds and metric-vs-human agreement (thin wrappers)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

HELP = (
    "Annotation rounds: sample items, push them to Label Studio (or export files for another platform), "
    "pull and validate the labels, compute agreement and validate metrics against the humans.\n\n"
    "Example: biaskit annotate sample runs/demo/scores.parquet --round r1 --task sentiment --n 200 --out r1/samples.parquet\n\n"
    "Example: biaskit annotate push r1/samples.parquet --url http://localhost:8080 --annotators 3"
)

_URL = typer.Option(None, "--url", envvar="LABEL_STUDIO_URL", help="Label Studio URL (or LABEL_STUDIO_URL).")
_LEDGER = typer.Option(None, "--ledger", envvar="BIASKIT_ANNOTATION_LEDGER",
                       help="Round ledger file (default: annotation-rounds.jsonl in the biaskit cache, $BIASKIT_CACHE or ~/.cache/biaskit; "
                            "one already in the working directory is used).")


def _split(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def _write(table, path: Path, stage: str, command: str, config: dict, inputs=(), seed=None) -> Path:
    from biaskit.io import write_table
    from biaskit.manifest import new_manifest

    return write_table(table, path, stage=stage, manifest=new_manifest(command, config=config, seed=seed, inputs=inputs, stage=stage))


def _write_plain(table, path: Path) -> None:
    from biaskit.io import write_table

    write_table(table, path)


def sample(
    scores: Path = typer.Argument(..., help="Scores (or prompts/generations) table: .parquet, .jsonl, .csv or a datasets folder."),
    round_: str = typer.Option(..., "--round", "-r", help="Round name, e.g. r1."),
    task: str = typer.Option("sentiment", "--task", "-t",
                             help="sentiment, regard, toxicity, gender, or a choice set name:a,b,c (name:a<b<c for an ordinal one)."),
    n: int = typer.Option(100, "--n", help="Items to draw (stratified design)."),
    out: Path = typer.Option(..., "--out", "-o", help="Samples table to write (.parquet recommended)."),
    metric: Optional[str] = typer.Option(None, "--metric", help="Metric whose score is binned (default: the task's metric, e.g. vader for sentiment)."),
    strata: Optional[str] = typer.Option(None, "--strata", help="Comma-separated stratum columns (default: source,group when present; '' for none)."),
    bins: int = typer.Option(4, "--bins", help="Score bins per stratum (1 = no score binning)."),
    binning: str = typer.Option("width", "--binning", help="width (equal-width bins over the score range) or quantile."),
    allocation: str = typer.Option("equal", "--allocation", help="equal (same share per stratum) or proportional."),
    per_label: Optional[str] = typer.Option(None, "--per-label", help="Sheng et al. design: e.g. positive=3,negative=3 items per --by value."),
    by: Optional[str] = typer.Option(None, "--by", help="Grouping column for --per-label (e.g. template)."),
    text_column: Optional[str] = typer.Option(None, "--text-column", help="Column to show annotators (default: full_text, else prompt + continuation)."),
    no_mask: bool = typer.Option(False, "--no-mask", help="Do not replace demographic mentions with XYZ."),
    mention: Optional[list[str]] = typer.Option(None, "--mention", help="Extra words to mask (repeatable or comma-separated)."),
    exclude: Optional[list[Path]] = typer.Option(None, "--exclude", help="Samples tables of earlier rounds whose items must not be drawn again."),
    exclude_previous: bool = typer.Option(True, "--exclude-previous/--include-previous",
                                          help="Also exclude the items of the earlier rounds in the ledger."),
    gold: Optional[Path] = typer.Option(None, "--gold", help="Gold items with known answers (CSV/JSONL: text, gold_label)."),
    n_gold: Optional[int] = typer.Option(None, "--n-gold", help="How many gold items to mix in (default: all)."),
    tasks_out: Optional[Path] = typer.Option(None, "--tasks-out", help="Also write task files for other platforms (.csv or .jsonl)."),
    seed: int = typer.Option(0, "--seed", help="Seed of every random choice."),
    ledger: Optional[Path] = _LEDGER,
) -> None:
    """Draw a seeded, stratified sample for an annotation round and mask demographic mentions.

    Example: biaskit annotate sample runs/demo/scores.parquet --round r1 --task sentiment --n 200 --bins 5 --out r1/samples.parquet

    Example: biaskit annotate sample scores.parquet --round r2 --task regard --per-label positive=3,negative=3 --by template --metric vader --out r2/samples.parquet
    """
    from biaskit.annotate import ledger as led
    from biaskit.annotate.files import export_tasks
    from biaskit.annotate.sampling import sample_round
    from biaskit.errors import BiaskitError
    from biaskit.io import read_table

    t = read_table(scores)
    excl, used = _excluded_items(exclude, exclude_previous, ledger, round_)
    pl = _parse_per_label(per_label)
    table, rep = sample_round(
        t, round=round_, task=task, n=n, metric=metric, strata=(None if strata is None else _split([strata])), bins=bins,
        binning=binning, allocation=allocation, per_label=pl, by=by, text_column=text_column, mask=not no_mask,
        extra_mentions=_split(mention), exclude=excl, gold=read_table(gold) if gold else None, n_gold=n_gold, seed=seed)
    if rep.chosen + rep.gold == 0:  # an empty round file (and ledger entry) that push then cannot use
        raise BiaskitError("E091", f"no items to draw from {scores}", value={
            "rows": rep.pool, "without_text": rep.dropped_no_text, "metric_error": rep.dropped_metric_error,
            "duplicates": rep.duplicates, "excluded_earlier_rounds": rep.excluded},
            fix="give a table with texts (full_text, text + continuation, or --text-column) and --n > 0; "
                "items of earlier rounds are excluded (--include-previous)")
    cfg = {"round": round_, "task": task, "n": n, "metric": metric, "strata": strata, "bins": bins, "binning": binning,
           "allocation": allocation, "per_label": pl, "by": by, "mask": not no_mask, "excluded_from": used}
    _write(table, out, "samples", "biaskit annotate sample", {**cfg, "report": rep.as_dict()}, inputs=[scores], seed=seed)
    typer.echo(f"{rep.chosen} items + {rep.gold} gold -> {out} (pool {rep.pool}, excluded {rep.excluded}, "
               f"masked {rep.masked}, strata {len(rep.strata)})")
    if tasks_out:
        f, g = export_tasks(table, tasks_out)
        typer.echo(f"task file {f} and guidelines {g}")
    led.record("sample", round_, ledger, task_type=task, samples=rep.chosen, gold=rep.gold, samples_path=str(out.resolve()), seed=seed,
               strata=len(rep.strata))


def _excluded_items(exclude: Optional[list[Path]], exclude_previous: bool, ledger: Optional[Path], round_: str) -> tuple[set[str], list[str]]:
    """The sample ids earlier rounds drew (from --exclude files and, unless --include-previous, the ledger) and their files."""
    from biaskit.annotate import ledger as led
    from biaskit.errors import BiaskitError
    from biaskit.io import read_table

    excl: set[str] = set()
    used = []
    for e in exclude or []:
        excl.update(read_table(e, "samples").column("sample_id").to_pylist())
        used.append(str(e))
    if exclude_previous:
        latest = {ev.get("round"): ev.get("samples_path") for ev in led.events(ledger)
                  if ev.get("event") == "sample" and ev.get("round") != round_ and ev.get("samples_path")}
        for r_, p in latest.items():
            if not Path(p).exists():  # its items would silently be drawn again
                raise BiaskitError("E092", f"the samples table of earlier round {r_!r} (from the ledger) is gone, so its "
                                           "items cannot be excluded", value=p,
                                   fix="restore the file at that path, or pass --include-previous (and --exclude FILE "
                                       "for each earlier round to keep out)")
            excl.update(read_table(p, "samples").column("sample_id").to_pylist())
            used.append(p)
    return excl, used


def _parse_per_label(per_label: Optional[str]) -> Optional[dict[str, int]]:
    """``positive=3,negative=3`` -> {"positive": 3, "negative": 3} (None when not given)."""
    from biaskit.errors import BiaskitError

    if not per_label:
        return None
    pl = {}
    for part in _split([per_label]):
        if "=" not in part or not part.split("=", 1)[1].isdigit():
            raise BiaskitError("E091", "bad --per-label entry", value=part, fix="use label=count pairs, e.g. positive=3,negative=3")
        k, v = part.split("=", 1)
        pl[k.strip()] = int(v)
    return pl


def export(
    samples: Path = typer.Argument(..., help="Samples table of the round."),
    out: Path = typer.Option(..., "--out", "-o", help="Task file to write: .csv or .jsonl (guidelines go to <out>.guidelines.md)."),
) -> None:
    """Write a round's tasks and guidelines as files for another crowd platform.

    Example: biaskit annotate export r1/samples.parquet --out r1/tasks.csv
    """
    from biaskit.annotate.files import export_tasks
    from biaskit.io import read_table

    f, g = export_tasks(read_table(samples, "samples"), out)
    typer.echo(f"wrote {f} and {g}")


def push_cmd(
    samples: Path = typer.Argument(..., help="Samples table of the round."),
    url: Optional[str] = _URL,
    project: Optional[str] = typer.Option(None, "--project", help="Exact project title (default: 'biaskit <round> (<task>)')."),
    annotators: int = typer.Option(3, "--annotators", help="Annotators per task (the project's maximum_annotations)."),
    batch_size: int = typer.Option(1000, "--batch-size", help="Tasks per import request."),
    pre_annotate: Optional[str] = typer.Option(None, "--pre-annotate", help="Show this metric's label as a pre-annotation (off by default: anchors annotators)."),
    ledger: Optional[Path] = _LEDGER,
) -> None:
    """Create (or find) the round's Label Studio project and import the missing tasks, in batches.

    Safe to rerun: tasks already in the project (same sample_id) are not imported again. The token is read
    from LABEL_STUDIO_API_KEY only (never a command-line argument, where other users and shell history see it).

    Example: export LABEL_STUDIO_API_KEY=...; biaskit annotate push r1/samples.parquet --url http://localhost:8080 --annotators 3
    """
    from biaskit.annotate import ledger as led
    from biaskit.annotate.labelstudio import push
    from biaskit.io import read_table
    from biaskit.log import ProgressBar

    s = read_table(samples, "samples")
    with ProgressBar(s.num_rows, "importing tasks") as bar:
        rep = push(s, url=url, project=project, annotators=annotators, batch_size=batch_size,
                   pre_annotate=pre_annotate, progress=bar.advance)
    typer.echo(rep.summary())
    round_ = s.column("round")[0].as_py() if s.num_rows else "?"
    led.record("push", round_, ledger, url=rep.url, title=rep.title, project_id=rep.project_id, total=rep.total,
               imported=rep.imported, annotators=annotators, pre_annotate=pre_annotate)


def pull_cmd(
    samples: Path = typer.Argument(..., help="Samples table of the round."),
    out: Path = typer.Option(..., "--out", "-o", help="Annotations table to write; rejected records go to <out>.rejected.jsonl."),
    url: Optional[str] = _URL,
    project: Optional[str] = typer.Option(None, "--project", help="Exact project title (default: 'biaskit <round> (<task>)')."),
    results: Optional[Path] = typer.Option(None, "--results", help="Read a result file of another platform (CSV/JSONL: sample_id, annotator, label) instead of Label Studio."),
    allow_fewer: bool = typer.Option(False, "--allow-fewer", help="Replace an existing --out table even when this pull has fewer annotations (default: refuse, error E152)."),
    ledger: Optional[Path] = _LEDGER,
) -> None:
    """Export a round's labels, validate them (labels outside the config, double annotations, empty results) and write the annotations table.

    Example: biaskit annotate pull r1/samples.parquet --url http://localhost:8080 --out r1/annotations.parquet

    Example: biaskit annotate pull r1/samples.parquet --results r1/prolific_results.csv --out r1/annotations.parquet
    """
    from biaskit.annotate import ledger as led
    from biaskit.io import read_table

    s = read_table(samples, "samples")
    extra = {}
    if results is not None:
        from biaskit.annotate.files import read_results

        ann, rej, rep = read_results(results, s)
        platform = "file"
    else:
        from biaskit.annotate.labelstudio import pull

        res = pull(s, url=url, project=project)
        ann, rej, rep = res.annotations, res.rejected, res.report
        platform = "label-studio"
        extra = {"project": res.title, "project_id": res.project_id}
    _refuse_fewer(out, ann.num_rows, allow_fewer, results)
    cfg = {"platform": platform, **extra, "report": rep.as_dict(), "results": str(results) if results else None}
    _write(ann, out, "annotations", "biaskit annotate pull", cfg, inputs=[samples] + ([results] if results else []))
    rej_path = out.parent / (out.name + ".rejected.jsonl")
    if rej.num_rows:
        _write_plain(rej, rej_path)
    elif rej_path.exists():
        rej_path.unlink()  # left by an earlier pull to the same --out: it lists records this pull no longer has
    typer.echo(rep.summary())
    for line in rep.details():
        typer.echo(line)
    if rej.num_rows:
        typer.echo(f"rejected records kept in {rej_path}")
    round_ = s.column("round")[0].as_py() if s.num_rows else "?"
    led.record("pull", round_, ledger, platform=platform, kept=rep.kept, dropped=dict(rep.dropped), items=rep.items,
               annotators=rep.annotators, out=str(out))


def agreement_cmd(
    annotations: Path = typer.Argument(..., help="Annotations table of the round."),
    out: Path = typer.Option(..., "--out", "-o", help="Agreement table to write."),
    samples: Optional[Path] = typer.Option(None, "--samples", help="Samples table (to leave gold items out and score annotators on them)."),
    round_: Optional[str] = typer.Option(None, "--round", "-r", help="Round to use when the table holds several."),
    careless_kappa: float = typer.Option(0.2, "--careless-kappa", help="Flag annotators whose kappa with the others' majority is below this."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for CIs (0 = none)."),
    seed: int = typer.Option(0, "--seed"),
    ledger: Optional[Path] = _LEDGER,
) -> None:
    """Fleiss' kappa, Krippendorff's alpha (nominal/ordinal), pairwise Cohen's kappa, per-annotator agreement with the majority.

    Example: biaskit annotate agreement r1/annotations.parquet --samples r1/samples.parquet --out r1/agreement.parquet
    """
    from biaskit.annotate import ledger as led
    from biaskit.annotate.agreement import agreement, careless_annotators
    from biaskit.io import read_table

    a = read_table(annotations, "annotations", keys=True)  # null or duplicate (sample, round, annotator): E155/E007
    s = read_table(samples, "samples") if samples else None
    t = agreement(a, round=round_, samples=s, careless_kappa=careless_kappa, n_boot=bootstrap, seed=seed)
    _write(t, out, "agreement", "biaskit annotate agreement", {"careless_kappa": careless_kappa, "bootstrap": bootstrap},
           inputs=[annotations] + ([samples] if samples else []), seed=seed)
    _print_table(t)
    bad = careless_annotators(t)
    if bad:
        typer.echo(f"possibly careless annotators (kappa with the others' majority < {careless_kappa}): {', '.join(bad)}")
    round_ = t.column("round")[0].as_py()
    led.record("agreement", round_, ledger, careless=bad, **led.figures(t, ("fleiss_kappa", "krippendorff_alpha_nominal",
               "krippendorff_alpha_ordinal", "cohen_kappa_mean")))


def validate_cmd(
    annotations: Path = typer.Argument(..., help="Annotations table of the round."),
    samples: Path = typer.Option(..., "--samples", help="Samples table of the round (carries the metric columns)."),
    metric: list[str] = typer.Option(..., "--metric", "-m", help="Metric(s) to validate: vader, toxicity, regard, gender, ... (repeatable)."),
    out: Path = typer.Option(..., "--out", "-o", help="Validation rows (agreement-stage table) to write."),
    tie_policy: str = typer.Option("drop", "--tie-policy", help="drop, random or label:<name> for items without a majority."),
    exclude_label: Optional[list[str]] = typer.Option(None, "--exclude-label", help="Drop items whose majority is this label (default: other)."),
    label_column: Optional[str] = typer.Option(None, "--label-column", help="Metric label column (default: <metric>_label)."),
    score_column: Optional[str] = typer.Option(None, "--score-column", help="Metric score column (default per metric, e.g. vader_compound)."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for CIs (0 = none)."),
    calibrate: bool = typer.Option(True, "--calibrate/--no-calibrate", help="Fit score thresholds that best match the humans."),
    objective: str = typer.Option("accuracy", "--objective", help="Calibration objective: accuracy or balanced_accuracy."),
    cv_folds: int = typer.Option(5, "--cv-folds", help="Folds for the cross-validated calibration figure (0 = skip)."),
    seed: int = typer.Option(0, "--seed"),
    ledger: Optional[Path] = _LEDGER,
) -> None:
    """Compare the human majority label with each metric: Spearman, accuracy, weighted P/R/F1, per class, confusion matrix, thresholds.

    Example: biaskit annotate validate r1/annotations.parquet --samples r1/samples.parquet --metric vader --out r1/validation.parquet
    """
    import pyarrow as pa

    from biaskit.annotate import ledger as led
    from biaskit.annotate.validation import validate_metric
    from biaskit.io import read_table

    a = read_table(annotations, "annotations", keys=True)
    s = read_table(samples, "samples")
    excl = _split(exclude_label) if exclude_label else ["other"]
    tables, figs = [], {}
    for m in _split(metric):
        v = validate_metric(a, s, metric=m, tie_policy=tie_policy, exclude_labels=excl, label_column=label_column,
                            score_column=score_column, n_boot=bootstrap, seed=seed, calibrate=calibrate, objective=objective,
                            cv_folds=cv_folds)
        tables.append(v.table)
        typer.echo(f"== {m}: {v.notes[0]}")
        _print_table(v.table, skip_prefix="confusion:")
        if v.classification is not None:
            typer.echo(v.confusion_markdown())
        figs[m] = led.figures(v.table, ("spearman_rho", "accuracy", "f1_weighted", "calibrated_accuracy", "cv_calibrated_accuracy"))
    t = pa.concat_tables(tables)
    _write(t, out, "agreement", "biaskit annotate validate", {"metrics": metric, "tie_policy": tie_policy, "exclude_labels": excl,
           "bootstrap": bootstrap, "calibrate": calibrate, "objective": objective, "cv_folds": cv_folds}, inputs=[annotations, samples], seed=seed)
    led.record("validate", t.column("round")[0].as_py() if t.num_rows else "?", ledger, metrics=figs)


def rounds_cmd(ledger: Optional[Path] = _LEDGER) -> None:
    """Show the history of annotation rounds (sizes, annotators, agreement, validation figures).

    Example: biaskit annotate rounds
    """
    from biaskit.annotate import ledger as led

    hist = led.history(ledger)
    if not hist:
        typer.echo(f"no rounds recorded in {led.ledger_path(ledger)}")
        return
    for r in hist:
        typer.echo(f"{r['round']}: " + ", ".join(f"{k}={_fmt(v)}" for k, v in r.items() if k not in ("round",) and v is not None))


def tasks_cmd(
    task: Optional[str] = typer.Argument(None, help="A task type (or name:a,b,c) to show in full."),
    config: bool = typer.Option(False, "--config", help="Print the Label Studio label config."),
) -> None:
    """List the task types, or show one's labels, guidelines and Label Studio config.

    Example: biaskit annotate tasks regard --config
    """
    from biaskit.annotate.tasks import TASK_TYPES, get_task_type

    if task is None:
        for t in TASK_TYPES.values():
            typer.echo(f"{t.name:<10} {', '.join(t.labels):<40} ordinal: {' < '.join(t.ordinal) or '-'}")
        return
    t = get_task_type(task)
    typer.echo(t.label_config() if config else t.guidelines_markdown())


def register(app: typer.Typer) -> None:
    from biaskit.cli import sub_app
    ann = sub_app("annotate", HELP)
    ann.command('sample')(sample)
    ann.command('export')(export)
    ann.command('push')(push_cmd)
    ann.command('pull')(pull_cmd)
    ann.command('agreement')(agreement_cmd)
    ann.command('validate')(validate_cmd)
    ann.command('rounds')(rounds_cmd)
    ann.command('tasks')(tasks_cmd)


def _refuse_fewer(out: Path, n_new: int, allow: bool, results: Optional[Path]) -> None:
    """An empty or truncated results file (or a server that lost tasks) must not silently shrink a round's labels."""
    if allow or not out.exists():
        return
    from biaskit.errors import BiaskitError
    from biaskit.io import read_table

    src = f"the results file {results}" if results else "Label Studio"
    try:
        n_old = read_table(out).num_rows
    except BiaskitError as exc:
        raise BiaskitError("E152", f"{out} exists but cannot be read ({exc.what}), so this pull ({n_new} annotations from {src}) "
                                   "would replace it blindly", value=str(out),
                           fix="move the file away, or pass --allow-fewer to replace it") from None
    if n_new < n_old:
        raise BiaskitError("E152", f"this pull gives {n_new} annotation(s) from {src}, fewer than the {n_old} already in {out}; "
                                   "the table was not replaced", value=n_new,
                           fix="check the results file (complete, UTF-8, right round) or the server, or pass --allow-fewer "
                               "to replace the table anyway")


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, (list, dict)):
        import json

        return json.dumps(v, ensure_ascii=False)
    return str(v)


def _print_table(t, skip_prefix: str | None = None) -> None:
    for r in t.to_pylist():
        if skip_prefix and r["measure"].startswith(skip_prefix):
            continue
        who = " ".join(x for x in (r.get("annotator"), r.get("annotator_b")) if x)
        v = "null" if r["value"] is None else f"{r['value']:.4f}"
        ci = f" [{r['ci_low']:.3f}, {r['ci_high']:.3f}]" if r.get("ci_low") is not None else ""
        p = f" p={r['p_value']:.3g}" if r.get("p_value") is not None else ""
        err = f" ({r['error']})" if r.get("error") else ""
        typer.echo(f"  {r['measure']:<32} {who:<36} {v}{ci}{p} n={r.get('n_items')}{err}")
