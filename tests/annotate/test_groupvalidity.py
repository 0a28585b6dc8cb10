"""Per-group validity of a metric (annotate validate --by): rates per group, pairwise tests, Holm, A/A calibration."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from scipy import stats
from sklearn.metrics import accuracy_score, f1_score, recall_score
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from biaskit.annotate.groupvalidity import GroupedItems, RowKey, group_rows
from biaskit.annotate.validation import validate_metric
from biaskit.bootstrap import BootSpec
from biaskit.errors import BiaskitError

LABELS = ["negative", "neutral", "positive"]
#: the round, task, metric and --by column every row of these tests names
KEY = RowKey("r", "t", "m", "g")


def synthetic_round(acc: dict[str, float], n: int = 500, seed: int = 0):
    """Human truth (3 agreeing annotators) and a metric label that is right with probability acc[group]."""
    rng = np.random.default_rng(seed)
    samples, ann = [], []
    for g, a in acc.items():
        for i in range(n):
            sid = f"{g}{i:04d}"
            t = LABELS[rng.integers(3)]
            wrong = [x for x in LABELS if x != t]
            m = t if rng.random() < a else wrong[rng.integers(2)]
            score = {"negative": -0.5, "neutral": 0.0, "positive": 0.5}[m] + rng.normal(0, 0.1)
            samples.append(
                {
                    "sample_id": sid,
                    "round": "r1",
                    "task_type": "sentiment",
                    "text": "x",
                    "group": g,
                    "vader_label": m,
                    "vader_compound": score,
                    "is_gold": False,
                }
            )
            ann += [{"sample_id": sid, "round": "r1", "annotator": w, "label": t, "task_type": "sentiment"} for w in "abc"]
    return pa.Table.from_pylist(ann), pa.Table.from_pylist(samples)


def _rows(table, **where):
    return [r for r in table.to_pylist() if all(r.get(k) == v for k, v in where.items())]


def test_metric_right_90_vs_60_percent_is_recovered_per_group_and_the_difference_is_significant():
    ann, samples = synthetic_round({"A": 0.9, "B": 0.6})
    t = validate_metric(ann, samples, metric="vader", by="group", n_boot=1000, seed=0, calibrate=False).table
    s = samples.to_pylist()
    for g, true_acc in (("A", 0.9), ("B", 0.6)):
        (r,) = _rows(t, measure="group_accuracy", group=g)
        truth = {x["sample_id"]: x["label"] for x in ann.to_pylist() if x["annotator"] == "a"}
        yt = [truth[x["sample_id"]] for x in s if x["group"] == g]
        yp = [x["vader_label"] for x in s if x["group"] == g]
        assert r["estimate"] == pytest.approx(accuracy_score(yt, yp))
        assert r["n_items"] == 500 and r["group_by"] == "group" and r["note"] is None
        assert r["ci_low"] <= true_acc <= r["ci_high"]  # the true rate lies in the group's 95% CI
        rec = recall_score(yt, yp, labels=LABELS, average=None)
        for j, lab in enumerate(LABELS):
            (m,) = _rows(t, measure=f"group_miss_rate_{lab}", group=g)
            assert m["estimate"] == pytest.approx(1 - rec[j])
            neg = [p == lab for y, p in zip(yt, yp) if y != lab]  # false alarms: metric says lab, humans do not
            (fa,) = _rows(t, measure=f"group_false_alarm_rate_{lab}", group=g)
            assert fa["estimate"] == pytest.approx(np.mean(neg))
        (f,) = _rows(t, measure="group_f1_macro", group=g)
        assert f["estimate"] == pytest.approx(f1_score(yt, yp, labels=LABELS, average="macro"))
        (sp,) = _rows(t, measure="group_spearman_rho", group=g)
        assert sp["estimate"] == pytest.approx(stats.spearmanr([LABELS.index(y) for y in yt], [x["vader_compound"] for x in s if x["group"] == g])[0])
    (d,) = _rows(t, measure="diff_accuracy", group_a="A", group_b="B")
    assert d["estimate"] == pytest.approx(
        _rows(t, measure="group_accuracy", group="A")[0]["estimate"] - _rows(t, measure="group_accuracy", group="B")[0]["estimate"]
    )
    assert d["p_holm"] < 0.01 and d["ci_low"] > 0
    (ra,) = _rows(t, measure="ratio_miss_rate_negative", group_a="A", group_b="B")
    assert ra["estimate"] < 1 and ra["ci_high"] < 1 and ra["p_holm"] < 0.01


def test_accuracy_difference_is_fishers_exact_test_with_its_floor():
    # 2 classes; group a: 40 of 50 right, group b: 30 of 50 right: the 2x2 table (right, wrong) x (a, b)
    yt = ["negative"] * 100
    yp = ["negative"] * 40 + ["positive"] * 10 + ["negative"] * 30 + ["positive"] * 20
    grp = ["a"] * 50 + ["b"] * 50
    rows = group_rows(GroupedItems(yt, yp, grp), ["negative", "positive"], key=KEY, boot=BootSpec(n_boot=0, seed=3))
    (d,) = [r for r in rows if r["measure"] == "diff_accuracy"]
    assert d["estimate"] == pytest.approx(0.2)
    assert d["p_value"] == pytest.approx(stats.fisher_exact([[40, 10], [30, 20]]).pvalue, rel=1e-9)
    # the floor: the least likely table with these margins (all 70 right items in one group is impossible: 50 + 20)
    x = np.arange(20, 51)
    pmf = stats.hypergeom(100, 70, 50).pmf(x)
    assert d["p_floor"] == pytest.approx(pmf[pmf <= pmf.min() * (1 + 1e-7)].sum(), rel=1e-9)
    assert d["method"] == "newcombe hybrid score"
    assert (d["ci_low"], d["ci_high"]) == pytest.approx(confint_proportions_2indep(40, 50, 30, 50, method="newcomb"), abs=1e-9)


def test_an_all_correct_small_group_gets_wilsons_interval_not_a_point():
    yt = ["negative", "positive"] * 4 + ["negative"] * 40
    yp = ["negative", "positive"] * 4 + ["negative"] * 30 + ["positive"] * 10
    grp = ["small"] * 8 + ["big"] * 40
    rows = group_rows(GroupedItems(yt, yp, grp), ["negative", "positive"], key=KEY, boot=BootSpec(n_boot=0))
    (r,) = [x for x in rows if x["measure"] == "group_accuracy" and x["group"] == "small"]
    assert r["estimate"] == 1.0 and r["method"] == "wilson"
    assert (r["ci_low"], r["ci_high"]) == pytest.approx(proportion_confint(8, 8, method="wilson"), abs=1e-12)
    assert round(r["ci_low"], 3) == 0.676


def test_holm_within_the_primary_and_secondary_fairness_families_and_small_groups_flagged_not_hidden():
    ann, samples = synthetic_round({"A": 0.9, "B": 0.7, "C": 0.8}, n=200, seed=5)
    # shrink C to 20 items: flagged, still reported
    keep = {r["sample_id"] for r in samples.to_pylist() if r["group"] != "C" or int(r["sample_id"][1:]) < 20}
    samples = samples.filter(pa.array([s in keep for s in samples.column("sample_id").to_pylist()]))
    ann = ann.filter(pa.array([s in keep for s in ann.column("sample_id").to_pylist()]))
    t = validate_metric(ann, samples, metric="vader", by="group", n_boot=200, seed=1, calibrate=False).table
    (c,) = _rows(t, measure="group_accuracy", group="C")
    assert c["n_items"] == 20 and c["note"] == "small group: n < 30" and c["estimate"] is not None
    d = _rows(t, measure="diff_accuracy")
    assert [(r["group_a"], r["group_b"]) for r in d] == [("A", "B"), ("A", "C"), ("B", "C")]
    # the report's two families (evaluate/stats/families.py): primary = accuracy of the 3 pairs, secondary = miss and
    # false-alarm rate of 3 classes = 6 rates x 3 pairs = 18 tests; Holm within each, as statsmodels computes it
    fam = [r for r in t.to_pylist() if r["measure"].startswith("diff_") and r["p_value"] is not None]
    primary = [r for r in fam if r["measure"] == "diff_accuracy"]
    secondary = [r for r in fam if r["measure"] != "diff_accuracy"]
    assert (len(primary), len(secondary)) == (3, 18)
    assert {r["family_size"] for r in primary} == {3} and {r["family_size"] for r in secondary} == {18}
    assert {r["family"] for r in primary} == {"metric fairness, primary (accuracy): metric=vader; group_by=group"}
    assert {r["family"] for r in secondary} == {"metric fairness, secondary (miss and false-alarm rates): metric=vader; group_by=group"}
    for rows in (primary, secondary):
        want = multipletests([r["p_value"] for r in rows], method="holm")[1]
        assert [r["p_holm"] for r in rows] == pytest.approx(list(want), rel=1e-12)
    # a ratio row is the same test as its difference row: the same raw and corrected p
    ratio = {(r["measure"][len("ratio_") :], r["group_a"], r["group_b"]): r for r in t.to_pylist() if r["measure"].startswith("ratio_")}
    for r in fam:
        twin = ratio[(r["measure"][len("diff_") :], r["group_a"], r["group_b"])]
        assert (twin["p_value"], twin["p_holm"], twin["family"]) == (r["p_value"], r["p_holm"], r["family"])
    assert all(r["note"] == "small group: n < 30" for r in d if "C" in (r["group_a"], r["group_b"]))
    # every interval names its method and none has zero width
    for r in t.to_pylist():
        if r["ci_low"] is not None:
            assert r["method"] and r["ci_high"] > r["ci_low"], r


def _planted(acc: list[float], n: int, rng):
    """Binary labels; the metric is right with probability acc[g] in group g (n items each)."""
    yt = rng.choice(["negative", "positive"], size=(len(acc), n))
    right = rng.random((len(acc), n)) < np.array(acc)[:, None]
    yp = np.where(right, yt, np.where(yt == "negative", "positive", "negative"))
    grp = np.repeat([f"g{i}" for i in range(len(acc))], n)
    return list(yt.ravel()), list(yp.ravel()), list(grp)


def test_planted_group_at_60_percent_among_six_at_90_is_significant_and_a_a_is_not():
    rng = np.random.default_rng(11)
    rows = group_rows(GroupedItems(*_planted([0.6] + [0.9] * 6, 100, rng)), ["negative", "positive"], key=KEY, boot=BootSpec(n_boot=0))
    acc = [r for r in rows if r["measure"] == "diff_accuracy"]
    sig = {(r["group_a"], r["group_b"]) for r in acc if r["p_holm"] < 0.05}
    assert {("g0", f"g{i}") for i in range(1, 7)} <= sig  # every pair with the planted group
    assert not {p for p in sig if "g0" not in p}
    rows = group_rows(GroupedItems(*_planted([0.9] * 7, 100, rng)), ["negative", "positive"], key=KEY, boot=BootSpec(n_boot=0))
    assert not [r for r in rows if r["measure"].startswith("diff_") and r["p_holm"] is not None and r["p_holm"] < 0.05]


def test_family_wise_false_positive_rate_over_200_a_a_rounds_is_at_most_alpha():
    """200 A/A rounds (7 groups x 100 items, metric right 90% everywhere): a round is a false positive when any test
    of either metric-fairness family (21 pairs x accuracy; 21 pairs x 4 other rates) has a corrected p < 0.05. Holm
    keeps that rate <= 0.05 within each family (the union of both is counted here, a stricter count);
    with 200 rounds the Monte Carlo SE at 0.05 is 0.015, so the bound is 0.05 + 2 SE = 0.08. (Fisher's test is
    conservative, so the measured rate is well below: 0 to 2 rounds with these seeds.)"""
    rng = np.random.default_rng(12)
    hits = 0
    for _ in range(200):
        rows = group_rows(GroupedItems(*_planted([0.9] * 7, 100, rng)), ["negative", "positive"], key=KEY, boot=BootSpec(n_boot=0))
        hits += any(r["p_holm"] is not None and r["p_holm"] < 0.05 for r in rows if r["measure"].startswith("diff_"))
    assert hits / 200 <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 200), hits


def test_unknown_by_column_is_a_coded_error():
    ann, samples = synthetic_round({"A": 0.9}, n=10)
    with pytest.raises(BiaskitError, match=r"\[E255\].*'domain'"):
        validate_metric(ann, samples, metric="vader", by="domain", n_boot=0)


def test_group_spearman_and_f1_intervals_are_scipys_bca_bootstrap():
    from biaskit.annotate.groupvalidity import _spearman_stat

    rng = np.random.default_rng(2)
    h = rng.integers(0, 3, 60).astype(float)
    sc = h + rng.normal(0, 1.0, 60)
    yt = [LABELS[int(x)] for x in h]
    yp = [LABELS[int(min(2, max(0, round(v))))] for v in sc]
    rows = group_rows(GroupedItems(yt, yp, ["A"] * 60, h_rank=list(h), score=list(sc)), LABELS, key=KEY, boot=BootSpec(n_boot=300, seed=4))
    (r,) = [x for x in rows if x["measure"] == "group_spearman_rho"]
    ref = stats.bootstrap((h, sc), _spearman_stat, paired=True, vectorized=True, method="BCa", n_resamples=300, random_state=np.random.default_rng(4))
    assert r["method"] == "BCa bootstrap"
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high), rel=1e-9)
    assert _spearman_stat(h, sc) == pytest.approx(stats.spearmanr(h, sc)[0], rel=1e-12)
    (f,) = [x for x in rows if x["measure"] == "group_f1_macro"]
    from biaskit.annotate.groupvalidity import _f1_interval

    codes = np.array([LABELS.index(a) * 3 + LABELS.index(b) for a, b in zip(yt, yp)])
    assert f["method"] == "BCa bootstrap" and (f["ci_low"], f["ci_high"]) == pytest.approx(_f1_interval(codes, LABELS, BootSpec(n_boot=300, seed=4)))
    # ... and the statistic behind it is scikit-learn's macro-F1 (over the classes present), on random item sets
    from biaskit.annotate.groupvalidity import _batch_confusion, _rates_from_cm

    sets = np.random.default_rng(9).integers(0, 9, size=(5, 60))
    cms = _batch_confusion(sets, 9).reshape(5, 3, 3)
    for one, got in zip(sets, _rates_from_cm(cms, LABELS)["f1_macro"]):
        t_, p_ = [LABELS[k // 3] for k in one], [LABELS[k % 3] for k in one]
        assert got == pytest.approx(f1_score(t_, p_, labels=sorted(set(t_) | set(p_)), average="macro"))


def test_vectorised_spearman_bootstrap_equals_the_loop_over_resamples():
    from biaskit.annotate.agreement import bootstrap_ci
    from biaskit.annotate.rankstats import spearman
    from biaskit.annotate.validation import _spearman_ci

    rng = np.random.default_rng(7)
    h = rng.integers(0, 3, size=257).astype(float)
    s = np.round(rng.normal(size=257), 1)  # many ties in the score too
    want = bootstrap_ci(lambda idx: spearman(h[idx], s[idx])[0], len(h), n_boot=300, seed=11)
    assert _spearman_ci(h, s, BootSpec(n_boot=300, seed=11)) == pytest.approx(want, abs=1e-12)
