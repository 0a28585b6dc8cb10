"""Tests between groups against scipy / statsmodels and hand arithmetic."""

import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from scipy.stats import chi2_contingency, mannwhitneyu
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportions_ztest

from biaskit.errors import BiaskitError
from biaskit.evaluate.stats import (
    chi2_by,
    chi2_homogeneity,
    cohen_h,
    correct_pvalues,
    mann_whitney,
    pairwise_mann_whitney,
    pairwise_proportion_tests,
    two_proportion_ztest,
)


@pytest.mark.parametrize("ca,na,cb,nb", [(45, 100, 30, 100), (1234, 3000, 1190, 3000), (3, 17, 9, 21), (0, 10, 4, 10)])
def test_two_proportion_ztest_equals_statsmodels(ca, na, cb, nb):
    z_ref, p_ref = proportions_ztest([ca, cb], [na, nb])
    r = two_proportion_ztest(ca, na, cb, nb)
    assert r["z"] == pytest.approx(z_ref, rel=1e-12) and r["p_value"] == pytest.approx(p_ref, rel=1e-10)
    assert r["diff"] == pytest.approx(ca / na - cb / nb)


def test_two_proportion_ztest_by_hand():
    # 45/100 vs 30/100: pooled p = 75/200 = 0.375, se = sqrt(.375*.625*(2/100)) = 0.068465
    # z = 0.15 / 0.068465 = 2.19089; two-sided p = 0.028460
    r = two_proportion_ztest(45, 100, 30, 100)
    assert r["z"] == pytest.approx(2.19089, abs=1e-5) and r["p_value"] == pytest.approx(0.028460, abs=1e-6)
    # Cohen's h = 2 asin(sqrt .45) - 2 asin(sqrt .30) = 1.47063 - 1.15928 = 0.31135
    assert r["cohen_h"] == pytest.approx(0.31135, abs=1e-4) == cohen_h(0.45, 0.30)


def test_two_proportion_ztest_degenerate_and_bad_input():
    r = two_proportion_ztest(0, 5, 0, 7)
    assert math.isnan(r["z"]) and math.isnan(r["p_value"])
    with pytest.raises(BiaskitError, match="E080"):
        two_proportion_ztest(6, 5, 1, 5)


def test_chi2_homogeneity_equals_scipy_and_hand_value():
    # [[10, 20], [20, 10]]: every expected count is 15; chi2 = 4 * 25 / 15 = 6.6667, dof 1,
    # Cramér's V = sqrt(6.6667 / 60) = 0.3333
    r = chi2_homogeneity([[10, 20], [20, 10]])
    assert r["chi2"] == pytest.approx(20 / 3) and r["dof"] == 1 and r["cramers_v"] == pytest.approx(1 / 3)
    m = np.array([[120, 60, 20], [90, 80, 30], [70, 70, 60]])
    ref = chi2_contingency(m)
    r = chi2_homogeneity(m)
    assert r["chi2"] == pytest.approx(ref.statistic) and r["p_value"] == pytest.approx(ref.pvalue) and r["dof"] == 4
    # all-zero column (a label no group used) is removed, not an error
    assert chi2_homogeneity([[10, 20, 0], [20, 10, 0]])["chi2"] == pytest.approx(20 / 3)


def test_mann_whitney_equals_scipy_and_rank_biserial_by_hand():
    a, b = [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]
    r = mann_whitney(a, b)
    # every a below every b: U_a = 0, rank-biserial = 2*0/9 - 1 = -1
    assert r["u"] == 0 and r["rank_biserial"] == -1
    rng = np.random.default_rng(0)
    x, y = rng.normal(0, 1, 40), rng.normal(0.5, 1, 35)
    ref = mannwhitneyu(x, y, alternative="two-sided")
    r = mann_whitney(list(x) + [None, float("nan")], y)
    assert r["u"] == ref.statistic and r["p_value"] == pytest.approx(ref.pvalue) and r["n_a"] == 40


@pytest.mark.parametrize("method,sm", [("holm", "holm"), ("bh", "fdr_bh")])
def test_corrections_equal_statsmodels(method, sm):
    p = [0.01, 0.04, 0.03, 0.20, 0.005, 0.5]
    assert correct_pvalues(p, method) == pytest.approx(list(multipletests(p, method=sm)[1]))
    # a nan is kept and not counted as a test
    out = correct_pvalues([0.01, float("nan"), 0.04], method)
    assert math.isnan(out[1]) and out[0] == pytest.approx(multipletests([0.01, 0.04], method=sm)[1][0])
    # None (a test that could not be run) is missing too, not a TypeError
    out = correct_pvalues([0.01, None, 0.04], method)
    assert math.isnan(out[1]) and out[2] == pytest.approx(multipletests([0.01, 0.04], method=sm)[1][1])


