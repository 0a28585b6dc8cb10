"""The one percentile bootstrap of biaskit.

Every bootstrap confidence interval (group proportions and means in :mod:`biaskit.evaluate.stats.aggregate`,
agreement coefficients in :mod:`biaskit.annotate.agreement`, classification figures and Spearman's rho in
:mod:`biaskit.annotate.validation` and :mod:`biaskit.annotate.groupvalidity`) is made of the same two steps:

1. :func:`replicates`: ``n_boot`` replicate statistics drawn from one seeded generator. ``draw(rng, k)``
   returns the statistics of ``k`` resamples; with ``block`` they are drawn ``block`` at a time (to bound
   memory), else in one call. The caller's ``draw`` decides what a resample is, and so which generator calls
   are made in which order: :func:`resample_each` draws each resample as ``rng.integers(0, n, size=n)`` item
   indices (which is the same stream as ``rng.integers(0, n, size=(k, n))`` for ``k`` resamples at once);
   a proportion draws its counts straight from the binomial.
2. :func:`percentile_interval`: the ``(1 - level) / 2`` and ``1 - (1 - level) / 2`` quantiles (numpy's
   linear interpolation) of the replicates; optionally the non-finite ones are left out first and fewer
   than ``min_finite`` left gives no interval (``(None, None)``).

:func:`percentile_ci` is both steps. :class:`BootSpec` holds the settings a caller passes down as one record
(``n_boot``, ``level``, ``seed``). This module imports nothing of biaskit (the floor of the layers in
docs/architecture.md), so any stage may use it. Generation bias (:mod:`biaskit.evaluate.stats.genbias`) and
the likelihood-bias interval (:mod:`biaskit.evaluate.stats.likelihood_bias`) resample with multinomial weights
over their own units (generations within a cell, descriptors of an axis) and take their intervals from
:func:`percentile_interval` too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class BootSpec:
    """The settings of a percentile bootstrap interval, which travel together from a command's options to
    every bootstrap: ``n_boot`` resamples, the interval's ``level`` and the ``seed`` its generator starts from."""

    n_boot: int = 1000
    level: float = 0.95
    seed: int = 0


#: ``draw(rng, k)`` -> the statistics of ``k`` resamples (a sequence of k numbers, or k x m for a vector statistic)
Draw = Callable[[np.random.Generator, int], Any]


def replicates(draw: Draw, n_boot: int, rng: np.random.Generator, *, block: int | None = None) -> np.ndarray:
    """``n_boot`` bootstrap statistics as a float array (``n_boot`` or ``n_boot x m``).

    ``block=None`` draws them in one ``draw(rng, n_boot)`` call; otherwise ``draw(rng, k)`` is called with
    ``k = block`` (the last call with what is left) until ``n_boot`` are drawn."""
    if block is None:
        return np.asarray(draw(rng, n_boot), dtype=float)
    parts = []
    done = 0
    while done < n_boot:
        k = min(block, n_boot - done)
        parts.append(np.asarray(draw(rng, k), dtype=float))
        done += k
    return np.concatenate(parts)


def resample_each(stat: Callable[[np.ndarray], float | Sequence[float] | None], n: int) -> Draw:
    """A ``draw`` that resamples ``n`` items with replacement: for each resample ``rng.integers(0, n, size=n)``
    item indices, then ``stat(indices)``; a ``None`` statistic becomes NaN."""

    def draw(rng: np.random.Generator, k: int) -> list:
        out = []
        for _ in range(k):
            v = stat(rng.integers(0, n, size=n))
            out.append(np.nan if v is None else v)
        return out

    return draw


def percentile_interval(values: Any, level: float = 0.95, *, min_finite: int | None = None) -> Any:
    """The percentile interval of bootstrap ``values``.

    One-dimensional ``values``: ``(lo, hi)`` as floats; with ``min_finite`` the non-finite values are left
    out first and ``(None, None)`` is returned when fewer than ``min_finite`` remain. Two-dimensional
    (``n_boot x m``, a vector statistic): a list of ``m`` ``(lo, hi)`` pairs, one per column."""
    vals = np.asarray(values, dtype=float)
    if min_finite is not None:
        vals = vals[np.isfinite(vals)]
        if len(vals) < min_finite:
            return None, None
    q = np.quantile(vals, [(1 - level) / 2, 1 - (1 - level) / 2], axis=0)
    if vals.ndim == 2:
        return [(float(q[0, j]), float(q[1, j])) for j in range(q.shape[1])]
    return float(q[0]), float(q[1])


def percentile_ci(
    draw: Draw, n_boot: int, rng: np.random.Generator, *, level: float = 0.95, block: int | None = None, min_finite: int | None = None
) -> Any:
    """Percentile bootstrap CI: :func:`percentile_interval` of :func:`replicates` (see the module docstring)."""
    return percentile_interval(replicates(draw, n_boot, rng, block=block), level, min_finite=min_finite)
