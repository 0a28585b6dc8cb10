"""Training metrics from annotation rounds (``biaskit train``).

:func:`biaskit.train.classifier.train_classifier` fine-tunes a sequence classifier on a labelled table
(an annotation round's majority labels, or any text + label file) with the protocol of Sheng et al. 2019:
a seeded stratified train/dev/test split, several runs, early stopping on dev, and baselines (majority
class, VADER re-purposed, TF-IDF + logistic regression) on the same split. Importing this package is cheap;
torch/transformers/scikit-learn load inside the functions.
"""

from __future__ import annotations

from biaskit.train.classifier import TrainResult, train_classifier
from biaskit.train.config import TrainConfig
from biaskit.train.data import labelled_data, parse_labels, parse_split

__all__ = ["TrainConfig", "TrainResult", "labelled_data", "parse_labels", "parse_split", "train_classifier"]