@pytest.mark.parametrize("bad,msg", [(["0.1", "x"], "not a number"), ([0.1, 1.5], "outside [0, 1]"), ([-2.3], "outside")])
def test_corrections_reject_values_that_are_not_pvalues(bad, msg):
    with pytest.raises(BiaskitError) as e:
        correct_pvalues(bad, "holm")
    assert e.value.code == "E080" and msg in str(e.value)


def test_unknown_correction_lists_options():
    with pytest.raises(BiaskitError, match="holm"):
        correct_pvalues([0.1], "bonf")


def _groups_table():
    # F: 30/50 positive, M: 20/50 positive, X: 10/20 positive (+1 null label in X)
    rows = []
    for g, pos, n in (("F", 30, 50), ("M", 20, 50), ("X", 10, 20)):
        rows += [{"group": g, "model": "m1", "vader_label": "positive" if i < pos else "negative", "vader_compound": float(i)} for i in range(n)]
    rows.append({"group": "X", "model": "m1", "vader_label": None, "vader_compound": None})
    return pa.Table.from_pylist(rows)


def test_pairwise_proportion_tests_apply_holm_within_the_family():
    res = pairwise_proportion_tests(_groups_table(), "group", "vader_label", "positive", within="model")
    assert list(zip(res.group_a, res.group_b)) == [("F", "M"), ("F", "X"), ("M", "X")]
    raw = [proportions_ztest([30, 20], [50, 50])[1], proportions_ztest([30, 10], [50, 20])[1], proportions_ztest([20, 10], [50, 20])[1]]
    assert list(res.p_value) == pytest.approx(raw)
    assert list(res.p_adjusted) == pytest.approx(list(multipletests(raw, method="holm")[1]))
    x = res[res.group_b == "X"].iloc[0]
    assert x.n_b == 20 and x.n_null_b == 1


def test_pairwise_mann_whitney_and_chi2_by():
    res = pairwise_mann_whitney(_groups_table(), "group", "vader_compound")
    fm = res[(res.group_a == "F") & (res.group_b == "M")].iloc[0]
    ref = mannwhitneyu(np.arange(50.0), np.arange(50.0))
    assert fm.p_value == pytest.approx(ref.pvalue) and fm.n_a == 50
    c = chi2_by(_groups_table(), "group", "vader_label", within="model").iloc[0]
    ref = chi2_contingency(np.array([[20, 30], [30, 20], [10, 10]]), correction=False)  # rows F, M, X; cols negative, positive
    assert c.chi2 == pytest.approx(ref.statistic) and c.p_value == pytest.approx(ref.pvalue) and c.n_null == 1 and c.groups == 3


def test_pairs_must_name_existing_groups():
    with pytest.raises(BiaskitError) as ei:
        pairwise_proportion_tests(_groups_table(), "group", "vader_label", "positive", pairs=[("F", "Q")])
    assert "'Q'" in str(ei.value) and "'F'" in str(ei.value)


def test_given_pairs_are_tested_only_where_both_groups_occur():
    # wikipedia vs gpt2 per group: group g2 has no wikipedia rows, so its family has no pair (not an error)
    t = pa.table(
        {
            "group": ["g1"] * 4 + ["g2"] * 2,
            "model": ["wikipedia", "wikipedia", "gpt2", "gpt2", "gpt2", "gpt2"],
            "vader_label": ["positive", "negative", "negative", "negative", "positive", "positive"],
        }
    )
    res = pairwise_proportion_tests(t, "model", "vader_label", "positive", within="group", pairs=[("wikipedia", "gpt2")])
    assert list(res.group) == ["g1"] and (res.p_a[0], res.p_b[0]) == (0.5, 0.0)
    # 2 texts per side: the z-test's condition fails (expected counts 0.5), so the p is Fisher's exact test
    from scipy.stats import fisher_exact

    assert res.method[0] == "fisher-exact" and res.p_value[0] == pytest.approx(fisher_exact([[1, 1], [0, 2]]).pvalue)


