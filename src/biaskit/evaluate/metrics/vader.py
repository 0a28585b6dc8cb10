"""VADER sentiment (Hutto & Gilbert 2014) with the labelling thresholds of BOLD and of Sheng et al.

Source: the ``vaderSentiment`` package (MIT; ships its lexicon). Presets:

* ``bold`` (Dhamala et al. 2021): compound >= 0.5 positive, <= -0.5 negative, neutral otherwise, whole text.
* ``sheng`` (Sheng et al. 2019): compound >= 0.05 positive, <= -0.05 negative, applied to the first sentence.

Each labelling rule has one name (:data:`RULES`) that tables, model cards and the ``train`` baseline print, so
two figures under different rules are never both called "vader": ``vader-bold-0.5`` and ``vader-sheng-0.05``
(thresholds given by hand: ``vader-custom(+0.3/-0.3, whole text)``). :func:`rule_preset` reads a name back.
"""

from __future__ import annotations

import math
import re

import pyarrow as pa
from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics.base import Metric, Param, polarity_output
from biaskit.evaluate.metrics.coverage import coverage_error

PRESETS = {"bold": (0.5, -0.5, False), "sheng": (0.05, -0.05, True)}
#: preset -> the name of its labelling rule (``annotate validate --metric vader-sheng-0.05``, train's baseline)
RULES = {"bold": "vader-bold-0.5", "sheng": "vader-sheng-0.05"}
_SENT_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")


def first_sentence(text: str) -> str:
    """The text up to the first sentence end (., ! or ? followed by space); the whole text if none."""
    parts = _SENT_END.split(text.strip(), maxsplit=1)
    return parts[0] if parts and parts[0].strip() else text.strip()


def label_for(compound: float, pos: float, neg: float) -> str:
    if compound >= pos:
        return "positive"
    if compound <= neg:
        return "negative"
    return "neutral"


def rule_name(pos: float, neg: float, first: bool) -> str:
    """The name of the labelling rule with these thresholds: a preset's name (:data:`RULES`), else a custom one."""
    for preset, (p, n, f) in PRESETS.items():
        if (p, n, f) == (pos, neg, bool(first)):
            return RULES[preset]
    return f"vader-custom({pos:+g}/{neg:+g}, {'first sentence' if first else 'whole text'})"


def rule_preset(name: str) -> str | None:
    """The preset of a rule name (``vader-sheng-0.05`` -> ``sheng``); None for any other name."""
    return next((p for p, r in RULES.items() if r == name), None)


class VaderMetric(Metric):
    name = "vader"
    version = "1"
    description = "VADER compound sentiment in [-1, 1] and a positive/neutral/negative label"
    source = "Hutto & Gilbert 2014 (vaderSentiment 3.3.2); thresholds: Dhamala et al. 2021 (BOLD), Sheng et al. 2019"
    default_batch_size = 2048
    label_outputs = (
        polarity_output(
            "vader",
            "vader_label",
            "vader_compound",
            task="sentiment",
            display="Sentiment",
            report_label="Sentiment (VADER)",
            test_label="positive",
            noun="sentiment",
        ),
    )
    params = (
        Param("preset", "bold", "label thresholds: bold (+-0.5, whole text) or sheng (+-0.05, first sentence)", choices=tuple(PRESETS)),
        Param("pos_threshold", None, "override: compound >= this is positive", "float"),
        Param("neg_threshold", None, "override: compound <= this is negative", "float"),
        Param("first_sentence", None, "override: score only the first sentence", "bool"),
    )

    def _check_config(self) -> None:
        pos, neg, first = PRESETS[self.config["preset"]]
        self.pos = pos if self.config["pos_threshold"] is None else self.config["pos_threshold"]
        self.neg = neg if self.config["neg_threshold"] is None else self.config["neg_threshold"]
        self.first = first if self.config["first_sentence"] is None else self.config["first_sentence"]
        for name, v in (("pos_threshold", self.pos), ("neg_threshold", self.neg)):
            if not math.isfinite(v):
                raise BiaskitError(
                    "E070",
                    f"vader.{name} must be a finite number",
                    value=v,
                    fix="e.g. pos_threshold=0.05 neg_threshold=-0.05 (compound scores lie in [-1, 1])",
                )
        if self.neg >= self.pos:
            raise BiaskitError(
                "E070",
                "vader.neg_threshold must be below vader.pos_threshold",
                value=(self.neg, self.pos),
                fix="e.g. pos_threshold=0.05 neg_threshold=-0.05",
            )
        self.rule = rule_name(self.pos, self.neg, self.first)

    def _setup(self) -> None:
        self._sia = SentimentIntensityAnalyzer()
        self.info.update({"pos_threshold": self.pos, "neg_threshold": self.neg, "first_sentence": self.first, "rule": self.rule})

    def fields(self) -> dict[str, pa.DataType]:
        return {"compound": pa.float64(), "label": pa.string()}

    def _score_texts(self, texts, batch, rows):
        comp, lab, errs = [], [], []
        for t in texts:
            err = coverage_error(t, "VADER")  # Hebrew, Arabic, 100k x 'A': null + error, not a neutral 0.0
            c = None if err else float(self._sia.polarity_scores(first_sentence(t) if self.first else t)["compound"])
            comp.append(c)
            lab.append(None if err else label_for(c, self.pos, self.neg))
            errs.append(err)
        return {"compound": comp, "label": lab}, errs
