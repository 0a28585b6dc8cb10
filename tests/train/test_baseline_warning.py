"""A fine-tuned model below the TF-IDF + logistic regression baseline is flagged, as the majority collapse is: the
warning joins metrics.json's ``warnings``, which the CLI prints and the card shows as "**Warning: ...**" (the card and
CLI path is the one tests/train/test_train_output.py checks for the majority warning)."""

from __future__ import annotations

from biaskit.train.figures import baseline_warnings


def _run(ft_f1, ft_acc, tf_f1, tf_acc):
    return {"systems": {"finetuned": {"macro_f1": ft_f1, "accuracy": ft_acc}, "tfidf_logreg": {"macro_f1": tf_f1, "accuracy": tf_acc}}}


def test_below_the_tfidf_baseline_is_flagged_with_the_means():
    # the run: fine-tuned MiniLM 63% against TF-IDF's 73% (accuracy); macro-F1 0.60 vs 0.70 and 0.62 vs 0.74
    runs = [_run(0.60, 0.63, 0.70, 0.73), _run(0.62, 0.64, 0.74, 0.72)]
    (w,) = baseline_warnings(runs)
    # means by hand: macro-F1 (0.60 + 0.62) / 2 = 61.0 vs (0.70 + 0.74) / 2 = 72.0; accuracy 63.5 vs 72.5; below in 2
    assert "below the TF-IDF + logistic regression baseline (macro-F1 61.0 vs 72.0, accuracy 63.5 vs 72.5, mean over 2 run(s); below it in 2)" in w


def test_a_model_at_or_above_the_baseline_or_without_one_is_not_flagged():
    assert baseline_warnings([_run(0.80, 0.81, 0.70, 0.73)]) == []
    assert baseline_warnings([_run(0.70, 0.73, 0.70, 0.73)]) == []  # equal is not below
    # one run below, the mean above: not flagged (the card reports the means)
    assert baseline_warnings([_run(0.69, 0.7, 0.70, 0.7), _run(0.90, 0.9, 0.70, 0.7)]) == []
    assert baseline_warnings([{"systems": {"finetuned": {"macro_f1": 0.5, "accuracy": 0.5}}}]) == []  # no TF-IDF baseline run
    assert baseline_warnings([{"systems": {"tfidf_logreg": {"macro_f1": 0.5, "accuracy": 0.5}}}]) == []  # no fine-tuning
