"""The inference layer (Wilson / Clopper-Pearson / Newcombe / log ratio / Fisher / BCa / power) against
statsmodels and scipy, published examples, and coverage by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from biaskit.bootstrap import BootSpec
from biaskit.errors import BiaskitError
from biaskit.evaluate.stats import inference as inf


def test_an_all_correct_group_of_8_gets_wilsons_interval_not_a_point():
    lo, hi = inf.proportion_interval(8, 8)
    ref = proportion_confint(8, 8, alpha=0.05, method="wilson")
    assert (lo, hi) == pytest.approx(ref, abs=1e-12)
    assert round(lo, 3) == 0.676 and hi == 1.0


@pytest.mark.parametrize("method,sm", [("wilson", "wilson"), ("clopper-pearson", "beta")])
def test_share_intervals_equal_statsmodels_on_a_grid_scalar_and_vectorised(method, sm):
    ks, ns = zip(*[(k, n) for n in (1, 2, 5, 8, 13, 40, 101) for k in range(n + 1)])
    lo, hi = inf.proportion_intervals(ks, ns, method=method, level=0.9)
    for k, n, a, b in zip(ks, ns, lo, hi):
        ref = proportion_confint(k, n, alpha=0.1, method=sm)
        assert (a, b) == pytest.approx(ref, abs=1e-9)
        assert (a, b) == pytest.approx(inf.proportion_interval(k, n, method=method, level=0.9), abs=1e-12)
    assert np.isnan(inf.proportion_intervals([0], [0])[0][0])


def test_newcombe_equals_the_published_examples_and_statsmodels():
    # Newcombe (1998), Statistics in Medicine 17:873-890, Table II, method 10 (hybrid score):
    # 56/70 - 48/80 = 0.2: 0.0524 to 0.3339; 9/10 - 3/10: 0.1705 to 0.8090
    assert inf.newcombe_interval(56, 70, 48, 80) == pytest.approx((0.0524, 0.3339), abs=5e-5)
    assert inf.newcombe_interval(9, 10, 3, 10) == pytest.approx((0.1705, 0.8090), abs=5e-5)
    rng = np.random.default_rng(0)
    n1 = rng.integers(1, 60, 200)
    n2 = rng.integers(1, 60, 200)
    x1 = rng.integers(0, n1 + 1)
    x2 = rng.integers(0, n2 + 1)
    lo, hi = inf.newcombe_interval(x1, n1, x2, n2)
    for i in range(200):
        ref = confint_proportions_2indep(int(x1[i]), int(n1[i]), int(x2[i]), int(n2[i]), method="newcomb", compare="diff")
        assert (lo[i], hi[i]) == pytest.approx(ref, abs=1e-9)
    assert inf.newcombe_interval(3, 0, 1, 4) is None


def test_ratio_interval_equals_statsmodels_log_adjusted_where_that_contains_the_estimate():
    for x1, n1, x2, n2 in [(5, 10, 2, 10), (30, 100, 10, 100), (7, 7, 1, 20), (1, 12, 3, 9)]:
        ref = confint_proportions_2indep(x1, n1, x2, n2, method="log-adjusted", compare="ratio")
        assert inf.ratio_interval(x1, n1, x2, n2) == pytest.approx(ref, rel=1e-9)
        assert ref[0] <= (x1 / n1) / (x2 / n2) <= ref[1] and inf.ratio_methods(x1, n1, x2, n2)[0] == inf.RATIO_LOG


def test_every_ratio_interval_contains_its_estimate():
    # before: 0 of 12 vs 3 of 9 gave the log interval [0.023, 10.2] around a ratio of 0; 9 of 9 vs 4 of 4 gave
    # [1, 1] (log-adjusted, se 0) or Koopman's [1.000, 1.578]. Now the ratio of Clopper-Pearson bounds at sqrt(0.95)
    # each: [L1 / U2, U1 / L2]
    from statsmodels.stats.proportion import proportion_confint

    inner = 1 - math.sqrt(0.95)  # alpha of each share's interval
    for x1, n1, x2, n2 in [(0, 12, 3, 9), (9, 9, 4, 4)]:
        l1, u1 = proportion_confint(x1, n1, alpha=inner, method="beta")
        l2, u2 = proportion_confint(x2, n2, alpha=inner, method="beta")
        lo, hi = inf.ratio_interval(x1, n1, x2, n2)
        assert (lo, hi) == pytest.approx((l1 / u2, u1 / l2), rel=1e-9) and lo <= (x1 / n1) / (x2 / n2) <= hi
        assert inf.ratio_methods(x1, n1, x2, n2)[0] == inf.RATIO_CP
    assert inf.ratio_interval(0, 12, 3, 9)[0] == 0.0 and inf.ratio_interval(9, 9, 4, 4)[0] < 1.0 < inf.ratio_interval(9, 9, 4, 4)[1]
    rng = np.random.default_rng(3)
    n1, n2 = rng.integers(1, 30, 400), rng.integers(1, 30, 400)
    x1, x2 = rng.integers(0, n1 + 1), rng.integers(1, n2 + 1)
    lo, hi = inf.ratio_interval(x1, n1, x2, n2)
    est = (x1 / n1) / (x2 / n2)
    assert np.all((lo <= est) & (est <= hi)) and np.all(hi > lo)


def test_fisher_exact_equals_scipy_and_its_floor_is_the_least_p_of_the_margins():
    rng = np.random.default_rng(1)
    n1 = rng.integers(1, 40, 150)
    n2 = rng.integers(1, 40, 150)
    x1 = rng.integers(0, n1 + 1)
    x2 = rng.integers(0, n2 + 1)
    p, floor = inf.fisher_exact_2x2(x1, n1, x2, n2)
    for i in range(150):
        ref = stats.fisher_exact([[x1[i], n1[i] - x1[i]], [x2[i], n2[i] - x2[i]]]).pvalue
        assert p[i] == pytest.approx(ref, rel=1e-9, abs=1e-15)
    # the floor by brute force: the smallest scipy p over every table with the same margins
    for i in range(10):
        k, a, b = int(x1[i] + x2[i]), int(n1[i]), int(n2[i])
        ps = [stats.fisher_exact([[x, a - x], [k - x, b - k + x]]).pvalue for x in range(max(0, k - b), min(a, k) + 1)]
        assert floor[i] == pytest.approx(min(ps), rel=1e-9)
        assert floor[i] <= p[i]
    # an empty group: no test
    assert np.isnan(inf.fisher_exact_2x2([1], [0], [1], [3])[0][0])


def test_permutation_resamples_put_the_family_floor_far_below_alpha():
    # 21 pairs x 7 rates = 147 tests at alpha 0.05: B >= 20 * 147 / 0.05 = 58,800
    b = inf.permutation_resamples(147, 0.05)
    assert b == 58800
    assert 147 * inf.permutation_floor(b) < 0.05 / 20
    assert inf.permutation_resamples(1, 0.05, at_least=5000) == 5000
    with pytest.raises(BiaskitError, match="E332"):
        inf.permutation_resamples(0, 0.05)


def test_bca_equals_scipy_and_gives_no_zero_width_interval():
    rng = np.random.default_rng(2)
    x = rng.normal(size=40)
    got = inf.bca_interval((x,), np.mean, boot=BootSpec(n_boot=999, seed=5))
    ref = stats.bootstrap((x,), np.mean, method="BCa", n_resamples=999, random_state=np.random.default_rng(5)).confidence_interval
    assert got == pytest.approx((ref.low, ref.high), rel=1e-12)
    assert inf.bca_interval((np.ones(20),), np.mean, boot=BootSpec(n_boot=200)) == (None, None)


def test_n_per_group_for_gap_is_statsmodels_power_and_near_the_normal_formula():
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    n = inf.n_per_group_for_gap(0.3, 0.05, 0.05 / 7)
    ref = NormalIndPower().solve_power(effect_size=proportion_effectsize(0.35, 0.3), power=0.8, alpha=0.05 / 7)
    assert n == math.ceil(ref)
    # hand formula (one tail; two groups of n, so var(h) = 2 / n): n = 2 ((z_{1-a/2} + z_{0.8}) / h)^2 with
    # h = 2 asin sqrt(.35) - 2 asin sqrt(.3) = 0.1068: 2 * ((2.690 + 0.842) / 0.1068)^2 = 2186.1
    h = 2 * math.asin(math.sqrt(0.35)) - 2 * math.asin(math.sqrt(0.3))
    hand = 2 * ((stats.norm.isf(0.05 / 14) + stats.norm.isf(0.2)) / h) ** 2
    assert abs(n - hand) <= 1.5
    assert inf.n_per_group_for_gap(0.98, 0.05, 0.05) > 0  # p + D > 1: measured downwards
    assert inf.n_per_group_for_gap(None, 0.05, 0.05) is None


def test_no_zero_width_interval_on_random_small_tables():
    rng = np.random.default_rng(3)
    n1 = rng.integers(1, 12, 5000)
    n2 = rng.integers(1, 12, 5000)
    x1 = rng.integers(0, n1 + 1)
    x2 = rng.integers(0, n2 + 1)
    for method in inf.PROPORTION_METHODS:
        lo, hi = inf.proportion_intervals(x1, n1, method=method)
        assert (hi - lo > 0).all() and (lo <= x1 / n1).all() and (x1 / n1 <= hi).all()
    lo, hi = inf.newcombe_interval(x1, n1, x2, n2)
    assert (hi - lo > 0).all()
    lo, hi = inf.ratio_interval(x1, n1, x2, n2)
    assert (hi - lo > 0).all()


@pytest.mark.parametrize("n,p", [(8, 0.9), (30, 0.9), (30, 0.5), (100, 0.1)])
def test_wilson_holds_its_coverage_by_simulation(n, p):
    """20,000 binomial draws: Wilson's 95% coverage; Monte Carlo SE about 0.0015. Wilson is known to dip a
    little below nominal at some (n, p); 0.92 is the floor over this grid (Brown, Cai and DasGupta 2001)."""
    x = np.random.default_rng(n).binomial(n, p, 20000)
    lo, hi = inf.proportion_intervals(x, np.full_like(x, n))
    cover = ((lo <= p) & (p <= hi)).mean()
    assert cover >= 0.92, cover


@pytest.mark.parametrize("n1,n2,p1,p2", [(20, 20, 0.9, 0.9), (50, 80, 0.3, 0.45), (100, 100, 0.6, 0.9)])
def test_newcombe_holds_its_coverage_by_simulation(n1, n2, p1, p2):
    rng = np.random.default_rng(n1 + n2)
    x1, x2 = rng.binomial(n1, p1, 20000), rng.binomial(n2, p2, 20000)
    lo, hi = inf.newcombe_interval(x1, np.full_like(x1, n1), x2, np.full_like(x2, n2))
    cover = ((lo <= p1 - p2) & (p1 - p2 <= hi)).mean()
    assert cover >= 0.93, cover


def test_bad_level_and_method_are_coded_errors():
    with pytest.raises(BiaskitError, match="E330"):
        inf.proportion_interval(1, 2, level=1.5)
    with pytest.raises(BiaskitError, match="E331"):
        inf.proportion_interval(1, 2, method="bootstrap")


def test_the_written_out_95_quantile_is_the_layers_quantile_and_scipys():
    from scipy import stats

    from biaskit.evaluate.stats.inference import Z95, normal_quantile

    assert Z95 == normal_quantile(0.95) == float(stats.norm.ppf(0.975))
