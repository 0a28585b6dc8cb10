"""Fine-tune a text classifier from labelled data, with the evaluation protocol of Sheng et al. 2019.

Sheng et al. ("The Woman Worked as a Babysitter", 2019) annotated ~300 samples, dropped the "other"
label, split the rest 212/60/30 into train/dev/test and reported test accuracy averaged over 5 runs
against a majority baseline and a re-purposed sentiment analyser (VADER). Here:

- **data**: texts and labels; ``labels`` fixes the class order (ordinal order for ordinal tasks such as
  regard, e.g. ``-1=negative,0=neutral,1=positive``), ``drop_labels`` removes classes (e.g. ``other``/2);
  rows with a null text or label are dropped and counted;
- **split**: stratified (scikit-learn ``train_test_split`` with ``stratify``, test first, then dev from
  the rest), seeded, by counts (``212/60/30``) or fractions (``0.7/0.2/0.1``). By default every run uses
  the same split (seed ``seed``) and runs differ in the model's seed (head initialisation, dropout, batch
  order); ``resplit=True`` draws a new split per run (seed ``seed + run``);
- **systems**, all on the same split of a run: ``majority`` (most frequent training class; ties go to the
  first class in label order), ``vader`` (VADER compound under the rule ``vader_rule``: by default
  ``vader-sheng-0.05``, Sheng et al.'s thresholds +-0.05 on the first sentence, or ``vader-bold-0.5``; the
  rule's name is in ``metrics.json`` and the card, as ``annotate validate`` names it; its
  positive/neutral/negative label mapped to the classes; skipped with a reason when the
  classes have no such mapping), ``tfidf_logreg`` (scikit-learn ``TfidfVectorizer()`` +
  ``LogisticRegression(max_iter=1000)``, fitted on train), ``finetuned`` (the encoder fine-tuned end to
  end: AdamW, linear decay with 10% warm-up, cross-entropy, up to ``epochs`` epochs, the epoch with the
  best dev figure (``select``: macro F1 or accuracy) kept, stop after ``patience`` epochs without
  improvement);
- **figures**: test accuracy and macro F1 (mean of the per-class F1 over the classes present in the test
  labels or predictions, as scikit-learn's ``f1_score(average="macro")``) per run, their mean and sample
  standard deviation (ddof 1; null for one run).

The output folder holds the fine-tuned model of the run with the best dev figure (loadable by
``transformers.AutoModelForSequenceClassification``, ``id2label`` = the class names), its tokenizer,
``biaskit_classifier.json`` (label set, order, ordinal flag), ``metrics.json`` (every figure) and a model
card ``README.md``. It is written atomically (a killed run leaves no half folder).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from biaskit import __version__
from biaskit.errors import BiaskitError
from biaskit.io import output_lock
from biaskit.jsonread import read_back
from biaskit.log import get_logger
from biaskit.ownership import claim_folder
from biaskit.train.baselines import run_systems, vader_mapping
from biaskit.train.card import check_card_text, describe_task, model_card
from biaskit.train.config import META_FILE, TrainConfig
from biaskit.train.data import LabelledData, draw_split, split_record, split_sizes
from biaskit.train.figures import baseline_warnings, majority_warnings, summarise
from biaskit.train.finetune import dur, finetune_run, resolve_base_model, set_threads
from biaskit.train.folder import MARKER_KIND, commit, split_csv, train_fingerprint
from biaskit.train.public import encoder_id, public_source


@dataclass
class TrainResult:
    out: Path
    metrics: dict[str, Any]
    summary: dict[str, dict[str, float | None]] = field(default_factory=dict)
    saved_run: int = 0
    warnings: list[str] = field(default_factory=list)


@dataclass
class _Job:
    """One ``train_classifier`` call's data and settings: what its marker and metrics.json say."""

    data: LabelledData
    cfg: TrainConfig
    finetune: bool
    base: str | None
    fp: str
    vmap: dict[str, int] | None
    vhow: str
    sizes: tuple[int, int, int]
    source: str
    text_column: str
    label_column: str
    data_license: str
    task: str | None
    version: str

    def meta(self, saved_run: int | None) -> dict[str, Any]:
        """The marker's content (without ``files``/``complete``; the ownership layer adds ``written_by``/``kind``)."""
        data, cfg, finetune = self.data, self.cfg, self.finetune
        return {
            "labels": data.labels,
            "ordinal": data.ordinal,
            "label_map": data.label_map,
            "base_model": encoder_id(cfg.base_model) if finetune else None,
            "text_column": self.text_column,
            "saved_run": saved_run if finetune else None,
            "has_model": bool(finetune) and saved_run is not None,
            "fingerprint": self.fp,
            "runs_planned": cfg.runs,
        }

    def metrics(self, runs: list[dict[str, Any]], best_run: int | None) -> dict[str, Any]:
        """metrics.json's content after ``runs``."""
        data, cfg, finetune, sizes = self.data, self.cfg, self.finetune, self.sizes
        return {
            "biaskit_version": self.version,
            "source": public_source(self.source),
            "text_column": self.text_column,
            "label_column": self.label_column,
            "task": describe_task(data.labels, self.label_column, self.task),
            "task_name": self.task,
            "labels": data.labels,
            "ordinal": data.ordinal,
            "label_map": data.label_map,
            "n_rows": data.n_rows,
            "n_used": len(data.y),
            "dropped": data.dropped,
            "class_counts": data.counts(),
            "base_model": encoder_id(cfg.base_model) if finetune else None,
            "config": {
                **{k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(cfg).items()},
                "base_model": cfg.base_model and encoder_id(cfg.base_model),
            },
            "split": split_record(data, cfg, sizes),
            "vader_mapping": {"how": self.vhow, "map": {k: data.labels[v] for k, v in (self.vmap or {}).items()}, "rule": cfg.vader_rule},
            "runs_planned": cfg.runs,
            "runs_finished": len(runs),
            "runs": runs,
            "summary": summarise(runs),
            "saved_run": best_run if finetune else None,
            "data_license": self.data_license,
            "warnings": majority_warnings(runs) + baseline_warnings(runs),
        }


