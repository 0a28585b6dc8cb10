"""The one inference layer of biaskit: intervals, exact tests, p floors and power, so that a number means the
same in every report section, the headline, the ``stats`` commands and ``annotate validate``.

Intervals (every table names its method in a ``method`` column or its caption):

* a share or rate per group (``count`` of ``n``): :func:`proportion_interval` / :func:`proportion_intervals`,
  Wilson score (default, :data:`WILSON`) or Clopper-Pearson (exact, :data:`CLOPPER_PEARSON`); equal to
  ``statsmodels.stats.proportion.proportion_confint(method="wilson" | "beta")``. Neither collapses at 0 or n
  (8 of 8 gives Wilson [0.676, 1.0] at 95%, where a percentile bootstrap gives [1, 1]);
* a difference of two shares: :func:`newcombe_interval`, Newcombe's hybrid score interval (method 10 of
  Newcombe 1998, the two Wilson intervals combined), equal to statsmodels'
  ``confint_proportions_2indep(method="newcomb")``;
* a ratio of two shares: :func:`ratio_interval`, the log interval with 0.5 added to each count (Katz; equal
  to ``confint_proportions_2indep(compare="ratio", method="log-adjusted")``), the ratio of Clopper-Pearson bounds where
  that misses its estimate (a zero count) or collapses (both shares 1: [1, 1]), so the interval always contains it;
* a statistic without a closed form (Spearman's rho, a macro-F1): :func:`bca_interval`, the BCa bootstrap
  (``scipy.stats.bootstrap(method="BCa")``); a statistic that does not vary over the resamples gives no
  interval (None), never a zero-width one.

Tests and p floors:

* a difference of two shares (accuracy, miss or false-alarm rate of two groups: a 2x2 table):
  :func:`fisher_exact_2x2`, the two-sided Fisher exact test (equal to ``scipy.stats.fisher_exact``),
  vectorised; it also returns the test's floor, the smallest p its margins allow;
* a share against one half (a sign test: the share of pairs whose first member scores higher):
  :func:`binomial_p_half`, the two-sided exact binomial test (equal to ``scipy.stats.binomtest(k, n, 0.5)``);
* a permutation test used for a family of ``m`` tests must be able to reach a corrected p far below alpha:
  :func:`permutation_resamples` gives ``B >= 20 m / alpha`` resamples; its floor is ``1 / (B + 1)``
  (:func:`permutation_floor`), ``m / (B + 1)`` after Holm.

Power: :func:`n_per_group_for_gap`, the texts per group at which a gap ``D`` from a share ``p`` is detected
with power 0.8 at a family-corrected alpha (statsmodels ``NormalIndPower`` with Cohen's h).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from biaskit.bootstrap import BootSpec
from biaskit.errors import BiaskitError, check_choice

LEVEL = 0.95
#: the two-sided 95% normal quantile, normal_quantile(0.95) written out (tested equal), for defaults of signatures
Z95 = 1.959963984540054
WILSON = "wilson"
CLOPPER_PEARSON = "clopper-pearson"
NEWCOMBE = "newcombe hybrid score"
RATIO_LOG = "log ratio (Katz, +0.5)"
RATIO_CP = "ratio of Clopper-Pearson bounds (sqrt level each)"
BCA = "BCa bootstrap"
FISHER = "Fisher exact (two-sided)"
PROPORTION_METHODS = (WILSON, CLOPPER_PEARSON)
#: how many resamples per test and family a permutation test needs: B >= PERMUTATION_FACTOR * m / alpha
PERMUTATION_FACTOR = 20


def check_level(level: float) -> float:
    if not (0.0 < float(level) < 1.0):
        raise BiaskitError("E330", "confidence level must be between 0 and 1", value=level, fix="use e.g. level=0.95")
    return float(level)


def check_proportion_method(method: str) -> str:
    check_choice("E331", "unknown interval method for a share", method, PROPORTION_METHODS, fix="use wilson (default) or clopper-pearson")
    return method


@functools.lru_cache(maxsize=64)
def normal_quantile(level: float) -> float:
    """The two-sided normal quantile of ``level``, z with P(|Z| <= z) = level (cached: scipy's distribution call
    costs ~2 ms)."""
    from scipy import stats

    return float(stats.norm.isf((1.0 - level) / 2))


_z = normal_quantile


def wald_p(estimate: float, se: float) -> float:
    """Two-sided p of a normal (Wald) test of ``estimate == 0`` with standard error ``se``: 2 P(Z > |estimate| / se);
    NaN when either is not finite or ``se`` is not positive (never a plausible number for an undefined test)."""
    from scipy import stats

    e, s = float(estimate), float(se)
    if not (math.isfinite(e) and math.isfinite(s) and s > 0):
        return float("nan")
    return float(2.0 * stats.norm.sf(abs(e) / s))


def _log_hypergeom(x, big_n, k, n1):
    """log P(X = x) of the hypergeometric count of group 1 (n1 draws of big_n, k hits): log C(k, x) + log C(big_n - k,
    n1 - x) - log C(big_n, n1), by gammaln (vectorised; scipy's distribution machinery is ~10x slower here)."""
    from scipy.special import gammaln

    def lc(a, b):
        return gammaln(a + 1) - gammaln(b + 1) - gammaln(a - b + 1)

    return lc(k, x) + lc(big_n - k, n1 - x) - lc(big_n, n1)


def proportion_interval(count: int, n: int, *, level: float = LEVEL, method: str = WILSON) -> tuple[float, float]:
    """Interval of a share ``count / n``: Wilson score (default) or Clopper-Pearson. (nan, nan) for n == 0.

    Wilson: centre (p + z²/2n) / (1 + z²/n), half-width z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²), with the bound
    exactly 0 (1) at a zero (full) count. Clopper-Pearson: Beta(count, n-count+1) and Beta(count+1, n-count)
    quantiles. Both equal ``statsmodels.stats.proportion.proportion_confint`` (``wilson`` / ``beta``; tested)."""
    check_proportion_method(method)
    level = check_level(level)
    if n <= 0:
        return float("nan"), float("nan")
    alpha = 1.0 - level
    if method == CLOPPER_PEARSON:
        from scipy import stats

        lo = 0.0 if count == 0 else float(stats.beta.ppf(alpha / 2, count, n - count + 1))
        hi = 1.0 if count == n else float(stats.beta.isf(alpha / 2, count + 1, n - count))
        return lo, hi
    z = _z(level)
    p = count / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    lo = 0.0 if count == 0 else max(0.0, centre - half)
    hi = 1.0 if count == n else min(1.0, centre + half)
    return lo, hi


def proportion_intervals(count, n, *, level: float = LEVEL, method: str = WILSON) -> tuple[np.ndarray, np.ndarray]:
    """:func:`proportion_interval` of arrays of counts and sizes (NaN where n == 0), vectorised."""
    check_proportion_method(method)
    level = check_level(level)
    x = np.asarray(count, dtype=float)
    m = np.asarray(n, dtype=float)
    ok = m > 0
    safe = np.where(ok, m, 1.0)
    if method == CLOPPER_PEARSON:
        from scipy import stats

        a = 1.0 - level
        with np.errstate(invalid="ignore"):
            lo = np.where(x > 0, stats.beta.ppf(a / 2, np.maximum(x, 1e-300), safe - x + 1), 0.0)
            hi = np.where(x < safe, stats.beta.isf(a / 2, x + 1, np.maximum(safe - x, 1e-300)), 1.0)
    else:
        z = _z(level)
        p = x / safe
        denom = 1.0 + z * z / safe
        centre = (p + z * z / (2 * safe)) / denom
        half = z / denom * np.sqrt(np.maximum(p * (1 - p), 0.0) / safe + z * z / (4 * safe * safe))
        lo = np.where(x == 0, 0.0, np.maximum(0.0, centre - half))
        hi = np.where(x == safe, 1.0, np.minimum(1.0, centre + half))
    return np.where(ok, lo, np.nan), np.where(ok, hi, np.nan)


def newcombe_interval(x1, n1, x2, n2, *, level: float = LEVEL):
    """Newcombe's hybrid score interval of p1 - p2 (method 10): with Wilson intervals (l1, u1) of p1 and (l2, u2)
    of p2, [d - sqrt((p1 - l1)² + (u2 - p2)²), d + sqrt((u1 - p1)² + (p2 - l2)²)]. Scalars give a (lo, hi)
    tuple (None when a group is empty), arrays give two arrays (NaN there)."""
    scalar = np.ndim(x1) == 0 and np.ndim(n1) == 0 and np.ndim(x2) == 0 and np.ndim(n2) == 0
    x1, n1, x2, n2 = (np.asarray(v, dtype=float) for v in (x1, n1, x2, n2))
    l1, u1 = proportion_intervals(x1, n1, level=level)
    l2, u2 = proportion_intervals(x2, n2, level=level)
    with np.errstate(invalid="ignore", divide="ignore"):
        p1, p2 = x1 / n1, x2 / n2
        d = p1 - p2
        lo = d - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
        hi = d + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    if scalar:
        return None if not (np.isfinite(lo) and np.isfinite(hi)) else (float(lo), float(hi))
    return lo, hi


def ratio_interval(x1, n1, x2, n2, *, level: float = LEVEL):
    """Interval of the ratio p1 / p2 that always contains the estimate ``(x1/n1) / (x2/n2)``.

    The log interval with 0.5 added to each count (Katz, "log-adjusted"): r = ((x1 + .5)/(n1 + .5)) / ((x2 + .5)/(n2 +
    .5)), se = sqrt(1/(x1+.5) - 1/(n1+.5) + 1/(x2+.5) - 1/(n2+.5)), exp(log r -+ z se); equal to statsmodels'
    ``confint_proportions_2indep(compare="ratio", method="log-adjusted")``. Where it misses the estimate (a zero
    count: 0 of 12 against 3 of 9 gives [0.023, 10.2] around a ratio of 0) or collapses (both shares 1: [1, 1]), the
    ratio of the two Clopper-Pearson intervals at level sqrt(level) each instead, [L1 / U2, U1 / L2] (:data:`RATIO_CP`):
    both shares lie in their intervals with probability >= level, so the ratio lies in it, and the estimate always
    does. :func:`ratio_methods` names the method of each. None (scalars) / NaN (arrays) when a group is empty."""
    scalar = all(np.ndim(v) == 0 for v in (x1, n1, x2, n2))
    x1, n1, x2, n2 = _broadcast_counts(x1, n1, x2, n2)
    lo, hi, swap = _katz(x1, n1, x2, n2, level)
    if swap.any():
        inner = math.sqrt(level)
        l1, u1 = proportion_intervals(x1[swap], n1[swap], level=inner, method=CLOPPER_PEARSON)
        l2, u2 = proportion_intervals(x2[swap], n2[swap], level=inner, method=CLOPPER_PEARSON)
        # swap needs an estimate inside (0, inf) or both shares 1, so x2 > 0 and l2 > 0 there
        lo[swap], hi[swap] = l1 / u2, u1 / l2
    if scalar:
        return None if not (np.isfinite(lo[0]) and np.isfinite(hi[0])) else (float(lo[0]), float(hi[0]))
    return lo, hi


def _broadcast_counts(x1, n1, x2, n2) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    a, b, c, d = np.broadcast_arrays(*(np.atleast_1d(np.asarray(x, dtype=float)) for x in (x1, n1, x2, n2)))
    return a, b, c, d


def _katz(x1, n1, x2, n2, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The log-adjusted (Katz, +0.5) bounds, NaN where a group is empty, and where they cannot stand: zero width
    (both shares 1) or the estimate outside them (a zero count)."""
    z = _z(check_level(level))
    with np.errstate(invalid="ignore", divide="ignore"):
        a, b, c, d = x1 + 0.5, n1 + 0.5, x2 + 0.5, n2 + 0.5
        lr = np.log(a / b) - np.log(c / d)
        se = np.sqrt(1 / a - 1 / b + 1 / c - 1 / d)
        ok = (n1 > 0) & (n2 > 0)
        lo = np.where(ok, np.exp(lr - z * se), np.nan)
        hi = np.where(ok, np.exp(lr + z * se), np.nan)
        est = (x1 / n1) / (x2 / n2)
        swap = ok & ((se == 0) | (np.isfinite(est) & ((est < lo) | (est > hi))))
    return lo, hi, swap


def ratio_methods(x1, n1, x2, n2, *, level: float = LEVEL) -> np.ndarray:
    """The method :func:`ratio_interval` uses for each ratio: :data:`RATIO_LOG` or :data:`RATIO_CP`."""
    a, b, c, d = _broadcast_counts(x1, n1, x2, n2)
    return np.where(_katz(a, b, c, d, level)[2], RATIO_CP, RATIO_LOG)


#: scipy's relative tolerance for tables "as extreme as" the observed one in ``fisher_exact``
_FISHER_RTOL = 1 + 1e-7


def fisher_exact_2x2(x1, n1, x2, n2) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Fisher exact test that the shares ``x1/n1`` and ``x2/n2`` are equal, for arrays of tables at once.

    Under the null the count of group 1 given the margins is hypergeometric; p = the sum of the probabilities of
    the tables no more likely than the observed one (relative tolerance 1e-7, as ``scipy.stats.fisher_exact``,
    to which it is equal; tested). Returns ``(p, p_floor)``: ``p_floor`` is the smallest p these margins allow
    (the p of the least likely table), the floor below which no correction can push the test. NaN where a group
    is empty."""
    x1, n1, x2, n2 = (np.atleast_1d(np.asarray(v, dtype=np.int64)) for v in (x1, n1, x2, n2))
    x1, n1, x2, n2 = np.broadcast_arrays(x1, n1, x2, n2)
    big_n, k = n1 + n2, x1 + x2
    ok = (n1 > 0) & (n2 > 0)
    grid = np.arange(int(n1.max(initial=0)) + 1)[None, :]
    lo_s = np.maximum(0, k - n2)[:, None]
    hi_s = np.minimum(n1, k)[:, None]
    inside = (grid >= lo_s) & (grid <= hi_s)
    logp = _log_hypergeom(np.where(inside, grid, lo_s).astype(float), big_n[:, None], k[:, None], n1[:, None])
    pmf = np.where(inside, np.exp(logp), 0.0)
    obs = np.exp(_log_hypergeom(x1.astype(float), big_n, k, n1))
    p = np.where(inside & (pmf <= obs[:, None] * _FISHER_RTOL), pmf, 0.0).sum(axis=1)
    least = np.where(inside, pmf, np.inf).min(axis=1)
    floor = np.where(inside & (pmf <= least[:, None] * _FISHER_RTOL), pmf, 0.0).sum(axis=1)
    p = np.minimum(p, 1.0)
    return np.where(ok, p, np.nan), np.where(ok, np.minimum(floor, 1.0), np.nan)


def binomial_p_half(count, n) -> np.ndarray:
    """Two-sided exact binomial p of ``count`` successes in ``n`` against p = 1/2, vectorised over arrays (NaN where
    n == 0). Under 1/2 the distribution is symmetric, so the p is min(1, 2 P(X <= min(k, n - k))): equal to
    ``scipy.stats.binomtest(k, n, 0.5).pvalue`` (tested), without its per-call cost."""
    from scipy import stats

    k = np.asarray(count, dtype=float)
    m = np.asarray(n, dtype=float)
    tail = np.minimum(k, m - k)
    with np.errstate(invalid="ignore"):
        p = np.minimum(1.0, 2.0 * stats.binom.cdf(tail, m, 0.5))
        p = np.where(k * 2 == m, 1.0, p)
    return np.where(m > 0, p, np.nan)


def permutation_resamples(family_size: int, alpha: float = 0.05, *, at_least: int = 0) -> int:
    """Resamples a permutation test needs in a family of ``family_size`` tests: ``B >= 20 * m / alpha`` (then the
    smallest Holm-corrected p, ``m / (B + 1)``, is below alpha / 20), and at least ``at_least``."""
    if family_size < 1 or not (0 < alpha < 1):
        raise BiaskitError(
            "E332",
            "a family needs at least one test and 0 < alpha < 1",
            value={"family_size": family_size, "alpha": alpha},
            fix="e.g. m=21, alpha=0.05",
        )
    return max(int(at_least), math.ceil(PERMUTATION_FACTOR * family_size / alpha))


def permutation_floor(resamples: int) -> float:
    """The smallest p a permutation test with ``resamples`` resamples can give: 1 / (B + 1)."""
    return 1.0 / (int(resamples) + 1)


def bca_interval(
    data: tuple[np.ndarray, ...], statistic: Callable[..., Any], *, boot: BootSpec = BootSpec(), paired: bool = True
) -> tuple[float | None, float | None]:
    """BCa bootstrap interval of ``statistic(*data)`` (``scipy.stats.bootstrap(method="BCa")`` with ``boot.n_boot``
    resamples at ``boot.level`` from a generator seeded ``boot.seed``; items resampled together when ``paired``).
    (None, None) when it cannot be made or would have zero width (the statistic does not vary over the resamples,
    e.g. every item equal): a finite sample never gets a point as its interval."""
    from scipy import stats

    level = check_level(boot.level)
    n_resamples, seed = boot.n_boot, boot.seed
    n = len(data[0])
    if n_resamples <= 0 or n < 3:
        return None, None
    try:
        with np.errstate(all="ignore"):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = stats.bootstrap(
                    data,
                    statistic,
                    paired=paired,
                    vectorized=True,
                    method="BCa",
                    n_resamples=n_resamples,
                    confidence_level=level,
                    random_state=np.random.default_rng(seed),
                )
    except (ValueError, FloatingPointError):
        return None, None
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi - lo <= 0:
        return None, None
    return lo, hi


#: the method name of an interval the data support no method for (a collapsed bootstrap of a figure that is no share)
NO_METHOD = "none"
#: an interval narrower than this (relative to its bounds) has collapsed: weighted sums of resamples that all give 1
#: can come out as [0.9999999999999999, 1.0]
ZERO_WIDTH = 1e-12


def never_zero_width(
    lo: float | None, hi: float | None, *, method: str, share: tuple[int, int] | None = None, level: float = LEVEL
) -> tuple[float | None, float | None, str | None, str | None]:
    """A bootstrap interval ``(lo, hi)`` (made by ``method``) as a table may show it: ``(lo, hi, method, reason)``.

    A finite sample never gets a point as its interval. When the bootstrap collapsed (every resample gives the
    same value: 0 of n, n of n, perfect or no agreement), the figure gets Wilson's interval of ``share`` =
    ``(count, n)`` where it is a share (method :data:`WILSON`; 8 of 8 gives [0.676, 1.0]), else no interval:
    ``(None, None, NO_METHOD, reason)``. An interval that has width is returned as it is; none at all (None: no
    resamples asked for) gives ``(None, None, None, None)``.
    ``stats aggregate --prop-ci bootstrap``, Likelihood Bias and ``annotate validate`` go through it."""
    if lo is None or hi is None:
        return None, None, None, None
    if np.isfinite(lo) and np.isfinite(hi) and hi - lo > ZERO_WIDTH * max(1.0, abs(lo), abs(hi)):
        return float(lo), float(hi), method, None
    if share is not None and share[1] > 0:
        wlo, whi = proportion_interval(int(share[0]), int(share[1]), level=level)
        return wlo, whi, WILSON, None
    return None, None, NO_METHOD, f"the bootstrap collapsed to a point (every resample gives {float(lo):.3g}): no interval"


def n_per_group_for_gap(p: float, gap: float, alpha: float, *, power: float = 0.8) -> int | None:
    """Texts per group at which a gap ``gap`` from share ``p`` (p + gap, or p - gap where p + gap > 1) is found with
    ``power`` by a two-sided test at ``alpha`` (the family-corrected alpha): statsmodels
    ``NormalIndPower().solve_power(effect_size=proportion_effectsize(p + gap, p), power=power, alpha=alpha)``
    rounded up. None when ``p`` is not a share."""
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    if p is None or not (0.0 <= p <= 1.0) or not (0 < gap < 1):
        return None
    other = p + gap if p + gap <= 1.0 else p - gap
    if not 0.0 <= other <= 1.0:
        return None
    es = proportion_effectsize(other, p)
    if es == 0:
        return None
    n = NormalIndPower().solve_power(effect_size=es, nobs1=None, alpha=alpha, power=power, ratio=1.0)
    return int(math.ceil(float(np.atleast_1d(n)[0])))
