"""Metric validation equals scipy / scikit-learn on hand-built tables; calibration finds the true optimum."""

import itertools

import numpy as np
import pyarrow as pa
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import classification_report, confusion_matrix

from biaskit.annotate.agreement import bootstrap_ci, value
from biaskit.annotate.rankstats import spearman
from biaskit.annotate.validation import calibrate_thresholds, classify, confusion_stats, validate_metric
from biaskit.errors import BiaskitError

LABS = ["positive", "neutral", "negative"]
ORD = ["negative", "neutral", "positive"]

# 12 items: human majority (3 annotators) vs VADER label and compound score
HUMAN = ["positive", "positive", "positive", "neutral", "neutral", "neutral", "negative", "negative", "negative", "positive", "neutral", "negative"]
VADER = ["positive", "positive", "neutral", "neutral", "positive", "neutral", "negative", "neutral", "negative", "positive", "negative", "negative"]
COMP = [0.8, 0.6, 0.02, 0.0, 0.3, -0.01, -0.7, -0.03, -0.5, 0.9, -0.2, -0.6]


def _round():
    ann, samples = [], []
    for i, (h, v, c) in enumerate(zip(HUMAN, VADER, COMP)):
        sid = f"s{i:02d}"
        samples.append(
            {"sample_id": sid, "round": "r1", "task_type": "sentiment", "text": f"t{i}", "is_gold": False, "vader_label": v, "vader_compound": c}
        )
        other = "neutral" if h != "neutral" else "positive"
        for a, lab in (("a1", h), ("a2", h), ("a3", other)):
            ann.append({"sample_id": sid, "round": "r1", "annotator": a, "label": lab})
    # one tied item (dropped by the default tie policy) and one gold item (never validated)
    samples.append(
        {"sample_id": "tie", "round": "r1", "task_type": "sentiment", "text": "x", "is_gold": False, "vader_label": "positive", "vader_compound": 0.5}
    )
    ann += [
        {"sample_id": "tie", "round": "r1", "annotator": a, "label": lab} for a, lab in (("a1", "positive"), ("a2", "negative"), ("a3", "neutral"))
    ]
    samples.append(
        {
            "sample_id": "gold1",
            "round": "r1",
            "task_type": "sentiment",
            "text": "g",
            "is_gold": True,
            "gold_label": "positive",
            "vader_label": "negative",
            "vader_compound": -0.9,
        }
    )
    ann += [{"sample_id": "gold1", "round": "r1", "annotator": a, "label": "positive"} for a in ("a1", "a2", "a3")]
    return pa.Table.from_pylist(ann), pa.Table.from_pylist(samples)


def test_spearman_equals_scipy_with_ties():
    h = [ORD.index(x) for x in HUMAN]
    rho, p = spearman(h, COMP)
    ref = spearmanr(h, COMP)
    assert rho == pytest.approx(ref.statistic, abs=1e-12)
    assert p == pytest.approx(ref.pvalue, rel=1e-9)


def test_classification_equals_sklearn_report_and_confusion():
    c = classify(HUMAN, VADER, LABS)
    rep = classification_report(HUMAN, VADER, labels=LABS, output_dict=True, zero_division=0)
    assert c.accuracy == pytest.approx(rep["accuracy"])
    for k in ("precision", "recall", "f1"):
        assert c.weighted[k] == pytest.approx(rep["weighted avg"][f"{k}-score" if k == "f1" else k], abs=1e-12)
    for lab in LABS:
        assert c.precision[lab] == pytest.approx(rep[lab]["precision"])
        assert c.recall[lab] == pytest.approx(rep[lab]["recall"])
        assert c.f1[lab] == pytest.approx(rep[lab]["f1-score"])
    assert (c.confusion == confusion_matrix(HUMAN, VADER, labels=LABS)).all()
    # by hand: items 0, 1, 3, 5, 6, 8, 9, 11 agree -> 8 of 12
    assert c.accuracy == 8 / 12


