"""The baselines of ``biaskit train classifier`` (majority class, VADER re-purposed, TF-IDF + logistic regression,
the LLM judge), run on a run's split (see :mod:`biaskit.train.classifier`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from biaskit.errors import BiaskitError, require
from biaskit.evaluate.metrics import make_metric
from biaskit.evaluate.metrics.catalog import labels_of
from biaskit.evaluate.metrics.vader import rule_preset
from biaskit.train.config import TrainConfig
from biaskit.train.data import LabelledData
from biaskit.train.figures import accuracy_macro_f1
from biaskit.train.judge_baseline import judge_predict


def majority_baseline(y_train: Sequence[int], n_test: int, n_classes: int) -> list[int]:
    c = Counter(y_train)
    best = max(c.get(k, 0) for k in range(n_classes))
    cls = min(k for k in range(n_classes) if c.get(k, 0) == best)
    return [cls] * n_test


def vader_mapping(labels: Sequence[str], ordinal: bool, spec: str | None = None) -> tuple[dict[str, int] | None, str]:
    """VADER label (positive/neutral/negative) -> class index, and how it was chosen (or why it is None)."""
    vader = labels_of("vader")  # the VADER metric's declared labels
    if spec:
        out = {}
        for part in spec.split(","):
            k, _, v = part.partition("=")
            k, v = k.strip(), v.strip()
            if k not in vader or v not in labels:
                raise BiaskitError(
                    "E172",
                    "malformed --vader-map",
                    value=part,
                    options=list(labels),
                    fix="write positive=CLASS,neutral=CLASS,negative=CLASS with the class names",
                )
            out[k] = list(labels).index(v)
        return out, f"given: {spec}"
    low = [lab.lower() for lab in labels]
    if "positive" in low and "negative" in low:
        m = {k: low.index(k) for k in vader if k in low}
        return m, "by name"
    if ordinal and len(labels) == 3:
        return {"negative": 0, "neutral": 1, "positive": 2}, f"by ordinal order ({labels[0]} < {labels[1]} < {labels[2]})"
    return None, "the classes have no positive/negative names and no 3-point ordinal order (give --vader-map)"


def vader_predict(texts: Sequence[str], mapping: dict[str, int], rule: str = "vader-sheng-0.05") -> list[int]:
    """VADER labels under ``rule`` (default Sheng et al.'s) mapped to classes; -1 where the label has no class (counts wrong)."""
    m = make_metric("vader", text_column="text", params={"preset": rule_preset(rule)})
    labs = m.score({"text": list(texts)})["vader_label"]
    return [mapping.get(lab, -1) if lab is not None else -1 for lab in labs]


def tfidf_logreg(train_texts, y_train, test_texts, seed: int) -> list[int]:
    require("sklearn", "metrics", "the TF-IDF + logistic regression baseline")
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vec = TfidfVectorizer()
    X = vec.fit_transform(train_texts)
    clf = LogisticRegression(max_iter=1000, random_state=seed).fit(X, y_train)
    return [int(p) for p in clf.predict(vec.transform(test_texts))]


def run_systems(data: LabelledData, cfg: TrainConfig, split, split_seed: int, vmap, vhow: str) -> tuple[dict[str, Any], float]:
    train, _dev, test = split
    y_test = [data.y[i] for i in test]
    systems: dict[str, Any] = {}
    maj_acc, maj_f1 = accuracy_macro_f1(y_test, majority_baseline([data.y[i] for i in train], len(test), len(data.labels)))
    if "majority" in cfg.baselines:
        systems["majority"] = {"accuracy": maj_acc, "macro_f1": maj_f1}
    if "vader" in cfg.baselines:
        if vmap is None:
            systems["vader"] = {"accuracy": None, "macro_f1": None, "error": vhow, "rule": cfg.vader_rule}
        else:
            acc, f1 = accuracy_macro_f1(y_test, vader_predict([data.texts[i] for i in test], vmap, cfg.vader_rule))
            systems["vader"] = {"accuracy": acc, "macro_f1": f1, "rule": cfg.vader_rule}
    if "tfidf_logreg" in cfg.baselines:
        acc, f1 = accuracy_macro_f1(
            y_test, tfidf_logreg([data.texts[i] for i in train], [data.y[i] for i in train], [data.texts[i] for i in test], split_seed)
        )
        systems["tfidf_logreg"] = {"accuracy": acc, "macro_f1": f1}
    if "judge" in cfg.baselines:
        pred, n_err = judge_predict([data.texts[i] for i in test], data.labels, cfg.judge_params)
        acc, f1 = accuracy_macro_f1(y_test, pred)
        systems["judge"] = {"accuracy": acc, "macro_f1": f1, "n_errors": n_err}
    return systems, maj_acc