def _progress_say(say, progress: bool | None):
    """Where progress lines go: ``say``, else nowhere when ``progress`` is False, else the ``biaskit.train`` logger."""
    if say is not None:
        return say
    if progress is False:

        def say(_text: str) -> None:
            return None

        return say

    return get_logger("train").info


def _finished_runs(claim, runs: int) -> dict[int, dict[str, Any]]:
    """The runs an interrupted job of the same data and settings already committed to the folder (run number -> run)."""
    done: dict[int, dict[str, Any]] = {}
    for r in range(runs):
        p = claim.out / "runs" / f"run-{r}.json"
        if f"runs/run-{r}.json" in claim.owned and p.is_file():
            try:
                done[r] = read_back(p, what="run record")
            except BiaskitError as exc:
                if exc.code != "E381":  # (not JSON: that run is redone; too deep or too large is said)
                    raise
    return done


def _saved_of(done: dict[int, dict[str, Any]], old: dict | None, select: str) -> tuple[int | None, float]:
    """The finished run whose model the folder holds, and its dev figure (None, -1.0 when none)."""
    best_run, best_dev = None, -1.0
    for r, run in sorted(done.items()):
        ft = run["systems"].get("finetuned")
        if ft and old is not None and old.get("saved_run") == r:
            best_run, best_dev = r, ft[f"dev_{select}"]
    return best_run, best_dev


def _new_run(job: _Job, r: int, split, split_seed: int, progress: bool | None, say, encoded):
    """Run ``r``: the baselines and (when fine-tuning) the fine-tuned model on ``split``.

    Returns the run's record, the model and tokenizer (None without fine-tuning) and the encoded texts to reuse."""
    data, cfg = job.data, job.cfg
    train, dev, test = split
    y_test = [data.y[i] for i in test]
    systems, maj_acc = run_systems(data, cfg, split, split_seed, job.vmap, job.vhow)
    model = tok = None
    if job.finetune:

        def said(text: str, _r=r) -> None:
            say(f"run {_r + 1}/{cfg.runs} {text}")

        assert job.base is not None  # resolved for fine-tuning
        res = finetune_run(job.base, data, split, cfg, seed=cfg.seed * 1000 + r, progress=progress, say=said, encoded=encoded)
        model, tok, encoded = res.pop("_model"), res.pop("_tokenizer"), res.pop("_encoded")
        pred = res.pop("test_pred")
        res["pred_class_counts"] = {data.labels[k]: v for k, v in sorted(Counter(pred).items())}
        systems["finetuned"] = res
    run = {
        "run": r,
        "split_seed": split_seed,
        "model_seed": cfg.seed * 1000 + r if job.finetune else None,
        "sizes": {"train": len(train), "dev": len(dev), "test": len(test)},
        "majority_accuracy": maj_acc,
        "test_class_counts": {data.labels[k]: v for k, v in sorted(Counter(y_test).items())},
        "systems": systems,
    }
    return run, model, tok, encoded


def _commit_run(
    claim, job: _Job, run: dict[str, Any], runs: list[dict[str, Any]], best_run: int | None, model, tok, first_split, *, keep: bool
) -> None:
    """Commit a finished run: the model when given (the new best), the run, metrics, card, split, then the marker."""
    metrics = job.metrics(runs, best_run)
    texts = {
        f"runs/run-{run['run']}.json": json.dumps(run, indent=2, default=str) + "\n",
        "metrics.json": json.dumps(metrics, indent=2, default=str) + "\n",
        "README.md": model_card(metrics),
        "split.csv": split_csv(job.data, first_split),
    }
    commit(claim, {**job.meta(best_run), "complete": len(runs) == job.cfg.runs}, texts, keep=keep, trained=(model, tok))


