"""Cluster-robust (CR1) intervals: equality with statsmodels, coverage under page-level variation, the cluster
bootstrap, and `stats ztest --cluster`."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from biaskit.bootstrap import BootSpec
from biaskit.errors import BiaskitError
from biaskit.evaluate.stats.cluster import (
    cluster_bootstrap_ci,
    clustered_share_ci,
    cr1_diff,
    cr1_diff_batch,
    cr1_mean,
    default_cluster_column,
    resolve_cluster,
)


def _sm_fit(y, X, groups):
    import statsmodels.api as sm

    return sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=False)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("shared", [False, True])
def test_cr1_difference_equals_statsmodels_ols_cluster(seed, shared):
    # shared=True: clusters hold rows of both groups (a template filled with two descriptors)
    rng = np.random.default_rng(seed)
    n = 400
    a = rng.random(n) < 0.45
    cl = rng.integers(0, 30, n) if shared else np.where(a, rng.integers(0, 17, n), 100 + rng.integers(0, 23, n))
    y = (rng.random(n) < 0.25 + 0.1 * a + 0.02 * (cl % 5)).astype(float)
    r = cr1_diff(y, a, cl)
    f = _sm_fit(y, np.column_stack([np.ones(n), a.astype(float)]), cl)
    assert r["diff"] == pytest.approx(f.params[1], abs=1e-12)
    assert abs(r["se"] - f.bse[1]) < 1e-9
    assert abs(r["ci_low"] - f.conf_int(alpha=0.05)[1][0]) < 1e-9
    assert abs(r["ci_high"] - f.conf_int(alpha=0.05)[1][1]) < 1e-9
    assert abs(r["p_value"] - f.pvalues[1]) < 1e-9
    assert r["method"] == "cr1-wald" and r["n_clusters"] == len(set(cl.tolist()))


def test_cr1_mean_equals_statsmodels_intercept_only():
    rng = np.random.default_rng(5)
    cl = rng.integers(0, 12, 200)
    y = (rng.random(200) < 0.3).astype(float)
    r = cr1_mean(y, [f"page-{c}" for c in cl])  # string ids work as well as integers
    f = _sm_fit(y, np.ones(200), cl)
    assert abs(r["se"] - f.bse[0]) < 1e-9
    assert abs(r["ci_low"] - f.conf_int()[0][0]) < 1e-9


def _simulate(rng, sims: int, pages: int = 60, per_page: int = 40):
    """Page rates ~ Beta(2, 6) for both groups (no true gap), 40 sentences per page, 60 pages per group."""
    rates = rng.beta(2, 6, size=(sims, 2 * pages))
    y = (rng.random((sims, 2 * pages, per_page)) < rates[:, :, None]).astype(float)
    return y.reshape(sims, -1)


def test_clustered_intervals_cover_zero_under_page_level_variation(capsys):
    rng = np.random.default_rng(20261202)
    pages, per_page, sims = 60, 40, 1000
    y = _simulate(rng, sims, pages, per_page)
    page = np.repeat(np.arange(2 * pages), per_page)
    in_a = page < pages
    r = cr1_diff_batch(y, in_a, page)
    for s in (0, 1, 999):  # the batch is cr1_diff on each set
        one = cr1_diff(y[s], in_a, page)
        assert abs(one["se"] - r["se"][s]) < 1e-12 and abs(one["ci_low"] - r["ci_low"][s]) < 1e-12
    cover_cr1 = np.mean((r["ci_low"] <= 0) & (0 <= r["ci_high"]))
    # iid Wald interval of a difference of two shares (what biaskit printed before --cluster)
    pa, pb, n = y[:, in_a].mean(axis=1), y[:, ~in_a].mean(axis=1), pages * per_page
    se = np.sqrt(pa * (1 - pa) / n + pb * (1 - pb) / n)
    cover_iid = np.mean(np.abs(pa - pb) <= 1.959963984540054 * se)
    ratio = float(np.mean(r["se"] / se))
    with capsys.disabled():
        print(f"\ncoverage of 0 over {sims} sets: CR1 {cover_cr1:.3f}, iid {cover_iid:.3f}; CR1/iid half-width {ratio:.2f}")
    assert cover_cr1 >= 0.93
    assert cover_iid < 0.75  # the iid interval is far too narrow here
    assert 1.9 < ratio < 2.6  # statistics.md: about 2.2 times as wide


def test_clustered_share_interval_is_wilson_on_the_effective_size_and_never_zero_width():
    rng = np.random.default_rng(3)
    y = _simulate(rng, 1)[0][:2400]
    page = np.repeat(np.arange(60), 40)
    r = clustered_share_ci(y, page)
    from statsmodels.stats.proportion import proportion_confint

    # deff = CR1 variance / iid variance; Wilson of the share on n / deff (hand: statsmodels' Wilson with that n)
    se = cr1_mean(y, page)["se"]
    deff = se**2 / (np.var(y, ddof=1) / y.size)
    assert r["deff"] == pytest.approx(deff, rel=1e-12)
    lo, hi = proportion_confint(y.mean() * (y.size / deff), y.size / deff, 0.05, method="wilson")
    assert (r["ci_low"], r["ci_high"]) == pytest.approx((lo, hi), abs=1e-12)
    zero = clustered_share_ci(np.zeros(80), np.repeat(np.arange(8), 10))
    assert zero["ci_low"] == 0.0 and zero["ci_high"] > 0.04  # Wilson 0 of 80: [0, 0.0458]


def test_cluster_bootstrap_matches_the_sandwich_width_and_covers():
    rng = np.random.default_rng(11)
    page = np.repeat(np.arange(60), 40)
    y = _simulate(rng, 200)[:, :2400]
    cover = 0
    ratio = []
    for s in range(200):
        lo, hi = cluster_bootstrap_ci(y[s], page, boot=BootSpec(n_boot=300, seed=s))
        cover += lo <= 0.25 <= hi  # Beta(2, 6) has mean 0.25
        c = cr1_mean(y[s], page)
        ratio.append((hi - lo) / (c["ci_high"] - c["ci_low"]))
    assert cover / 200 >= 0.9
    assert 0.85 < np.mean(ratio) < 1.1


def test_cluster_column_resolution():
    df = pd.DataFrame({"page_id": [1, 2], "template": ["a", "b"], "x": [0, 1]})
    assert default_cluster_column(df) == "page_id"
    assert default_cluster_column(df.drop(columns="page_id")) == "template"
    assert resolve_cluster(df, "none") is None and resolve_cluster(df, "auto") == "page_id"
    with pytest.raises(BiaskitError) as e:
        resolve_cluster(df, "pgae_id")
    assert e.value.code == "E340"
    with pytest.raises(BiaskitError) as e:
        cr1_diff([1.0, 0.0], [True, True], [1, 2])
    assert e.value.code == "E341"


def test_ztest_cli_with_cluster_writes_diff_and_cr1_interval(tmp_path):
    from typer.testing import CliRunner

    from biaskit.cli import app

    rng = np.random.default_rng(7)
    rows = []
    for g in ("a", "b"):
        for p in range(30):  # MIN_CLUSTERS_CR1 pages per group: CR1 (= statsmodels); fewer get CR2 (test_cluster_small)
            rate = rng.beta(2, 6)
            for _ in range(12):
                rows.append({"group": g, "page_id": f"{g}{p}", "vader_label": "positive" if rng.random() < rate else "negative"})
    df = pd.DataFrame(rows)
    src = tmp_path / "s.csv"
    df.to_csv(src, index=False)
    out = tmp_path / "z.csv"
    res = CliRunner().invoke(
        app, ["stats", "ztest", str(src), "--column", "vader_label", "--label", "positive", "--cluster", "page_id", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    z = pd.read_csv(out)
    y = (df["vader_label"] == "positive").to_numpy(float)
    f = _sm_fit(y, np.column_stack([np.ones(len(df)), (df["group"] == "a").to_numpy(float)]), df["page_id"].to_numpy())
    assert abs(z.loc[0, "diff"] - f.params[1]) < 1e-9
    assert abs(z.loc[0, "ci_low"] - f.conf_int()[1][0]) < 1e-9 and abs(z.loc[0, "ci_high"] - f.conf_int()[1][1]) < 1e-9
    assert abs(z.loc[0, "p_value"] - f.pvalues[1]) < 1e-9
    assert z.loc[0, "method"] == "cr1-wald" and z.loc[0, "cluster"] == "page_id" and z.loc[0, "n_clusters"] == 60
    # --cluster none: Newcombe's interval (statsmodels confint_proportions_2indep method "newcomb")
    res = CliRunner().invoke(
        app, ["stats", "ztest", str(src), "--column", "vader_label", "--label", "positive", "--cluster", "none", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    z = pd.read_csv(out)
    from statsmodels.stats.proportion import confint_proportions_2indep

    lo, hi = confint_proportions_2indep(
        int(z.loc[0, "count_a"]), int(z.loc[0, "n_a"]), int(z.loc[0, "count_b"]), int(z.loc[0, "n_b"]), method="newcomb"
    )
    assert z.loc[0, "method"] == "newcombe"
    assert abs(z.loc[0, "ci_low"] - lo) < 1e-12 and abs(z.loc[0, "ci_high"] - hi) < 1e-12


def test_one_cluster_per_group_gives_no_interval_and_no_p_never_a_zero_width_one():
    """The demo's case: each group's texts all come from one page. The sandwich is 0 up to rounding (each group's
    residuals sum to 0 within its only cluster), so CR1 cannot estimate the between-page variance: nan and the
    reason, where a z of 1e16 and p = 0 ("evidence of a gap" from 1 of 5 vs 0 of 4) came out before."""
    from biaskit.evaluate.stats.cluster import cr1_diff
    from biaskit.evaluate.stats.families import proportion_family_tests

    y = np.array([1, 0, 0, 0, 0, 0, 0, 0, 0], dtype=float)
    a = np.array([True] * 5 + [False] * 4)
    r = cr1_diff(y, a, ["p1"] * 5 + ["p2"] * 4)
    assert all(math.isnan(r[k]) for k in ("se", "z", "p_value", "ci_low", "ci_high")) and "fewer than 2 clusters" in r["undefined"]
    # two clusters in one group and one in the other: still undefined
    r = cr1_diff(y, a, ["p1", "p1", "p3", "p3", "p3", "p2", "p2", "p2", "p2"])
    assert math.isnan(r["p_value"]) and "(2 and 1)" in r["undefined"]
    # two pages per group: defined, and equal to statsmodels (the module's equality test covers the figures)
    r = cr1_diff(y, a, ["p1", "p1", "p3", "p3", "p3", "p2", "p2", "p4", "p4"])
    assert r["undefined"] is None and r["se"] > 0 and 0 < r["p_value"] < 1
    df = pd.DataFrame(
        {"domain": "gender", "model": "m", "group": ["men"] * 5 + ["women"] * 4, "page_id": ["p1"] * 5 + ["p2"] * 4}
        | {"vader_label": ["positive"] + ["neutral"] * 8}
    )
    t = proportion_family_tests(df, "group_gap", "vader_label", "positive")
    row = t.iloc[0]
    assert row["method"] == "none" and math.isnan(row["p_value"]) and math.isnan(row["ci_low"]) and math.isnan(row["p_holm"])
    assert "fewer than 3 clusters (1 and 1)" in row["reason"] and row["significant_holm"] is None


def _cr2_mean_by_hand(y, cl):
    """CR2 of y ~ 1 and Bell-McCaffrey df written out with explicit matrices (no biaskit code): A_c = (I - H_cc)^(-1/2),
    V = M sum_c X_c' A_c e_c e_c' A_c X_c M with M = (X'X)^-1 = 1/n; g_c = (I - H)[c rows]' A_c X_c M, G = [g_c],
    df = tr(G'G)^2 / tr((G'G)^2)."""
    from scipy.linalg import sqrtm

    n = len(y)
    x = np.ones((n, 1))
    m = np.linalg.inv(x.T @ x)
    h = x @ m @ x.T
    e = y - y.mean()
    v, cols = 0.0, []
    for c in np.unique(cl):
        idx = np.flatnonzero(cl == c)
        a = np.real(np.linalg.inv(sqrtm(np.eye(len(idx)) - h[np.ix_(idx, idx)])))
        u = (m @ x[idx].T @ a @ e[idx]).item()
        v += u * u
        cols.append((np.eye(n) - h)[idx].T @ a @ x[idx] @ m)
    g = np.hstack(cols)
    gg = g.T @ g
    return v, np.trace(gg) ** 2 / np.sum(gg * gg)


@pytest.mark.parametrize("pages", [6, 40])
def test_cluster_mean_and_design_effect_pick_cr2_below_30_clusters_and_name_it(pages):
    from scipy import stats

    from biaskit.evaluate.stats.cluster import cluster_mean, design_effect

    rng = np.random.default_rng(pages)
    cl = rng.integers(0, pages, 240)
    y = (rng.random(240) < 0.2 + 0.3 * (cl % 3 == 0)).astype(float)
    r, de = cluster_mean(y, cl), design_effect(y, cl)
    iid = np.var(y, ddof=1) / len(y)
    if pages < 30:  # CR2 with a t interval on the Bell-McCaffrey df, by hand
        var, df = _cr2_mean_by_hand(y, cl)
        t = stats.t.isf(0.025, df)
        assert (r["method"], de["method"]) == ("cr2-bm-t", "cr2-bm-t") and r["df"] == pytest.approx(df, rel=1e-9)
        assert r["se"] == pytest.approx(np.sqrt(var), rel=1e-9)
        assert (r["ci_low"], r["ci_high"]) == pytest.approx((y.mean() - t * np.sqrt(var), y.mean() + t * np.sqrt(var)), rel=1e-9)
        assert de["deff"] == pytest.approx(max(1.0, var / iid), rel=1e-9)
    else:  # CR1 = statsmodels' intercept-only cluster fit
        f = _sm_fit(y, np.ones(len(y)), cl)
        assert (r["method"], de["method"]) == ("cr1-wald", "cr1-wald") and abs(r["se"] - f.bse[0]) < 1e-9
        assert de["deff"] == pytest.approx(max(1.0, f.bse[0] ** 2 / iid), rel=1e-9)
    assert r["n_clusters"] == de["n_clusters"] == len(np.unique(cl)) and r["reason"] is None
    one = cluster_mean(y, np.zeros(len(y)))  # one cluster: nothing can be estimated, and it says why
    assert one["method"] == "none" and np.isnan(one["ci_low"]) and "one cluster" in one["reason"]
    assert design_effect(y, np.zeros(len(y)))["method"] == "none"
