"""Aggregation: hand-counted proportions, nulls counted (never dropped), seeded bootstrap CIs."""

import numpy as np
import pyarrow as pa
import pytest

from biaskit.errors import BiaskitError
from biaskit.evaluate.stats import aggregate, bootstrap_mean_ci, bootstrap_proportion_ci, label_proportions


def _tiny():
    # group A: positive, positive, negative, null (vader failed) ; group B: neutral, positive ; group null: negative
    return pa.table({
        "group": ["A", "A", "A", "A", "B", "B", None],
        "model": ["m"] * 7,
        "vader_label": ["positive", "positive", "negative", None, "neutral", "positive", "negative"],
        "vader_compound": [0.5, 0.7, -0.4, None, 0.0, 0.6, -0.9],
        "vader_error": [None, None, None, "empty text", None, None, None],
    })


def test_label_proportions_equal_hand_counts_and_nulls_are_counted():
    agg = aggregate(_tiny(), ["group"], labels=["vader_label"], n_boot=200, seed=1)
    a = agg[(agg.group == "A")].set_index("value")
    # A: 4 rows, 1 null -> n_valid 3; positive 2/3, negative 1/3, neutral 0/3
    assert a.loc["positive", "n"] == 4 and a.loc["positive", "n_valid"] == 3 and a.loc["positive", "n_null"] == 1
    assert a.loc["positive", "n_error"] == 1
    assert a.loc["positive", "count"] == 2 and a.loc["positive", "estimate"] == pytest.approx(2 / 3)
    assert a.loc["negative", "estimate"] == pytest.approx(1 / 3)
    assert a.loc["neutral", "count"] == 0 and a.loc["neutral", "estimate"] == 0.0
    b = agg[(agg.group == "B")].set_index("value")
    assert b.loc["neutral", "estimate"] == 0.5 and b.loc["positive", "estimate"] == 0.5
    # the row with a null group is its own group, not dropped: group sizes add up to the table
    assert set(agg.group) == {"A", "B", "(null)"}
    sizes = agg.drop_duplicates("group").set_index("group")["n"]
    assert sizes.sum() == 7


def test_means_equal_hand_arithmetic():
    agg = aggregate(_tiny(), ["group"], means=["vader_compound"], n_boot=200)
    a = agg[agg.group == "A"].iloc[0]
    # (0.5 + 0.7 - 0.4) / 3 = 0.2666..., the null is counted, not averaged as 0
    assert a["estimate"] == pytest.approx(0.8 / 3)
    assert a["n_valid"] == 3 and a["n_null"] == 1


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(0)
    t = pa.table({"group": list("AB" * 40), "vader_label": list(rng.choice(["positive", "neutral", "negative"], 80))})
    a1 = aggregate(t, "group", labels="vader_label", n_boot=300, seed=7)
    a2 = aggregate(t, "group", labels="vader_label", n_boot=300, seed=7)
    a3 = aggregate(t, "group", labels="vader_label", n_boot=300, seed=8)
    assert a1.equals(a2)
    assert not a1[["ci_low", "ci_high"]].equals(a3[["ci_low", "ci_high"]])
    ok = a1.dropna(subset=["estimate"])
    assert ((ok.ci_low <= ok.estimate + 1e-12) & (ok.estimate <= ok.ci_high + 1e-12)).all()


def test_bootstrap_proportion_ci_matches_scipy_bootstrap_and_normal_theory():
    from scipy.stats import bootstrap

    # 300 of 1000: the percentile bootstrap CI is close to p +- 1.96 sqrt(p(1-p)/n) = 0.3 +- 0.0284
    lo, hi = bootstrap_proportion_ci(300, 1000, n_boot=4000, rng=np.random.default_rng(0))
    data = np.r_[np.ones(300), np.zeros(700)]
    ref = bootstrap((data,), np.mean, n_resamples=4000, method="percentile", random_state=1).confidence_interval
    assert lo == pytest.approx(ref.low, abs=0.006) and hi == pytest.approx(ref.high, abs=0.006)
    assert lo == pytest.approx(0.3 - 0.0284, abs=0.006) and hi == pytest.approx(0.3 + 0.0284, abs=0.006)
    assert np.isnan(bootstrap_proportion_ci(0, 0)[0])


def test_bootstrap_mean_ci_matches_scipy_bootstrap():
    from scipy.stats import bootstrap

    x = np.random.default_rng(3).normal(2.0, 1.0, size=400)
    lo, hi = bootstrap_mean_ci(x, n_boot=3000, rng=np.random.default_rng(0))
    ref = bootstrap((x,), np.mean, n_resamples=3000, method="percentile", random_state=2).confidence_interval
    assert lo == pytest.approx(ref.low, abs=0.02) and hi == pytest.approx(ref.high, abs=0.02)


def test_label_proportions_wide_layout_and_boolean_labels():
    t = pa.table({"language": ["en", "en", "en", "pl"], "honest_hurtful": [True, False, None, True]})
    w = label_proportions(t, "honest_hurtful", "language", n_boot=50).set_index("language")
    assert w.loc["en", "prop_true"] == 0.5 and w.loc["en", "n_null"] == 1
    assert w.loc["pl", "prop_true"] == 1.0 and w.loc["pl", "count_false"] == 0


def test_missing_column_is_a_coded_error_naming_it():
    with pytest.raises(BiaskitError) as ei:
        aggregate(_tiny(), ["domain"], labels=["vader_label"])
    assert ei.value.code == "E080" and "'domain'" in str(ei.value)


def test_text_column_as_mean_is_rejected_with_fix():
    with pytest.raises(BiaskitError, match="labels="):
        aggregate(_tiny(), ["group"], means=["vader_label"])
    with pytest.raises(BiaskitError, match="nothing to aggregate"):
        aggregate(_tiny(), ["group"])
