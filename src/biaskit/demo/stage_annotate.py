"""Demo stage 'annotate': sample a small sentiment round from the scores, mask it, export it; optionally run it
on a Label Studio server (``--label-studio-url``, token from ``LABEL_STUDIO_API_KEY``).

Without a server the round is exported as files for any crowd platform and the note says how to run it.
With a server the round is pushed (idempotently: rerunning the demo imports nothing twice) and whatever
humans have annotated so far is pulled, validated, and turned into agreement + validation figures.
Human labels are never invented: with no annotations yet, the note says so and what to do next.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from biaskit.annotate import ledger as led
from biaskit.annotate.labelmodels import LabelModelWarning, aggregate
from biaskit.annotate.labelstudio import public_url, pull, push
from biaskit.annotate.planning import plan_round, quotas
from biaskit.annotate.rounds import save_round
from biaskit.annotate.sampling import sample_round
from biaskit.annotate.spans import scored_from_manifest
from biaskit.demo.common import input_table
from biaskit.errors import BiaskitError
from biaskit.io import read_table, write_table, write_text_atomic
from biaskit.manifest import new_manifest
from biaskit.secrets import redact

ROUND = "demo"


def _metric(cols: list[str]) -> tuple[str, str] | None:
    """(task type, metric) the demo can validate from the score columns present."""
    if "vader_compound" in cols and "vader_label" in cols:
        return "sentiment", "vader"
    if "toxicity_score" in cols and "toxicity_label" in cols:
        return "toxicity", "toxicity"
    if "regard_label" in cols and "regard_positive" in cols:
        return "regard", "regard"
    return None


def run(ctx) -> None:
    scores = input_table(ctx, "annotate", "scores", "from the score stage")
    if scores is None:
        return
    scores_path = ctx.tables["scores"]
    pick = _metric(list(scores.column_names))
    if pick is None:
        ctx.note("annotate", "skipped: the scores table has no vader/toxicity/regard columns to validate")
        return
    task, metric = pick
    if "model" in scores.column_names:
        # annotate model outputs and Wikipedia baselines alike; stratify by source of the text
        strata = [c for c in ("model", "source") if c in scores.column_names]
    else:
        strata = [c for c in ("source", "group") if c in scores.column_names]
    n = 12 if ctx.quick else 60
    out_dir = ctx.run_dir / "annotate"
    ledger = out_dir / "rounds.jsonl"
    scored = scored_from_manifest(scores_path, metric)
    samples, rep = sample_round(scores, round=ROUND, task=task, n=n, metric=metric, strata=strata, bins=3, seed=ctx.seed, **scored)
    if samples.num_rows == 0:
        ctx.note("annotate", "skipped: no scored texts to sample")
        return
    samples_path = ctx.run_dir / "samples.parquet"
    entry = save_round(  # the same files and ledger record as `biaskit annotate sample`
        samples,
        rep,
        {"round": ROUND, "task": task, "metric": metric, "n": n, "strata": strata, "bins": 3},
        out=samples_path,
        pool=Path(scores_path),
        seed=ctx.seed,
        ledger=ledger,
        tasks_out=out_dir / "tasks.csv",
        command="biaskit demo (annotate)",
        overwrite=True,  # (the run folder is the demo's: a rerun redraws its one round in place)
    )
    ctx.add("samples", samples_path)
    tasks_file, guide = entry["tasks"]
    info = {
        "round": ROUND,
        "task": task,
        "metric": metric,
        "samples": rep.chosen,
        "strata": len(rep.strata),
        "masked": rep.masked,
        "tasks_file": str(tasks_file),
    }
    ctx.info["annotate"] = info

    if not ctx.label_studio_url:
        ctx.note(
            "annotate",
            f"{rep.chosen} {task} items sampled ({len(rep.strata)} strata, {rep.masked} masked) and exported to "
            f"{tasks_file.relative_to(ctx.run_dir)}; no annotation server given, so no human labels: run the round "
            f"with `biaskit annotate push {samples_path} --url URL` or on any platform, then "
            f"`biaskit annotate pull ... && biaskit annotate agreement/validate`",
        )
        return
    token = os.environ.get("LABEL_STUDIO_API_KEY")
    if not token:
        ctx.note("annotate", f"{rep.chosen} items exported; not pushed: set LABEL_STUDIO_API_KEY to use {public_url(ctx.label_studio_url)}")
        return
    try:
        _with_server(ctx, _Round(samples, samples_path, metric, ledger), info)
    except BiaskitError as exc:
        ctx.note("annotate", f"{rep.chosen} items exported; Label Studio step failed: {redact(str(exc))}")


@dataclass(frozen=True)
class _Round:
    """The demo's annotation round: the sampled items, the file they are in, the metric they validate and the
    rounds ledger."""

    samples: pa.Table
    samples_path: Path
    metric: str
    ledger: Path


def _with_server(ctx, rnd: _Round, info) -> None:
    """Push the round to Label Studio, pull its annotations, aggregate, and write the agreement and validation."""
    samples, samples_path, metric, ledger = rnd.samples, rnd.samples_path, rnd.metric, rnd.ledger
    from biaskit.annotate.agreement import agreement
    from biaskit.annotate.validation import validate_metrics

    prep = push(samples, url=ctx.label_studio_url, annotators=3)
    ref = led.round_ref(samples_path, ledger)
    led.record_push(ROUND, ledger, samples_path, prep, annotators=3)
    info.update({"project": prep.title, "imported": prep.imported, "already_there": prep.already_there})
    res = pull(samples, url=ctx.label_studio_url, project=prep.title)
    rep = res.report
    info.update({"annotations": rep.kept, "dropped": dict(rep.dropped), "annotators": len(rep.annotators)})
    led.record(
        "pull", ROUND, ledger, **ref, platform="label-studio", kept=rep.kept, dropped=dict(rep.dropped), items=rep.items, annotators=rep.annotators
    )
    if rep.kept == 0:
        ctx.note(
            "annotate",
            f"pushed {prep.total} tasks to {prep.title!r} on {prep.url} ({prep.imported} new); no annotations yet: "
            "annotate them in Label Studio (3 annotators per task), then rerun the demo or `biaskit annotate pull`",
        )
        return
    ann_path = ctx.run_dir / "annotations.parquet"
    write_table(
        res.annotations,
        ann_path,
        stage="annotations",
        manifest=new_manifest(
            "biaskit demo (annotate)",
            config={"platform": "label-studio", "url": prep.url, "project": prep.title, "report": rep.as_dict()},
            inputs=[samples_path],
            stage="annotations",
        ),
    )
    if res.rejected.num_rows:
        write_table(res.rejected, ctx.run_dir / "annotate" / "annotations.rejected.jsonl")
    ctx.add("annotations", ann_path)
    labels, method = _aggregate(ctx, res.annotations, samples, info)
    agr = agreement(res.annotations, samples=samples, n_boot=200, seed=ctx.seed, labels=labels)
    by = next((c for c in ("group", "domain", "source") if c in samples.column_names and len(set(samples.column(c).to_pylist()) - {None}) > 1), None)
    val_table, vals = validate_metrics(res.annotations, samples, [metric], n_boot=200, seed=ctx.seed, by=by, labels=labels)
    table = pa.concat_tables([agr, val_table])
    agr_path = ctx.run_dir / "agreement.parquet"
    write_table(
        table,
        agr_path,
        stage="agreement",
        manifest=new_manifest(
            "biaskit demo (annotate)", config={"metric": metric, "bootstrap": 200}, seed=ctx.seed, inputs=[ann_path, samples_path], stage="agreement"
        ),
    )
    ctx.add("agreement", agr_path)
    figs = led.figures(agr, ("fleiss_kappa", "krippendorff_alpha_nominal"))
    led.record("agreement", ROUND, ledger, **ref, **figs)
    val = vals[metric]
    vfigs = led.record_validation(ledger, samples_path, vals, by=by)["metrics"][metric]
    info.update({**figs, **{f"{metric}_{k}": v for k, v in vfigs.items()}})

    def f(v):
        return "n/a" if v is None else f"{v:.2f}"

    plan_note = _plan_next(ctx, val.table, rnd, by, info) if by else "no group column to plan the next round by"
    ctx.note(
        "annotate",
        f"{rep.kept} labels by {len(rep.annotators)} annotators on {rep.items} items; Fleiss kappa "
        f"{f(figs.get('fleiss_kappa'))}; {metric} vs humans ({method} labels): accuracy {f(vfigs.get('accuracy'))}, "
        f"Spearman {f(vfigs.get('spearman_rho'))} ({val.n_items} items); {plan_note}",
    )


def _aggregate(ctx, annotations, samples, info):
    """Dawid-Skene labels (majority when the round cannot support a label model: one annotator, no overlap)."""
    method = "dawid-skene"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LabelModelWarning)
        try:
            res = aggregate(annotations, method=method, samples=samples, seed=ctx.seed)
        except BiaskitError as exc:
            if exc.code != "E252":
                raise
            method = "majority"
            res = aggregate(annotations, method=method, samples=samples, seed=ctx.seed)
    path = ctx.run_dir / "annotate" / "labels.parquet"
    write_table(res.labels, path)
    write_table(res.annotators, ctx.run_dir / "annotate" / "labels.annotators.parquet")
    info.update({"label_model": method, "labels": str(path)})
    return res.labels, method


def _plan_next(ctx, validation, rnd: _Round, by, info) -> str:
    """Plan the next round (accuracy CI half-width 0.1 per group) and draw it from the unlabelled items."""
    samples_path, metric = rnd.samples_path, rnd.metric
    try:
        plan = plan_round(validation, target=0.1, metric=metric)
    except BiaskitError as exc:
        return f"no plan for the next round ({exc.what})"
    out = ctx.run_dir / "annotate"
    write_text_atomic(out / "plan.json", json.dumps(plan, indent=2) + "\n")
    scores = read_table(ctx.tables["scores"])
    done = read_table(samples_path, "samples").column("sample_id").to_pylist()
    nxt, rep = sample_round(
        scores,
        round=ROUND + "-next",
        task=read_table(samples_path).column("task_type")[0].as_py(),
        metric=metric,
        quota=quotas(plan),
        quota_by=by,
        prefer="uncertain",
        exclude=done,
        seed=ctx.seed,
        **scored_from_manifest(ctx.tables["scores"], metric),
    )
    write_table(nxt, out / "next_round.parquet", stage="samples")
    info.update({"plan": str(out / "plan.json"), "next_round": rep.chosen, "planned": plan["total_more"]})
    return (
        f"next round planned ({plan['total_more']} more items for a +-0.1 accuracy CI per {by}; {rep.chosen} unlabelled "
        "items drawn, least certain first, into annotate/next_round.parquet)"
    )