def test_fast_mann_whitney_equals_scipy_on_random_samples():
    # both of scipy's branches: exact (n <= 8, no ties), asymptotic (larger or tied), heavy ties, all equal
    rng = np.random.default_rng(11)
    cases = []
    for _ in range(150):
        n1, n2 = rng.integers(1, 15, size=2)
        kind = rng.integers(0, 3)
        if kind == 0:
            a, b = rng.normal(0, 1, n1), rng.normal(rng.uniform(0, 1.5), 1, n2)
        elif kind == 1:
            a, b = rng.integers(0, 4, n1).astype(float), rng.integers(0, 5, n2).astype(float)
        else:
            a, b = np.round(rng.exponential(1, n1), 1), np.round(rng.exponential(1.5, n2), 1)
        cases.append((a, b))
    cases.append((np.ones(5), np.ones(4)))
    for a, b in cases:
        ref = mannwhitneyu(a, b, alternative="two-sided")
        r = mann_whitney(a, b)
        assert r["u"] == pytest.approx(ref.statistic)
        if np.isnan(ref.pvalue):
            assert np.isnan(r["p_value"])
        else:
            assert r["p_value"] == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15), (a, b)


def test_holm_equals_statsmodels_to_the_bit():
    from biaskit.evaluate.stats.significance import holm

    rng = np.random.default_rng(7)
    cases = [[0.3], [0.01, 0.01, 0.02], [0.9, 0.8, 0.7, 0.6]] + [list(rng.random(int(rng.integers(2, 60))) ** 3) for _ in range(200)]
    cases += [list(np.round(rng.random(40), 2)) for _ in range(50)]  # many ties
    # statsmodels' holm runs gc.collect() per call (seconds each in this big test process, ~40 ms even in a fresh
    # one): the reference values come from a fresh interpreter whose imported objects are frozen out of the
    # collector's walks (gc.freeze), where the 253 calls take well under a second
    script = (
        "import gc, json, sys; from statsmodels.stats.multitest import multipletests as m; gc.freeze(); "
        "print(json.dumps([m(p, method='holm')[1].tolist() for p in json.load(sys.stdin)]))"
    )
    ref = json.loads(
        subprocess.run(
            [sys.executable, "-c", script], input=json.dumps([[float(x) for x in p] for p in cases]), capture_output=True, text=True, check=True
        ).stdout
    )
    for p, expected in zip(cases, ref, strict=True):
        assert holm(p).tolist() == expected
    # by hand: sorted 0.01, 0.03, 0.04 -> 3 * 0.01 = 0.03, max(0.03, 2 * 0.03) = 0.06, max(0.06, 1 * 0.04) = 0.06
    assert holm([0.04, 0.01, 0.03]).tolist() == pytest.approx([0.06, 0.03, 0.06])
    assert holm([0.5, 0.6]).tolist() == [1.0, 1.0] and holm([]).size == 0  # 2 * 0.5 = 1.0; max(1.0, 0.6) capped at 1


def test_ztest_cli_names_the_corrected_p_as_the_report_does(tmp_path):
    # one vocabulary: stats ztest wrote p_adjusted/significant where the report and stats family write p_holm
    from typer.testing import CliRunner

    from biaskit.cli import app
    from biaskit.io import write_table

    src, out = tmp_path / "t.parquet", tmp_path / "z.csv"
    write_table(_groups_table(), src)
    base = ["stats", "ztest", str(src), "--column", "vader_label", "--label", "positive", "--within", "model", "--cluster", "none", "--out", str(out)]
    res = CliRunner().invoke(app, base)
    assert res.exit_code == 0, res.output
    z = pd.read_csv(out)
    assert {"diff", "p_value", "p_holm", "significant_holm", "method", "reason"} <= set(z.columns) and "p_adjusted" not in z.columns
    for _, fam in z.groupby("model"):
        assert list(fam.p_holm) == pytest.approx(list(multipletests(list(fam.p_value), method="holm")[1]))
    res = CliRunner().invoke(app, [*base, "--correction", "bh"])
    assert res.exit_code == 0, res.output
    z = pd.read_csv(out)
    assert "p_bh" in z.columns and "p_holm" not in z.columns
    for _, fam in z.groupby("model"):
        assert list(fam.p_bh) == pytest.approx(list(multipletests(list(fam.p_value), method="fdr_bh")[1]))
