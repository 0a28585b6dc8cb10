"""biaskit.bootstrap, the one percentile bootstrap: the four CIs built on it give the numbers of the hand-written
loops they replaced (same generator calls in the same order, same quantiles)."""

import numpy as np
import pytest

from biaskit.annotate.agreement import bootstrap_ci, fleiss_kappa
from biaskit.annotate.validation import _bootstrap_classification, confusion_stats
from biaskit.bootstrap import BootSpec, percentile_ci, percentile_interval, replicates, resample_each
from biaskit.evaluate.stats.aggregate import bootstrap_mean_ci, bootstrap_proportion_ci


def _old_proportion(count, n, n_boot, ci, rng):
    draws = rng.binomial(n, count / n, size=n_boot) / n
    a = (1.0 - ci) / 2.0
    lo, hi = np.quantile(draws, [a, 1.0 - a])
    return float(lo), float(hi)


def _old_mean(x, n_boot, ci, rng):
    n = len(x)
    chunk = max(1, min(n_boot, 5_000_000 // n))
    means, done = [], 0
    while done < n_boot:
        k = min(chunk, n_boot - done)
        means.append(x[rng.integers(0, n, size=(k, n))].mean(axis=1))
        done += k
    a = (1.0 - ci) / 2.0
    lo, hi = np.quantile(np.concatenate(means), [a, 1.0 - a])
    return float(lo), float(hi)


def _old_index_ci(stat, n, n_boot, seed, level=0.95):
    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(n_boot):
        v = stat(rng.integers(0, n, size=n))
        if v is not None and np.isfinite(v):
            vals.append(v)
    if len(vals) < max(10, n_boot // 10):
        return None, None
    lo, hi = np.quantile(vals, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(lo), float(hi)


@pytest.mark.parametrize("count,n", [(0, 12), (5, 12), (12, 12), (3, 7), (50, 101)])
def test_proportion_ci_is_the_old_binomial_draw(count, n):
    assert bootstrap_proportion_ci(count, n, n_boot=700, ci=0.9, rng=np.random.default_rng(4)) == _old_proportion(
        count, n, 700, 0.9, np.random.default_rng(4)
    )


@pytest.mark.parametrize("n,n_boot", [(1, 50), (9, 1000), (2001, 3000)])  # 2001 x 3000: two memory-bounded chunks
def test_mean_ci_is_the_old_chunked_loop(n, n_boot):
    x = np.random.default_rng(n).normal(size=n)
    assert bootstrap_mean_ci(x, n_boot=n_boot, rng=np.random.default_rng(1)) == _old_mean(x, n_boot, 0.95, np.random.default_rng(1))


def test_agreement_ci_is_the_old_loop_with_its_rules():
    counts = np.random.default_rng(0).multinomial(4, [0.5, 0.3, 0.2], size=25)
    for n_boot in (5, 200):
        got = bootstrap_ci(lambda idx: fleiss_kappa(counts[idx]), len(counts), n_boot=n_boot, seed=3)
        assert got == _old_index_ci(lambda idx: fleiss_kappa(counts[idx]), len(counts), n_boot, 3)
    assert got[0] is not None
    # None and NaN statistics are left out; too few left gives no interval
    odd = lambda idx: None if idx[0] % 3 == 0 else (np.nan if idx[0] % 3 == 1 else float(idx.mean()))  # noqa: E731
    assert bootstrap_ci(odd, 9, n_boot=300, seed=2, level=0.8) == _old_index_ci(odd, 9, 300, 2, 0.8)
    assert bootstrap_ci(lambda idx: np.nan, 9, n_boot=100) == (None, None)


def test_classification_cis_are_the_old_loop():
    rng = np.random.default_rng(5)
    labs = ["a", "b", "c"]
    yt = [labs[i] for i in rng.integers(0, 3, 41)]
    yp = [y if rng.random() < 0.7 else "c" for y in yt]
    code = np.array([labs.index(a) * 3 + labs.index(b) for a, b in zip(yt, yp)])
    rng = np.random.default_rng(8)
    vals = np.empty((300, 4))
    for b in range(300):
        vals[b] = confusion_stats(np.bincount(code[rng.integers(0, 41, size=41)], minlength=9).reshape(3, 3))
    q = np.quantile(vals, [(1 - 0.95) / 2, 1 - (1 - 0.95) / 2], axis=0)
    assert _bootstrap_classification(yt, yp, labs, BootSpec(n_boot=300, seed=8)) == [(float(q[0, j]), float(q[1, j])) for j in range(4)]


def test_blocks_and_per_resample_draws_give_the_same_stream():
    x = np.arange(7.0)
    per = replicates(resample_each(lambda idx: x[idx].mean(), 7), 50, np.random.default_rng(0))
    blocked = replicates(lambda g, k: x[g.integers(0, 7, size=(k, 7))].mean(axis=1), 50, np.random.default_rng(0), block=8)
    assert np.array_equal(per, blocked)
    assert percentile_ci(lambda g, k: x[g.integers(0, 7, size=(k, 7))].mean(axis=1), 50, np.random.default_rng(0), block=8) == percentile_interval(
        per
    )
    assert percentile_interval([1.0, np.nan, np.inf], min_finite=2) == (None, None)