def test_class_never_predicted_is_null_per_class_but_zero_in_weighted_average():
    y_true = ["positive", "negative", "neutral", "neutral"]
    y_pred = ["positive", "negative", "positive", "negative"]
    c = classify(y_true, y_pred, LABS)
    assert c.precision["neutral"] is None
    rep = classification_report(y_true, y_pred, labels=LABS, output_dict=True, zero_division=0)
    assert c.weighted["precision"] == pytest.approx(rep["weighted avg"]["precision"])


def test_validate_metric_table_matches_independent_values():
    ann, samples = _round()
    v = validate_metric(ann, samples, metric="vader", n_boot=300, seed=0)
    t = v.table
    h = [ORD.index(x) for x in HUMAN]
    ref = spearmanr(h, COMP)
    assert value(t, "spearman_rho", metric="vader") == pytest.approx(ref.statistic, abs=1e-12)
    row = [r for r in t.to_pylist() if r["measure"] == "spearman_rho"][0]
    assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert row["n_items"] == 12  # the tie and the gold item are left out
    assert row["ci_low"] < row["estimate"] < row["ci_high"]
    rep = classification_report(HUMAN, VADER, labels=LABS, output_dict=True, zero_division=0)
    assert value(t, "accuracy") == pytest.approx(rep["accuracy"])
    assert value(t, "f1_weighted") == pytest.approx(rep["weighted avg"]["f1-score"])
    assert value(t, "precision_weighted") == pytest.approx(rep["weighted avg"]["precision"])
    assert value(t, "recall_weighted") == pytest.approx(rep["weighted avg"]["recall"])
    assert value(t, "precision_neutral") == pytest.approx(rep["neutral"]["precision"])
    assert value(t, "recall_negative") == pytest.approx(rep["negative"]["recall"])
    cm = confusion_matrix(HUMAN, VADER, labels=LABS)
    for i, hl in enumerate(LABS):
        for j, ml in enumerate(LABS):
            assert value(t, f"confusion:{hl}:{ml}") == cm[i, j]
    assert "| human \\ metric | positive | neutral | negative | support |" in v.confusion_markdown()
    assert "no majority 1" in v.notes[0] and "gold 1" in v.notes[0]
    # calibrated thresholds: ordered, and at least as accurate as VADER's fixed +-0.05 cuts
    lo, hi = value(t, "threshold_negative_neutral"), value(t, "threshold_neutral_positive")
    assert lo < hi
    assert value(t, "calibrated_accuracy") >= value(t, "accuracy")


def test_calibration_is_the_exhaustive_optimum():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 3, 60)
    s = np.round(y + rng.normal(0, 0.9, 60), 1)  # rounded: many ties
    labels = [ORD[i] for i in y]
    th = calibrate_thresholds(s, labels, ORD)
    cands = np.unique(s)
    cuts = np.concatenate([[cands[0] - 1], (cands[:-1] + cands[1:]) / 2, [cands[-1]]])
    best = max(np.mean(np.where(s <= a, 0, np.where(s <= b, 1, 2)) == y) for a, b in itertools.combinations_with_replacement(cuts, 2))
    assert th.accuracy == pytest.approx(best)
    assert th.cuts == sorted(th.cuts)
    pred = th.predict(s)
    assert np.mean([p == lab for p, lab in zip(pred, labels)]) == pytest.approx(best)


def test_validate_errors_name_value_and_fix():
    ann, samples = _round()
    with pytest.raises(BiaskitError) as e:
        validate_metric(ann, samples, metric="toxicity")
    assert e.value.code == "E091" and "toxicity_label" in str(e.value) and "fix:" in str(e.value)
    bad = pa.concat_tables([ann, pa.Table.from_pylist([{"sample_id": "zzz", "round": "r1", "annotator": "a1", "label": "positive"}])])
    with pytest.raises(BiaskitError) as e:
        validate_metric(bad, samples, metric="vader")
    assert "zzz" in str(e.value)
    with pytest.raises(BiaskitError):
        calibrate_thresholds([0.1], ["positive"], ORD)


