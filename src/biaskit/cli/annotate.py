"""``biaskit annotate``: crowd annotation rounds and metric-vs-human agreement (thin wrappers)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import typer

from biaskit.annotate import ledger as led
from biaskit.annotate.files import export_tasks, read_results
from biaskit.annotate.labelmodels import CrowdWarning, LabelModelWarning, aggregate
from biaskit.annotate.labelstudio import pull, push
from biaskit.annotate.ledger import earlier_items
from biaskit.annotate.planning import plan_round, quotas, read_plan
from biaskit.annotate.ppiplan import plan_ppi_files
from biaskit.annotate.rounds import RoundReuseWarning, save_round
from biaskit.annotate.sampling import sample_round
from biaskit.annotate.spans import scored_from_manifest
from biaskit.annotate.tasks import TASK_TYPES, get_task_type
from biaskit.cli import sub_app
from biaskit.errors import BiaskitError
from biaskit.io import check_out_suffix, read_table, write_table, write_text_atomic
from biaskit.log import ProgressBar
from biaskit.manifest import new_manifest
from biaskit.ownership import check_side_file

_URL = typer.Option(None, "--url", envvar="LABEL_STUDIO_URL", help="Label Studio URL (or LABEL_STUDIO_URL).")
_LEDGER = typer.Option(
    None,
    "--ledger",
    envvar="BIASKIT_ANNOTATION_LEDGER",
    help="Round ledger file (default: annotation-rounds.jsonl in the biaskit cache, $BIASKIT_CACHE or ~/.cache/biaskit; "
    "one already in the working directory is used).",
)


def _split(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def _write(table, path: Path, stage: str, command: str, config: dict, inputs=(), seed=None) -> Path:
    return write_table(table, path, stage=stage, manifest=new_manifest(command, config=config, seed=seed, inputs=inputs, stage=stage))


def _write_plain(table, path: Path) -> None:
    write_table(table, path)


def sample(
    scores: Path = typer.Argument(..., help="Scores (or prompts/generations) table: .parquet, .jsonl, .csv or a datasets folder."),
    round_: str = typer.Option(..., "--round", "-r", help="Round name, e.g. r1."),
    task: str = typer.Option(
        "sentiment", "--task", "-t", help="sentiment, regard, toxicity, gender, or a choice set name:a,b,c (name:a<b<c for an ordinal one)."
    ),
    n: int = typer.Option(100, "--n", help="Items to draw (stratified design)."),
    out: Path = typer.Option(..., "--out", "-o", help="Samples table to write (.parquet recommended)."),
    metric: str | None = typer.Option(None, "--metric", help="Metric whose score is binned (default: the task's metric, e.g. vader for sentiment)."),
    strata: str | None = typer.Option(None, "--strata", help="Comma-separated stratum columns (default: source,group when present; '' for none)."),
    bins: int = typer.Option(4, "--bins", help="Score bins per stratum (1 = no score binning)."),
    binning: str = typer.Option("width", "--binning", help="width (equal-width bins over the score range) or quantile."),
    allocation: str = typer.Option("equal", "--allocation", help="equal (same share per stratum) or proportional."),
    per_label: str | None = typer.Option(None, "--per-label", help="Sheng et al. design: e.g. positive=3,negative=3 items per --by value."),
    by: str | None = typer.Option(None, "--by", help="Grouping column for --per-label (e.g. template)."),
    text_column: str | None = typer.Option(None, "--text-column", help="Column to show annotators (default: full_text, else prompt + continuation)."),
    no_mask: bool = typer.Option(False, "--no-mask", help="Do not replace demographic mentions with XYZ."),
    mention: list[str] | None = typer.Option(None, "--mention", help="Extra words to mask (repeatable or comma-separated)."),
    exclude: list[Path] | None = typer.Option(None, "--exclude", help="Samples tables of earlier rounds whose items must not be drawn again."),
    exclude_previous: bool = typer.Option(
        True, "--exclude-previous/--include-previous", help="Also exclude the items of the earlier rounds in the ledger."
    ),
    gold: Path | None = typer.Option(None, "--gold", help="Gold items with known answers (CSV/JSONL: text, gold_label)."),
    n_gold: int | None = typer.Option(None, "--n-gold", help="How many gold items to mix in (default: all)."),
    tasks_out: Path | None = typer.Option(None, "--tasks-out", help="Also write task files for other platforms (.csv or .jsonl)."),
    seed: int = typer.Option(0, "--seed", help="Seed of every random choice."),
    plan: Path | None = typer.Option(None, "--plan", help="Round plan (biaskit annotate plan): draw its per-group counts instead of --n/--strata."),
    prefer: str = typer.Option(
        "random", "--prefer", help="With --plan: random, or uncertain (items the metric is least sure about, or where metrics disagree, first)."
    ),
    ledger: Path | None = _LEDGER,
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace the samples table of an earlier round that --out holds (the ledger's)."),
) -> None:
    """Draw a seeded, stratified sample for an annotation round and mask demographic mentions.

    Example: biaskit annotate sample runs/demo/scores.parquet --round r2 --task sentiment --plan r1/plan.json --prefer uncertain --out r2/samples.parquet

    Example: biaskit annotate sample runs/demo/scores.parquet --round r1 --task sentiment --n 200 --bins 5 --out r1/samples.parquet

    Example: biaskit annotate sample scores.parquet --round r2 --task regard --per-label positive=3,negative=3 --by template --metric vader --out r2/samples.parquet
    """
    t = read_table(scores)
    excl, used = earlier_items(exclude or [], ledger, round_=round_, pool=scores, previous=exclude_previous)
    pl = _parse_per_label(per_label)
    quota, quota_by, metric = _plan_quota(plan, prefer, metric, task)
    table, rep = sample_round(
        t,
        round=round_,
        task=task,
        n=n,
        metric=metric,
        strata=(None if strata is None else _split([strata])),
        bins=bins,
        binning=binning,
        allocation=allocation,
        per_label=pl,
        by=by,
        text_column=text_column,
        mask=not no_mask,
        extra_mentions=_split(mention),
        exclude=excl,
        gold=read_table(gold) if gold else None,
        n_gold=n_gold,
        seed=seed,
        quota=quota,
        quota_by=quota_by,
        prefer=prefer,
        **scored_from_manifest(scores, metric, task),
    )
    _check_drawn(rep, quota, scores)
    cfg = {
        "round": round_,
        "task": task,
        "n": n,
        "metric": metric,
        "strata": strata,
        "bins": bins,
        "binning": binning,
        "allocation": allocation,
        "per_label": pl,
        "by": by,
        "mask": not no_mask,
        "excluded_from": used,
        "plan": str(plan) if plan else None,
        "prefer": prefer,
    }
    _save_round(table, rep, cfg, out=out, scores=scores, seed=seed, tasks_out=tasks_out, ledger=ledger, overwrite=overwrite)


def _save_round(
    table, rep, cfg: dict, *, out: Path, scores: Path, seed: int, tasks_out: Path | None, ledger: Path | None, overwrite: bool = False
) -> None:
    """Write the samples table (with its manifest), the optional task file, and the round's ledger entry
    (:func:`biaskit.annotate.rounds.save_round`, which the demo calls too)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RoundReuseWarning)
        entry = save_round(table, rep, cfg, out=out, pool=scores, seed=seed, ledger=ledger, tasks_out=tasks_out, overwrite=overwrite)
    typer.echo(
        f"{rep.chosen} items + {rep.gold} gold -> {out} (pool {rep.pool}, excluded {rep.excluded}, masked {rep.masked}, strata {len(rep.strata)})"
    )
    if entry.get("tasks"):
        f, g = entry["tasks"]
        typer.echo(f"task file {f} and guidelines {g}")
    for w in caught:
        typer.echo(f"warning[{w.category.__name__}]: {w.message}", err=True)


