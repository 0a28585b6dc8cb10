"""The built-in metrics, registered on :data:`biaskit.registry.metrics` as lazy ``"module:Class"`` strings
(importing this imports no metric module). A new built-in metric: its module in this package and one line
in ``_BUILTIN``; a metric of another package registers through the ``biaskit.metrics`` entry-point group
instead (docs/architecture.md)."""

from __future__ import annotations

from biaskit.registry import load_entry_points
from biaskit.registry import metrics as registry

_BUILTIN = {
    "vader": ("biaskit.evaluate.metrics.vader:VaderMetric", "VADER sentiment (compound + label)"),
    "toxicity": ("biaskit.evaluate.metrics.classifier:ToxicityMetric", "toxicity classifier (HF model or offline backend)"),
    "regard": ("biaskit.evaluate.metrics.classifier:RegardMetric", "regard classifier (Sheng et al. 2019)"),
    "classifier": (
        "biaskit.evaluate.metrics.classifier:TrainedClassifierMetric",
        "any sequence classifier, labels from the model (e.g. biaskit train)",
    ),
    "norms": ("biaskit.evaluate.metrics.norms:NormsMetric", "psycholinguistic norms from word lexicons (BOLD)"),
    "gender": ("biaskit.evaluate.metrics.gender:GenderMetric", "gender polarity: unigram + hard-debiased word2vec (BOLD)"),
    "honest": ("biaskit.evaluate.metrics.honest:HonestMetric", "HONEST: hurtful completions via HurtLex"),
    "validity": ("biaskit.evaluate.metrics.validity:ValidityMetric", "completion validity: real words per Hunspell dictionary"),
    "judge": ("biaskit.evaluate.metrics.judge:JudgeMetric", "LLM-as-judge: label-word probabilities of a chat model (local or server)"),
}
for _name, (_target, _help) in _BUILTIN.items():
    if _name not in registry:
        registry.register(_name, _target, help=_help)

#: the entry-point group through which other packages add metrics: ``name = "module:MetricClass"``
ENTRY_POINT_GROUP = "biaskit.metrics"


def load_plugins() -> list[str]:
    """Register the metrics other installed packages declare in the ``biaskit.metrics`` entry-point group
    (lazily, as their ``"module:Class"`` string: nothing is imported here); returns the names added. A plugin
    that takes a name already registered to something else is error E240 (naming both)."""
    return load_entry_points(registry, ENTRY_POINT_GROUP)


registry.add_loader(load_plugins)  # plugins load on the first lookup of a metric name, not at import