def test_unknown_calibration_objective_is_an_error_not_a_silently_skipped_calibration():
    # it used to be caught as "calibration skipped" in the notes, so --objective balanced gave no thresholds and rc 0
    ann, samples = _round()
    with pytest.raises(BiaskitError) as e:
        validate_metric(ann, samples, metric="vader", n_boot=0, objective="balanced")
    assert e.value.code == "E091" and "'balanced'" in str(e.value) and "balanced_accuracy" in str(e.value)


def test_vectorised_bootstrap_equals_the_plain_one_and_accuracy_is_wilson():
    ann, samples = _round()
    v = validate_metric(ann, samples, metric="vader", n_boot=200, seed=4)
    c = classify(HUMAN, VADER, LABS)
    assert confusion_stats(c.confusion) == pytest.approx((c.accuracy, c.weighted["precision"], c.weighted["recall"], c.weighted["f1"]))
    yt, yp = np.array(HUMAN, dtype=object), np.array(VADER, dtype=object)
    for measure, f in (("f1_weighted", lambda k: k.weighted["f1"]),):
        ref = bootstrap_ci(lambda idx: f(classify(list(yt[idx]), list(yp[idx]), LABS)), len(yt), n_boot=200, seed=4)
        row = [r for r in v.table.to_pylist() if r["measure"] == measure][0]
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(ref) and row["method"] == "percentile bootstrap"
    # accuracy is a share: Wilson's interval (the inference layer), whatever n_boot is
    from statsmodels.stats.proportion import proportion_confint

    row = [r for r in v.table.to_pylist() if r["measure"] == "accuracy"][0]
    right = int(np.trace(c.confusion))
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(proportion_confint(right, len(yt), method="wilson"), abs=1e-12)
    assert row["method"] == "wilson"


def test_leave_one_out_calibration_by_hand():
    from biaskit.annotate.validation import Calibration, cross_validated_calibration

    # scores 1..7, labels p n n n p p p (negative below positive). Fitted on all 7: the cut 4.5 (between 4 and
    # 5) is the unique optimum, wrong only on item 1 -> in-sample accuracy 6/7. Leave-one-out (folds >= n):
    #   without 1: the rest is separable, cut 4.5 -> 1 predicted negative: wrong
    #   without 2, 3 or 4: cut 4.5 (errors on item 1 only; all-positive would make 2 errors) -> negative: right
    #   without 5: cut (4 + 6) / 2 = 5 -> 5 <= 5 predicted negative: wrong
    #   without 6 or 7: cut 4.5 -> positive: right
    # -> 5/7 out of sample
    order = ["negative", "positive"]
    scores = [1, 2, 3, 4, 5, 6, 7]
    labels = ["positive", "negative", "negative", "negative", "positive", "positive", "positive"]
    assert calibrate_thresholds(scores, labels, order).accuracy == pytest.approx(6 / 7)
    assert cross_validated_calibration(scores, labels, order, calibration=Calibration(cv_folds=7)) == pytest.approx(5 / 7)
    assert cross_validated_calibration(scores, labels, order, calibration=Calibration(cv_folds=50)) == pytest.approx(5 / 7)  # capped at n
    # balanced: recall negative 3/3, positive 2/4 (items 1 and 5 missed) -> (1 + 0.5) / 2
    assert cross_validated_calibration(scores, labels, order, calibration=Calibration(objective="balanced_accuracy", cv_folds=7)) == pytest.approx(
        0.75
    )
    # three ordered classes, separable: every held-out item falls on its own side of the refitted cuts
    assert (
        cross_validated_calibration(
            [-0.9, -0.6, -0.1, 0.1, 0.5, 0.8],
            ["negative", "negative", "neutral", "neutral", "positive", "positive"],
            ORD,
            calibration=Calibration(cv_folds=6),
        )
        == 1.0
    )
    with pytest.raises(BiaskitError) as e:
        cross_validated_calibration(scores, labels, order, calibration=Calibration(cv_folds=1))
    assert e.value.code == "E091" and "2 folds" in str(e.value)


