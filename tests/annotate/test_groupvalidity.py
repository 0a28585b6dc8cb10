"""Per-group validity of a metric (annotate validate --by): rates per group, pairwise tests, Holm, A/A calibration."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from scipy import stats
from sklearn.metrics import accuracy_score, f1_score, recall_score

from biaskit.annotate.groupvalidity import group_rows
from biaskit.annotate.validation import validate_metric
from biaskit.errors import BiaskitError

LABELS = ["negative", "neutral", "positive"]


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
        assert r["value"] == pytest.approx(accuracy_score(yt, yp))
        assert r["n_items"] == 500 and r["group_by"] == "group" and r["note"] is None
        assert r["ci_low"] <= true_acc <= r["ci_high"]  # the true rate lies in the group's 95% CI
        rec = recall_score(yt, yp, labels=LABELS, average=None)
        for j, lab in enumerate(LABELS):
            (m,) = _rows(t, measure=f"group_miss_rate_{lab}", group=g)
            assert m["value"] == pytest.approx(1 - rec[j])
            neg = [p == lab for y, p in zip(yt, yp) if y != lab]  # false alarms: metric says lab, humans do not
            (fa,) = _rows(t, measure=f"group_false_alarm_rate_{lab}", group=g)
            assert fa["value"] == pytest.approx(np.mean(neg))
        (f,) = _rows(t, measure="group_f1_macro", group=g)
        assert f["value"] == pytest.approx(f1_score(yt, yp, labels=LABELS, average="macro"))
        (sp,) = _rows(t, measure="group_spearman_rho", group=g)
        assert sp["value"] == pytest.approx(stats.spearmanr([LABELS.index(y) for y in yt], [x["vader_compound"] for x in s if x["group"] == g])[0])
    (d,) = _rows(t, measure="diff_accuracy", group="A", group_b="B")
    assert d["value"] == pytest.approx(
        _rows(t, measure="group_accuracy", group="A")[0]["value"] - _rows(t, measure="group_accuracy", group="B")[0]["value"]
    )
    assert d["p_value"] < 0.01 and d["ci_low"] > 0
    (ra,) = _rows(t, measure="ratio_miss_rate_negative", group="A", group_b="B")
    assert ra["value"] < 1 and ra["ci_high"] < 1 and ra["p_value"] < 0.01


def test_permutation_p_matches_the_exact_hypergeometric_test_for_an_accuracy_difference():
    # 2 classes; group a: 40 of 50 right, group b: 30 of 50 right. Under permutation the number of correct
    # items falling in a is hypergeometric(M=100, n=70 correct, N=50); |d*| >= |d| <=> |x - 35| >= 5.
    yt = ["negative"] * 100
    yp = ["negative"] * 40 + ["positive"] * 10 + ["negative"] * 30 + ["positive"] * 20
    grp = ["a"] * 50 + ["b"] * 50
    rows = group_rows(yt, yp, grp, ["negative", "positive"], round="r", task="t", metric="m", by="g", n_boot=20000, seed=3)
    (d,) = [r for r in rows if r["measure"] == "diff_accuracy"]
    x = np.arange(0, 51)
    pmf = stats.hypergeom(100, 70, 50).pmf(x)
    exact = pmf[np.abs(x - 35) >= 5].sum()
    assert d["value"] == pytest.approx(0.2)
    assert d["p_value_raw"] == pytest.approx(exact, abs=0.006)


def test_holm_correction_over_pairs_and_small_groups_flagged_not_hidden():
    ann, samples = synthetic_round({"A": 0.9, "B": 0.7, "C": 0.8}, n=200, seed=5)
    # shrink C to 20 items: flagged, still reported
    keep = {r["sample_id"] for r in samples.to_pylist() if r["group"] != "C" or int(r["sample_id"][1:]) < 20}
    samples = samples.filter(pa.array([s in keep for s in samples.column("sample_id").to_pylist()]))
    ann = ann.filter(pa.array([s in keep for s in ann.column("sample_id").to_pylist()]))
    t = validate_metric(ann, samples, metric="vader", by="group", n_boot=500, seed=1, calibrate=False).table
    (c,) = _rows(t, measure="group_accuracy", group="C")
    assert c["n_items"] == 20 and c["note"] == "small group: n < 30" and c["value"] is not None
    d = _rows(t, measure="diff_accuracy")
    assert [(r["group"], r["group_b"]) for r in d] == [("A", "B"), ("A", "C"), ("B", "C")]
    # Holm by hand: sort raw p ascending, multiply the i-th (0-based) by (m - i), running maximum, cap at 1
    raw = np.array([r["p_value_raw"] for r in d])
    order = np.argsort(raw)
    adj = np.empty(3)
    run = 0.0
    for i, j in enumerate(order):
        run = max(run, min(1.0, (3 - i) * raw[j]))
        adj[j] = run
    assert [r["p_value"] for r in d] == pytest.approx(list(adj))
    assert all(r["note"] == "small group: n < 30" for r in d if "C" in (r["group"], r["group_b"]))


def test_a_a_metric_rejects_at_about_the_nominal_rate():
    """A/A: the metric is right 80% of the time in both groups (200 items each). Over 200 seeded repeats the
    permutation test of the accuracy difference at alpha = 0.05 should reject about 10 times; with
    Binomial(200, 0.05) the range 2..20 holds with probability > 0.99. Measured: 3 of 200 with these seeds,
    3.8% over 1,000 other seeded repeats (slightly conservative: permutations that tie the observed
    difference count as extreme)."""
    rejections = 0
    for rep in range(200):
        rng = np.random.default_rng(1000 + rep)
        yt = list(rng.choice(LABELS, size=400))
        yp = [t if rng.random() < 0.8 else LABELS[(LABELS.index(t) + 1 + rng.integers(2)) % 3] for t in yt]
        rows = group_rows(yt, yp, ["A"] * 200 + ["B"] * 200, LABELS, round="r", task="t", metric="m", by="g", n_boot=199, seed=rep)
        (d,) = [r for r in rows if r["measure"] == "diff_accuracy"]
        rejections += d["p_value"] < 0.05
    assert 2 <= rejections <= 20, rejections


def test_unknown_by_column_is_a_coded_error():
    ann, samples = synthetic_round({"A": 0.9}, n=10)
    with pytest.raises(BiaskitError, match=r"\[E255\].*'domain'"):
        validate_metric(ann, samples, metric="vader", by="domain", n_boot=0)


def test_vectorised_spearman_bootstrap_equals_the_loop_over_resamples():
    from biaskit.annotate.agreement import bootstrap_ci
    from biaskit.annotate.validation import _spearman_ci, spearman

    rng = np.random.default_rng(7)
    h = rng.integers(0, 3, size=257).astype(float)
    s = np.round(rng.normal(size=257), 1)  # many ties in the score too
    want = bootstrap_ci(lambda idx: spearman(h[idx], s[idx])[0], len(h), n_boot=300, seed=11)
    assert _spearman_ci(h, s, n_boot=300, seed=11) == pytest.approx(want, abs=1e-12)