def _plan_quota(plan: Path | None, prefer: str, metric: str | None, task: str | None = None) -> tuple:
    """(per-group quota, its grouping column, metric) from ``--plan``; ``--prefer`` needs a plan."""
    if plan is None:
        if prefer != "random":
            raise BiaskitError("E256", "--prefer needs --plan", value=prefer, fix="add --plan plan.json (biaskit annotate plan)")
        return None, None, metric

    pl_ = read_plan(plan, get_task_type(task) if task else None)
    return quotas(pl_), pl_["group_by"], metric or pl_.get("metric")


def _check_drawn(rep, quota, scores: Path) -> None:
    """Warn about groups the plan could not fill; refuse a round with nothing drawn."""
    if quota is not None:
        short = {k: v for k, v in rep.strata.items() if v.get("chosen", 0) < v.get("planned", 0)}
        for k, v in short.items():
            typer.echo(f"warning: {k}: planned {v['planned']}, only {v['chosen']} unlabelled items available")
    if rep.chosen + rep.gold == 0:  # an empty round file (and ledger entry) that push then cannot use
        raise BiaskitError(
            "E091",
            f"no items to draw from {scores}",
            value={
                "rows": rep.pool,
                "without_text": rep.dropped_no_text,
                "metric_error": rep.dropped_metric_error,
                "duplicates": rep.duplicates,
                "excluded_earlier_rounds": rep.excluded,
            },
            fix="give a table with texts (full_text, text + continuation, or --text-column) and --n > 0; "
            "items of earlier rounds are excluded (--include-previous)",
        )


