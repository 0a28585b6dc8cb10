"""Demo stage 'train': fine-tune a classifier on the demo's annotation round, when it has human labels.

Human labels exist only when the annotate stage ran against a Label Studio server (``--label-studio-url``)
and people annotated the round. Then the round's majority labels (ties dropped, gold items left out,
"other" dropped as Sheng et al. did) train a classifier with ``biaskit train classifier``'s protocol
(1 run in ``--quick``, else 3; the baselines on the same split) into ``RUN/classifier/``, fine-tuning the packaged
all-MiniLM-L6-v2 (or the encoder folder in ``BIASKIT_TRAIN_BASE_MODEL``). Without labels,
or with too few per class for a stratified split, the stage says so and names the command to run later.
Labels are never invented.
"""

from __future__ import annotations

import os
from pathlib import Path

from biaskit.errors import BiaskitError
from biaskit.io import read_table
from biaskit.secrets import redact
from biaskit.train.classifier import train_classifier
from biaskit.train.config import TrainConfig
from biaskit.train.data import labelled_data, majority_labels

#: fewest items per class for the demo to train (a stratified train/dev/test split needs several)
MIN_PER_CLASS = 5


def _command(ctx) -> str:
    rd = ctx.run_dir
    return (
        f"`biaskit train classifier {rd / 'annotations.parquet'} --samples {rd / 'samples.parquet'} "
        f"--labels negative,neutral,positive --drop-label other --out {rd / 'classifier'}`"
    )


def run(ctx) -> None:
    ann, samples = ctx.tables.get("annotations"), ctx.tables.get("samples")
    if ann is None or samples is None or not Path(ann).exists():
        ctx.note(
            "train",
            "skipped: the run has no human labels (the annotate stage needs --label-studio-url and annotated tasks); "
            f"once a round is annotated, train a metric with {_command(ctx)}",
        )
        return

    task = (ctx.info.get("annotate") or {}).get("task", "sentiment")
    order = "negative,neutral,positive"
    try:
        t = majority_labels(read_table(ann), read_table(samples))
        data = labelled_data(t, labels=order, drop_labels=["other"]) if task in ("sentiment", "regard") else labelled_data(t)
        counts = data.counts()
        if min(counts.values()) < MIN_PER_CLASS:
            ctx.note(
                "train",
                f"skipped: too few human labels per class to train ({counts}; at least {MIN_PER_CLASS} each); "
                f"annotate more, then run {_command(ctx)}",
            )
            return
        n = len(data.y)
        dev = test = max(len(counts), round(0.2 * n))
        cfg = TrainConfig(
            base_model=os.environ.get("BIASKIT_TRAIN_BASE_MODEL") or None,
            split=f"{n - dev - test}/{dev}/{test}",
            runs=1 if ctx.quick else 3,
            seed=ctx.seed,
            epochs=3 if ctx.quick else 8,
        )
        res = train_classifier(
            data, ctx.run_dir / "classifier", cfg, source=f"{ann} + {samples}", data_license="labels made in this demo run", progress=None
        )
    except BiaskitError as exc:
        ctx.note("train", f"not trained: {redact(str(exc))}")
        return
    s = res.summary

    def f(name):
        v = s.get(name, {}).get("accuracy_mean")
        return "n/a" if v is None else f"{100 * v:.0f}%"

    ctx.info["train"] = {"out": str(res.out), "n": n, "counts": counts, "summary": s}
    ctx.note(
        "train",
        f"classifier trained on {n} human-labelled items into {res.out.relative_to(ctx.run_dir)}: test accuracy "
        f"{f('finetuned')} (majority {f('majority')}, VADER {f('vader')}, TF-IDF+LR {f('tfidf_logreg')}); "
        f"score with -p classifier.model={res.out}",
    )