def _finished_line(run: dict[str, Any], cfg: TrainConfig, per: float, left: int, out: Path) -> str:
    f = run["systems"].get("finetuned")
    return (
        f"run {run['run'] + 1}/{cfg.runs} finished"
        + (f": test accuracy {100 * f['accuracy']:.1f}, macro F1 {100 * f['macro_f1']:.1f} (best epoch {f['best_epoch']})" if f else "")
        + (f"; {dur(per)} per run, about {dur(left * per)} left" if left else "")
        + f"; saved in {out}"
    )


def train_classifier(
    data: LabelledData,
    out: str | Path,
    cfg: TrainConfig | None = None,
    *,
    source: str = "",
    data_license: str = "unknown",
    text_column: str = "text",
    label_column: str = "label",
    progress: bool | None = None,
    finetune: bool = True,
    task: str | None = None,
    say=None,
) -> TrainResult:
    """Run the protocol and write the output folder (see the module docstring). ``finetune=False`` runs
    the baselines only (no model is written; for a quick look at a labelled set).

    Each finished run is committed to ``out`` as it finishes; when ``out`` holds the finished runs of the same data and
    settings (a killed job), those runs are kept and not redone. ``say(text)`` receives progress lines (run, epoch, dev
    figure, time left); by default they go to the ``biaskit.train`` logger unless ``progress`` is False."""
    cfg = cfg or TrainConfig()
    cfg.check()
    data_license = check_card_text(data_license, "--data-license")
    task = check_card_text(task, "--task") if task is not None else None

    say = _progress_say(say, progress)
    out = Path(out)
    sizes = split_sizes(data, cfg)
    with output_lock(out):
        claim = claim_folder(out, META_FILE, MARKER_KIND)  # E006 for a folder, or an edited file, biaskit did not write
        old = claim.previous
        base = resolve_base_model(cfg.base_model) if finetune else None
        vmap, vhow = vader_mapping(data.labels, data.ordinal, cfg.vader_map) if "vader" in cfg.baselines else (None, "not asked")
        fp = train_fingerprint(data, cfg, finetune, base)
        job = _Job(data, cfg, finetune, base, fp, vmap, vhow, sizes, source, text_column, label_column, data_license, task, __version__)
        resume = bool(claim.owned) and old.get("fingerprint") == fp
        done = _finished_runs(claim, cfg.runs) if resume else {}
        if done:
            say(f"resuming in {out}: run(s) {', '.join(str(r + 1) for r in sorted(done))} of {cfg.runs} already finished")
        runs: list[dict[str, Any]] = []
        best_run, best_dev = _saved_of(done, old, cfg.select)
        if finetune and done and best_run is None:  # the saved model is not one of the finished runs: redo them all
            done = {}
        splits_seen: dict[int, tuple] = {}
        prev_threads = set_threads(cfg) if finetune else None
        encoded = None
        t_start, n_new = time.perf_counter(), 0
        try:
            for r in range(cfg.runs):
                split_seed = cfg.seed + r if cfg.resplit else cfg.seed
                if split_seed not in splits_seen:
                    splits_seen[split_seed] = draw_split(data, sizes, split_seed)
                if r in done:
                    runs.append(done[r])
                    continue
                run, model, tok, encoded = _new_run(job, r, splits_seen[split_seed], split_seed, progress, say, encoded)
                runs.append(run)
                is_best = finetune and run["systems"]["finetuned"][f"dev_{cfg.select}"] > best_dev
                if is_best:
                    best_run, best_dev = r, run["systems"]["finetuned"][f"dev_{cfg.select}"]
                _commit_run(claim, job, run, runs, best_run, model if is_best else None, tok, splits_seen[cfg.seed], keep=resume or n_new > 0)
                del model, tok
                n_new += 1
                per = (time.perf_counter() - t_start) / n_new
                say(_finished_line(run, cfg, per, cfg.runs - len(runs), out))
        finally:
            if prev_threads is not None:
                import torch

                torch.set_num_threads(prev_threads)
        metrics = job.metrics(runs, best_run)
        if not n_new:  # everything was already there: refresh the card and metrics (e.g. another --data-license)
            texts = {"metrics.json": json.dumps(metrics, indent=2, default=str) + "\n", "README.md": model_card(metrics)}
            commit(claim, {**job.meta(best_run), "complete": True}, texts, keep=True)
    return TrainResult(out=out, metrics=metrics, summary=metrics["summary"], saved_run=metrics["saved_run"] or 0, warnings=metrics["warnings"])