def _print_validation(m: str, v, by_: str | None) -> None:
    """One metric's validation on the console: its figures, confusion matrix and per-group rows."""
    rule = next((r for r in (v.table.column("scored_rule").to_pylist() if v.table.num_rows else []) if r), None)
    spans = {k: (v.table.column(k)[0].as_py() if v.table.num_rows else None) for k in ("shown_span", "scored_span")}
    typer.echo(f"== {m}" + (f" ({rule})" if rule and rule != m else "") + f": {v.notes[0]}")
    if spans["shown_span"] or spans["scored_span"]:
        typer.echo(f"   text shown: {spans['shown_span'] or 'not recorded'}; text scored: {spans['scored_span'] or 'not recorded'}")
    for note in v.notes[1:]:
        if note.startswith("re-scored"):
            typer.echo(f"   {note}")
    _print_table(v.table, skip_prefix=("confusion:", "diff_", "ratio_", "group_"))
    if v.classification is not None:
        typer.echo(v.confusion_markdown())
    if by_:
        _print_groups(v.table)


def _parse_per_label(per_label: str | None) -> dict[str, int] | None:
    """``positive=3,negative=3`` -> {"positive": 3, "negative": 3} (None when not given)."""
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
    f, g = export_tasks(read_table(samples, "samples"), out)
    typer.echo(f"wrote {f} and {g}")


def push_cmd(
    samples: Path = typer.Argument(..., help="Samples table of the round."),
    url: str | None = _URL,
    project: str | None = typer.Option(None, "--project", help="Exact project title (default: 'biaskit <round> (<task>)')."),
    annotators: int = typer.Option(3, "--annotators", help="Annotators per task (the project's maximum_annotations)."),
    batch_size: int = typer.Option(1000, "--batch-size", help="Tasks per import request."),
    pre_annotate: str | None = typer.Option(
        None, "--pre-annotate", help="Show this metric's label as a pre-annotation (off by default: anchors annotators)."
    ),
    ledger: Path | None = _LEDGER,
) -> None:
    """Create (or find) the round's Label Studio project and import the missing tasks, in batches.

    Safe to rerun: tasks already in the project (same sample_id) are not imported again. The token is read
    from LABEL_STUDIO_API_KEY only (never a command-line argument, where other users and shell history see it).

    Example: export LABEL_STUDIO_API_KEY=...; biaskit annotate push r1/samples.parquet --url http://localhost:8080 --annotators 3
    """
    s = read_table(samples, "samples")
    with ProgressBar(s.num_rows, "importing tasks") as bar:
        rep = push(s, url=url, project=project, annotators=annotators, batch_size=batch_size, pre_annotate=pre_annotate, progress=bar.advance)
    typer.echo(rep.summary())
    round_ = s.column("round")[0].as_py() if s.num_rows else "?"
    led.record_push(round_, ledger, samples, rep, annotators=annotators, pre_annotate=pre_annotate)


