"""Per-text bias metrics behind one interface (see :mod:`biaskit.evaluate.metrics.base`).

Importing this package is cheap: metrics are registered in :data:`biaskit.registry.metrics` as lazy
``"module:attr"`` strings and their modules import torch/transformers/spaCy/gensim only in ``setup()``.

=========  =====================================================================================
name       what
=========  =====================================================================================
vader      VADER compound sentiment + label (BOLD or Sheng et al. thresholds)
toxicity   Hugging Face sequence classifier (multi- or single-label) or an offline sklearn backend
regard     regard classifier (Sheng et al. 2019), optional XYZ masking of the demographic mention
classifier any sequence classifier, label set read from the model (a ``biaskit train classifier`` folder)
norms      psycholinguistic norms (valence/arousal/dominance, basic emotions) from user lexicons
gender     BOLD gender polarity: unigram counts and hard-debiased word2vec projections
honest     HONEST (Nozza et al. 2021): completions found in HurtLex, per category
validity   completion validity: fill-ins that are real words (Hunspell dictionaries, Martinkova et al. 2023)
=========  =====================================================================================
"""

from __future__ import annotations

from biaskit.evaluate.metrics import (
    _assets,  # noqa: F401  (HurtLex assets)
    builtin,  # noqa: F401  (registers the built-in metrics)
)
from biaskit.evaluate.metrics.base import Metric, Param, make_metric, metric_class, parse_param_args, score_table

__all__ = ["Metric", "Param", "make_metric", "metric_class", "parse_param_args", "score_table"]