def test_kfold_calibration_is_seeded_and_reported_next_to_the_in_sample_figure():
    from biaskit.annotate.validation import Calibration, cross_validated_calibration

    rng = np.random.default_rng(7)
    y = rng.integers(0, 3, 90)
    s = y + rng.normal(0, 0.8, 90)
    labels = [ORD[i] for i in y]
    a = cross_validated_calibration(s, labels, ORD, calibration=Calibration(cv_folds=5, seed=1))
    assert a == cross_validated_calibration(s, labels, ORD, calibration=Calibration(cv_folds=5, seed=1))
    # the folds are those of the documented rule: permuted position i -> fold i mod 5
    fold = np.empty(90, dtype=int)
    fold[np.random.default_rng(1).permutation(90)] = np.arange(90) % 5
    correct = 0
    for f in range(5):
        th = calibrate_thresholds(s[fold != f], [labels[i] for i in np.flatnonzero(fold != f)], ORD)
        correct += sum(p == labels[i] for i, p in zip(np.flatnonzero(fold == f), th.predict(s[fold == f])))
    assert a == pytest.approx(correct / 90)
    assert a <= calibrate_thresholds(s, labels, ORD).accuracy  # out of sample is not better here
    ann, samples = _round()
    t = validate_metric(ann, samples, metric="vader", n_boot=0).table
    measures = t.column("measure").to_pylist()
    assert "cv_calibrated_accuracy" in measures and "calibrated_accuracy" in measures
    with pytest.raises(BiaskitError) as e:
        validate_metric(ann, samples, metric="vader", n_boot=0, cv_folds=1)
    assert e.value.code == "E091" and "--cv-folds" in str(e.value)
    assert "cv_calibrated_accuracy" not in validate_metric(ann, samples, metric="vader", n_boot=0, cv_folds=0).table.column("measure").to_pylist()


def _agreeing_round(right: bool, n: int = 12):
    """n items whose human majority is always (``right``) or never the metric's label."""
    ann, samples = [], []
    for i in range(n):
        h = LABS[i % 3]
        v = h if right else LABS[(i + 1) % 3]
        samples.append({"sample_id": f"s{i:02d}", "round": "r1", "task_type": "sentiment", "text": f"t{i}", "is_gold": False, "vader_label": v})
        ann += [{"sample_id": f"s{i:02d}", "round": "r1", "annotator": w, "label": h, "task_type": "sentiment"} for w in "abc"]
    return pa.Table.from_pylist(ann), pa.Table.from_pylist(samples)


@pytest.mark.parametrize("right", [True, False], ids=["perfect-agreement", "no-agreement"])
def test_a_collapsed_bootstrap_gives_wilson_for_a_share_and_no_interval_with_a_reason_otherwise(right):
    from statsmodels.stats.proportion import proportion_confint

    ann, samples = _agreeing_round(right)
    t = validate_metric(ann, samples, metric="vader", n_boot=200, seed=0, calibrate=False).table
    rows = {r["measure"]: r for r in t.to_pylist()}
    k = 12 if right else 0
    # before: precision_weighted 1.000 [1.000, 1.000] (every resample gives the same figure)
    assert rows["precision_weighted"]["estimate"] == float(right)
    for m in ("precision_weighted", "f1_weighted"):
        r = rows[m]
        assert (r["ci_low"], r["ci_high"], r["method"]) == (None, None, "none")
        assert r["reason"] == f"the bootstrap collapsed to a point (every resample gives {k // 12}): no interval"
    # the weighted recall is a share (it equals the accuracy, k of 12): Wilson's interval, as for the accuracy
    for m in ("recall_weighted", "accuracy"):
        r = rows[m]
        assert r["method"] == "wilson" and (r["ci_low"], r["ci_high"]) == pytest.approx(proportion_confint(k, 12, method="wilson"), abs=1e-12)
    assert all(r["ci_high"] > r["ci_low"] for r in rows.values() if r["ci_low"] is not None)