def pull_cmd(
    samples: Path = typer.Argument(..., help="Samples table of the round."),
    out: Path = typer.Option(..., "--out", "-o", help="Annotations table to write; rejected records go to <out>.rejected.jsonl."),
    url: str | None = _URL,
    project: str | None = typer.Option(None, "--project", help="Exact project title (default: 'biaskit <round> (<task>)')."),
    results: Path | None = typer.Option(
        None, "--results", help="Read a result file of another platform (CSV/JSONL: sample_id, annotator, label) instead of Label Studio."
    ),
    allow_fewer: bool = typer.Option(
        False, "--allow-fewer", help="Replace an existing --out table even when this pull has fewer annotations (default: refuse, error E152)."
    ),
    ledger: Path | None = _LEDGER,
) -> None:
    """Export a round's labels, validate them (labels outside the config, double annotations, empty results) and write the annotations table.

    Example: biaskit annotate pull r1/samples.parquet --url http://localhost:8080 --out r1/annotations.parquet

    Example: biaskit annotate pull r1/samples.parquet --results r1/prolific_results.csv --out r1/annotations.parquet
    """
    s = read_table(samples, "samples")
    extra = {}
    if results is not None:
        ann, rej, rep = read_results(results, s)
        platform = "file"
    else:
        res = pull(s, url=url, project=project)
        ann, rej, rep = res.annotations, res.rejected, res.report
        platform = "label-studio"
        extra = {"project": res.title, "project_id": res.project_id, "ground_truth": res.ground_truth.num_rows if res.ground_truth is not None else 0}
        if extra["ground_truth"]:
            typer.echo(f"{extra['ground_truth']} ground-truth annotation(s) (gold answers) kept apart from the crowd's labels")
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
    led.record(
        "pull",
        round_,
        ledger,
        **led.round_ref(samples, ledger),
        platform=platform,
        kept=rep.kept,
        dropped=dict(rep.dropped),
        items=rep.items,
        annotators=rep.annotators,
        out=str(out),
    )


