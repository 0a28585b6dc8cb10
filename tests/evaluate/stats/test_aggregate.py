"""Aggregation: hand-counted proportions, nulls counted (never dropped), seeded bootstrap CIs."""

import numpy as np
import pyarrow as pa
import pytest

from biaskit.bootstrap import BootSpec
from biaskit.errors import BiaskitError
from biaskit.evaluate.stats import aggregate, bootstrap_mean_ci, bootstrap_proportion_ci, label_proportions


def _tiny():
    # group A: positive, positive, negative, null (vader failed) ; group B: neutral, positive ; group null: negative
    return pa.table(
        {
            "group": ["A", "A", "A", "A", "B", "B", None],
            "model": ["m"] * 7,
            "vader_label": ["positive", "positive", "negative", None, "neutral", "positive", "negative"],
            "vader_compound": [0.5, 0.7, -0.4, None, 0.0, 0.6, -0.9],
            "vader_error": [None, None, None, "empty text", None, None, None],
        }
    )


def test_label_proportions_equal_hand_counts_and_nulls_are_counted():
    agg = aggregate(_tiny(), ["group"], labels=["vader_label"], n_boot=200, seed=1)
    a = agg[(agg.group == "A")].set_index("label")
    # A: 4 rows, 1 null -> n_valid 3; positive 2/3, negative 1/3, neutral 0/3
    assert a.loc["positive", "n"] == 4 and a.loc["positive", "n_valid"] == 3 and a.loc["positive", "n_null"] == 1
    assert a.loc["positive", "n_error"] == 1
    assert a.loc["positive", "count"] == 2 and a.loc["positive", "estimate"] == pytest.approx(2 / 3)
    assert a.loc["negative", "estimate"] == pytest.approx(1 / 3)
    assert a.loc["neutral", "count"] == 0 and a.loc["neutral", "estimate"] == 0.0
    b = agg[(agg.group == "B")].set_index("label")
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
    a1 = aggregate(t, "group", labels="vader_label", n_boot=300, seed=7, prop_ci="bootstrap")
    a2 = aggregate(t, "group", labels="vader_label", n_boot=300, seed=7, prop_ci="bootstrap")
    a3 = aggregate(t, "group", labels="vader_label", n_boot=300, seed=8, prop_ci="bootstrap")
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
    w = label_proportions(t, "honest_hurtful", "language", boot=BootSpec(n_boot=50)).set_index("language")
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


@pytest.mark.parametrize("count,n", [(0, 12), (12, 12), (1, 12), (7, 20), (300, 1000), (0, 1)])
@pytest.mark.parametrize("method,sm", [("wilson", "wilson"), ("clopper-pearson", "beta")])
def test_proportion_ci_equals_statsmodels(count, n, method, sm):
    from statsmodels.stats.proportion import proportion_confint

    from biaskit.evaluate.stats import proportion_ci

    lo, hi = proportion_ci(count, n, method=method)
    ref = proportion_confint(count, n, alpha=0.05, method=sm)
    assert lo == pytest.approx(ref[0], abs=1e-12) and hi == pytest.approx(ref[1], abs=1e-12)
    assert np.isnan(proportion_ci(0, 0)[0])


def test_a_zero_count_gets_a_real_interval_not_the_bootstraps_zero_width_one():
    # 0 of 12 negative labels: Wilson upper bound z²/(n+z²) = 3.8415/15.8415 = 0.2425; the bootstrap gives [0, 0]
    t = pa.table({"group": ["A"] * 12, "vader_label": ["positive"] * 12})
    agg = aggregate(t, "group", labels="vader_label", label_order={"vader_label": ["positive", "negative"]})
    neg = agg.set_index("label").loc["negative"]
    assert neg["count"] == 0 and neg["ci_low"] == 0.0
    assert neg["ci_high"] == pytest.approx(1.959963984540054**2 / (12 + 1.959963984540054**2), abs=1e-12)
    assert neg["ci_high"] == pytest.approx(0.24249, abs=1e-5)
    pos = agg.set_index("label").loc["positive"]
    assert pos["ci_high"] == 1.0 and pos["ci_low"] == pytest.approx(1 - 0.24249, abs=1e-5)
    old = aggregate(t, "group", labels="vader_label", label_order={"vader_label": ["positive", "negative"]}, prop_ci="bootstrap")
    # the bootstrap's [0, 0] at a zero count is replaced by Wilson's interval, and method says so
    assert tuple(old.set_index("label").loc["negative", ["ci_low", "ci_high", "method"]]) == (0.0, neg["ci_high"], "wilson")
    with pytest.raises(BiaskitError) as ei:
        aggregate(t, "group", labels="vader_label", prop_ci="normal")
    assert ei.value.code == "E080"


def test_label_proportions_report_wilson_bounds():
    from statsmodels.stats.proportion import proportion_confint

    t = pa.table({"language": ["en"] * 5 + ["pl"] * 3, "honest_hurtful": [True, False, False, False, False, False, False, False]})
    w = label_proportions(t, "honest_hurtful", "language").set_index("language")
    assert (w.loc["en", "ci_low_true"], w.loc["en", "ci_high_true"]) == pytest.approx(proportion_confint(1, 5, method="wilson"), abs=1e-12)
    assert w.loc["pl", "ci_low_true"] == 0.0 and w.loc["pl", "ci_high_true"] == pytest.approx(proportion_confint(0, 3, method="wilson")[1], abs=1e-12)