def agreement_cmd(
    annotations: Path = typer.Argument(..., help="Annotations table of the round."),
    out: Path = typer.Option(..., "--out", "-o", help="Agreement table to write."),
    samples: Path | None = typer.Option(None, "--samples", help="Samples table (to leave gold items out and score annotators on them)."),
    round_: str | None = typer.Option(None, "--round", "-r", help="Round to use when the table holds several."),
    careless_kappa: float = typer.Option(0.2, "--careless-kappa", help="Flag annotators whose kappa with the others' majority is below this."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for CIs (0 = none)."),
    labels: Path | None = typer.Option(
        None, "--labels", help="Labels table of a label model (biaskit annotate aggregate): adds each annotator's agreement with it."
    ),
    seed: int = typer.Option(0, "--seed"),
    ledger: Path | None = _LEDGER,
) -> None:
    """Fleiss' kappa, Krippendorff's alpha (nominal/ordinal), pairwise Cohen's kappa, per-annotator agreement with the majority.

    Example: biaskit annotate agreement r1/annotations.parquet --samples r1/samples.parquet --out r1/agreement.parquet
    """
    from biaskit.annotate.agreement import agreement, careless_annotators

    a = read_table(annotations, "annotations", keys=True)  # null or duplicate (sample, round, annotator): E155/E007
    s = read_table(samples, "samples") if samples else None
    with _crowd_warnings():
        t = agreement(
            a, round=round_, samples=s, careless_kappa=careless_kappa, n_boot=bootstrap, seed=seed, labels=read_table(labels) if labels else None
        )
    _write(
        t,
        out,
        "agreement",
        "biaskit annotate agreement",
        {"careless_kappa": careless_kappa, "bootstrap": bootstrap, "labels": str(labels) if labels else None},
        inputs=[annotations] + ([samples] if samples else []) + ([labels] if labels else []),
        seed=seed,
    )
    _print_table(t)
    bad = careless_annotators(t)
    if bad:
        typer.echo(f"possibly careless annotators (kappa with the others' majority < {careless_kappa}): {', '.join(bad)}")
    round_ = t.column("round")[0].as_py()
    led.record(
        "agreement",
        round_,
        ledger,
        **led.round_ref(samples, ledger),
        careless=bad,
        **led.figures(t, ("fleiss_kappa", "krippendorff_alpha_nominal", "krippendorff_alpha_ordinal", "cohen_kappa_mean")),
    )


def validate_cmd(
    annotations: Path = typer.Argument(..., help="Annotations table of the round."),
    samples: Path = typer.Option(..., "--samples", help="Samples table of the round (carries the metric columns)."),
    metric: list[str] = typer.Option(
        ...,
        "--metric",
        "-m",
        help="Metric(s) to validate: vader, toxicity, regard, gender, ..., or a VADER rule: vader-bold-0.5, vader-sheng-0.05 (repeatable).",
    ),
    out: Path = typer.Option(..., "--out", "-o", help="Validation rows (agreement-stage table) to write."),
    tie_policy: str = typer.Option("drop", "--tie-policy", help="drop, random or label:<name> for items without a majority."),
    exclude_label: list[str] | None = typer.Option(None, "--exclude-label", help="Drop items whose majority is this label (default: other)."),
    label_column: str | None = typer.Option(None, "--label-column", help="Metric label column (default: <metric>_label)."),
    score_column: str | None = typer.Option(None, "--score-column", help="Metric score column (default per metric, e.g. vader_compound)."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for CIs (0 = none)."),
    calibrate: bool = typer.Option(True, "--calibrate/--no-calibrate", help="Fit score thresholds that best match the humans."),
    objective: str = typer.Option("accuracy", "--objective", help="Calibration objective: accuracy or balanced_accuracy."),
    cv_folds: int = typer.Option(5, "--cv-folds", help="Folds for the cross-validated calibration figure (0 = skip)."),
    by: str | None = typer.Option(
        None,
        "--by",
        help="Samples column to split the items by (group, domain, source, language, template): per-group rates and pairwise tests. Default: group when the samples have it; '' for none.",
    ),
    labels: Path | None = typer.Option(
        None, "--labels", help="Labels table of a label model (biaskit annotate aggregate) to use instead of the majority vote."
    ),
    seed: int = typer.Option(0, "--seed"),
    ledger: Path | None = _LEDGER,
) -> None:
    """Compare the human majority label with each metric: Spearman, accuracy, weighted P/R/F1, per class, confusion matrix, thresholds;
    with --by, the same per group, and every pair of groups compared (difference, ratio, permutation p, Holm-corrected).

    Example: biaskit annotate validate r1/annotations.parquet --samples r1/samples.parquet --metric vader --out r1/validation.parquet

    Example: biaskit annotate validate r1/annotations.parquet --samples r1/samples.parquet --metric vader --by group --labels r1/labels.parquet --out r1/validation.parquet

    Example (both VADER rules, the shown text re-scored): biaskit annotate validate r1/annotations.parquet --samples r1/samples.parquet --metric vader-bold-0.5 --metric vader-sheng-0.05 --out r1/validation.parquet
    """
    from biaskit.annotate.validation import validate_metrics

    a = read_table(annotations, "annotations", keys=True)
    s = read_table(samples, "samples")
    excl = _split(exclude_label) if exclude_label else ["other"]
    by_ = ("group" if "group" in s.column_names else None) if by is None else (by or None)
    lab_t = read_table(labels) if labels else None
    with _crowd_warnings():
        t, vals = validate_metrics(
            a,
            s,
            _split(metric),
            tie_policy=tie_policy,
            exclude_labels=excl,
            label_column=label_column,
            score_column=score_column,
            n_boot=bootstrap,
            seed=seed,
            calibrate=calibrate,
            objective=objective,
            cv_folds=cv_folds,
            by=by_,
            labels=lab_t,
        )
    for m, v in vals.items():
        _print_validation(m, v, by_)
    _write(
        t,
        out,
        "agreement",
        "biaskit annotate validate",
        {
            "metrics": metric,
            "tie_policy": tie_policy,
            "exclude_labels": excl,
            "bootstrap": bootstrap,
            "calibrate": calibrate,
            "objective": objective,
            "cv_folds": cv_folds,
            "by": by_,
            "labels": str(labels) if labels else None,
        },
        inputs=[annotations, samples] + ([labels] if labels else []),
        seed=seed,
    )
    led.record_validation(ledger, samples, vals, by=by_)


def aggregate_cmd(
    annotations: Path = typer.Argument(..., help="Annotations table of the round."),
    out: Path = typer.Option(
        ..., "--out", "-o", help="Labels table to write (one row per item); the per-annotator table goes to <out stem>.annotators.parquet."
    ),
    method: str = typer.Option("dawid-skene", "--method", help="majority, dawid-skene, glad, mace or wawa."),
    samples: Path | None = typer.Option(None, "--samples", help="Samples table (gold items become known answers)."),
    task: str | None = typer.Option(
        None, "--task", "-t", help="Task type whose label set the labels must come from (default: the table's task_type)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed (MACE's restarts)."),
) -> None:
    """One label per item from the crowd's labels with a label model (crowd-kit), plus each annotator's estimated skill.

    Example: biaskit annotate aggregate r1/annotations.parquet --samples r1/samples.parquet --method dawid-skene --out r1/labels.parquet
    """
    a = read_table(annotations, "annotations", keys=True)
    s = read_table(samples, "samples") if samples else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LabelModelWarning)  # printed below from res.warnings
        res = aggregate(a, method=method, samples=s, task=task, seed=seed)
    for w in res.warnings:
        typer.echo(f"warning[LabelModelWarning]: {w}")
    cfg = {"method": method, "task": task, "seed": seed}

    ins = [annotations] + ([samples] if samples else [])
    ann_out = out.with_name(out.stem + ".annotators" + (out.suffix or ".parquet"))
    check_side_file(ann_out, beside=out)  # a file of the user's there is never replaced (E006)
    write_table(res.labels, out, manifest=new_manifest("biaskit annotate aggregate", config=cfg, seed=seed, inputs=ins))
    write_table(res.annotators, ann_out, manifest=new_manifest("biaskit annotate aggregate", config=cfg, seed=seed, inputs=ins))
    lab = res.labels.column("label").to_pylist()
    conf = [c for c in res.labels.column("confidence").to_pylist() if c is not None]
    typer.echo(
        f"{method}: {len(lab)} items labelled ({sum(res.labels.column('is_gold').to_pylist())} gold), mean confidence "
        f"{(sum(conf) / len(conf)) if conf else float('nan'):.3f} -> {out}; annotators -> {ann_out}"
    )
    for r in sorted(res.annotators.to_pylist(), key=lambda r: (r["skill"] is None, r["skill"] or 0)):
        sk = "null" if r["skill"] is None else f"{r['skill']:.3f}"
        typer.echo(f"  {r['annotator']:<36} skill {sk}  n={r['n_annotations']}")


def plan_cmd(
    validation: Path | None = typer.Option(None, "--validation", help="Validation table with per-group rows (annotate validate --by)."),
    out: Path = typer.Option(..., "--out", "-o", help="Plan file to write (JSON)."),
    target_ci: float = typer.Option(0.05, "--target-ci", help="Target 95% CI half-width of the per-group rate (or of the PPI share with --ppi)."),
    rate: str = typer.Option("accuracy", "--rate", help="accuracy or miss_rate_<label> (e.g. miss_rate_negative)."),
    metric: str | None = typer.Option(None, "--metric", help="Metric to plan for when the table holds several."),
    ppi: Path | None = typer.Option(
        None, "--ppi", help="PPI view: the scored table; plans the human labels the PPI++ share of --label needs per --by group."
    ),
    metric_column: str | None = typer.Option(None, "--metric-column", help="With --ppi: the metric's label column (e.g. vader_label)."),
    label: str | None = typer.Option(None, "--label", help="With --ppi: the label whose share is estimated."),
    by: str = typer.Option("group", "--by", help="With --ppi: the group column."),
    human_column: str | None = typer.Option(None, "--human-column", help="With --ppi: the human label column of the table."),
    samples: Path | None = typer.Option(None, "--samples", help="With --ppi: or the pilot round's samples table, with --annotations or --labels."),
    annotations: Path | None = typer.Option(None, "--annotations", help="With --ppi --samples: the round's annotations."),
    labels: Path | None = typer.Option(None, "--labels", help="With --ppi --samples: the round's labels table (annotate aggregate)."),
) -> None:
    """How many more items each group needs for its per-group rate's CI half-width to reach the target (normal
    approximation); with --ppi, how many more human labels bring the PPI++ interval of a label's share to it.

    Example: biaskit annotate plan --validation r1/validation.parquet --target-ci 0.05 --out r1/plan.json

    Example: biaskit annotate plan --ppi runs/demo/scores.parquet --metric-column vader_label --label negative --by group --samples r1/samples.parquet --annotations r1/annotations.parquet --target-ci 0.03 --out r1/ppi_plan.json
    """
    check_out_suffix(out, (".json",), what="annotate plan (a JSON plan)")
    if (validation is None) == (ppi is None):
        raise BiaskitError(
            "E348", "give exactly one of --validation and --ppi", fix="--validation V (rates of annotate validate) or --ppi SCORED (PPI view)"
        )
    if ppi is not None:
        p = plan_ppi_files(ppi, target_ci, metric_column, label, by, human_column, samples, annotations, labels)
    else:
        assert validation is not None  # exactly one of --validation and --ppi, checked above
        p = plan_round(read_table(validation, "agreement"), target=target_ci, rate=rate, metric=metric)
        p["validation"] = str(validation)
    write_text_atomic(out, json.dumps(p, indent=2, ensure_ascii=False) + "\n")
    for g, e in p["groups"].items():
        if e.get("n_more") is None:
            typer.echo(f"  {g}: {e.get('error')}")
            continue
        now = f"{e['rate']:.3f} on {e['n_now']} items" if "rate" in e else f"PPI++ share {e['share_ppi']:.3f} from {e['n_now']} labels"
        typer.echo(
            f"  {g}: {p['rate']} {now}, CI +-{e['half_width_now']:.3f}; "
            f"{e['n_more']} more -> +-{e['half_width_planned']:.3f}" + (f" ({e['note']})" if e.get("note") else "")
        )
    typer.echo(f"{p['total_more']} more items in all -> {out}")


def rounds_cmd(ledger: Path | None = _LEDGER) -> None:
    """Show the history of annotation rounds (sizes, annotators, agreement, validation figures).

    Example: biaskit annotate rounds
    """
    hist = led.history(ledger)
    if not hist:
        typer.echo(f"no rounds recorded in {led.ledger_path(ledger)}")
        return
    for r in hist:
        typer.echo(f"{r['round']}: " + ", ".join(f"{k}={_fmt(v)}" for k, v in r.items() if k not in ("round",) and v is not None))


def tasks_cmd(
    task: str | None = typer.Argument(None, help="A task type (or name:a,b,c) to show in full."),
    config: bool = typer.Option(False, "--config", help="Print the Label Studio label config."),
) -> None:
    """List the task types, or show one's labels, guidelines and Label Studio config.

    Example: biaskit annotate tasks regard --config
    """
    if task is None:
        for t in TASK_TYPES.values():
            typer.echo(f"{t.name:<10} {', '.join(t.labels):<40} ordinal: {' < '.join(t.ordinal) or '-'}")
        return
    t = get_task_type(task)
    typer.echo(t.label_config() if config else t.guidelines_markdown())


def register(app: typer.Typer) -> None:
    ann = sub_app(app, "annotate")
    ann.command("sample")(sample)
    ann.command("export")(export)
    ann.command("push")(push_cmd)
    ann.command("pull")(pull_cmd)
    ann.command("agreement")(agreement_cmd)
    ann.command("validate")(validate_cmd)
    ann.command("aggregate")(aggregate_cmd)
    ann.command("plan")(plan_cmd)
    ann.command("rounds")(rounds_cmd)
    ann.command("tasks")(tasks_cmd)


def _refuse_fewer(out: Path, n_new: int, allow: bool, results: Path | None) -> None:
    """An empty or truncated results file (or a server that lost tasks) must not silently shrink a round's labels."""
    if allow or not out.exists():
        return

    src = f"the results file {results}" if results else "Label Studio"
    try:
        n_old = read_table(out).num_rows
    except BiaskitError as exc:
        raise BiaskitError(
            "E152",
            f"{out} exists but cannot be read ({exc.what}), so this pull ({n_new} annotations from {src}) would replace it blindly",
            value=str(out),
            fix="move the file away, or pass --allow-fewer to replace it",
        ) from None
    if n_new < n_old:
        raise BiaskitError(
            "E152",
            f"this pull gives {n_new} annotation(s) from {src}, fewer than the {n_old} already in {out}; the table was not replaced",
            value=n_new,
            fix="check the results file (complete, UTF-8, right round) or the server, or pass --allow-fewer to replace the table anyway",
        )


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, (list, dict)):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


class _crowd_warnings:
    """Print the named CrowdWarnings of a computation as one line each (``warning[CrowdWarning]: ...``)."""

    def __enter__(self):
        self._cm = warnings.catch_warnings(record=True)
        self._rec = self._cm.__enter__()
        warnings.simplefilter("always", CrowdWarning)
        self._cls = CrowdWarning
        return self

    def __exit__(self, *exc):
        rec = list(self._rec)
        self._cm.__exit__(*exc)
        for w in rec:
            if issubclass(w.category, self._cls):
                typer.echo(f"warning[{w.category.__name__}]: {w.message}")
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return False


def _print_groups(t) -> None:
    """Per-group accuracy and the pairwise differences that are significant after Holm."""
    rows = t.to_pylist()
    for r in rows:
        if r["measure"] == "group_accuracy":
            v = "null" if r["estimate"] is None else f"{r['estimate']:.3f}"
            ci = f" [{r['ci_low']:.3f}, {r['ci_high']:.3f}]" if r.get("ci_low") is not None else ""
            typer.echo(f"  {r['group_by']}={r['group']:<28} accuracy {v}{ci} n={r['n_items']}" + (f" ({r['note']})" if r.get("note") else ""))
    sig = [r for r in rows if r["measure"].startswith("diff_") and r.get("p_holm") is not None and r["p_holm"] < 0.05]
    for r in sig:
        typer.echo(
            f"  significant: {r['measure'][5:]} {r['group_a']} - {r['group_b']} = {r['estimate']:+.3f} "
            f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}] Holm p={r['p_holm']:.3g} ({r['family']})"
        )
    if not sig:
        typer.echo("  no difference between groups is significant after Holm correction")


def _print_table(t, skip_prefix: str | tuple[str, ...] | None = None) -> None:
    for r in t.to_pylist():
        if skip_prefix and r["measure"].startswith(skip_prefix):
            continue
        who = " ".join(x for x in (r.get("annotator"), r.get("annotator_b")) if x)
        v = "null" if r["estimate"] is None else f"{r['estimate']:.4f}"
        ci = f" [{r['ci_low']:.3f}, {r['ci_high']:.3f}]" if r.get("ci_low") is not None else ""
        p = f" p={r['p_value']:.3g}" if r.get("p_value") is not None else ""
        err = f" ({r['reason']})" if r.get("reason") else ""
        typer.echo(f"  {r['measure']:<32} {who:<36} {v}{ci}{p} n={r.get('n_items')}{err}")
