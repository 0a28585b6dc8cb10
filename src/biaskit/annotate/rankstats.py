"""Spearman's rho and a vectorised bootstrap of it (used by :mod:`~biaskit.annotate.validation` and
:mod:`~biaskit.annotate.groupvalidity`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Spearman's rho (average ranks for ties) and its two-sided p-value (t approximation, n - 2 df)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(x)
    if n < 3:
        return float("nan"), float("nan")
    rx, ry = stats.rankdata(x), stats.rankdata(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    den = np.sqrt((rx**2).sum() * (ry**2).sum())
    if den == 0:
        return float("nan"), float("nan")
    rho = float((rx * ry).sum() / den)
    rho = max(-1.0, min(1.0, rho))
    if abs(rho) == 1.0:
        return rho, 0.0
    t = rho * np.sqrt((n - 2) / ((1 - rho) * (1 + rho)))
    return rho, float(2 * stats.t.sf(abs(t), n - 2))


def _resample_ranks(x: np.ndarray, mult: np.ndarray) -> np.ndarray:
    """Average ranks (ties averaged) of every item within each resample, given the items' multiplicities
    ``mult`` (n_boot x n: how often each item was drawn): an item's rank is the number of draws with a smaller
    value plus (draws with an equal value + 1) / 2. Same figures as ranking the resampled values, without a sort
    per resample."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    m = mult[:, order].astype(float)
    cum = np.cumsum(m, axis=1)
    # tie groups of equal values: first and last position of each item's group in the sorted order
    new = np.concatenate([[True], xs[1:] != xs[:-1]])
    gid = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    ends = np.concatenate([starts[1:], [len(xs)]]) - 1
    before = np.where(starts > 0, cum[:, np.maximum(starts - 1, 0)], 0.0)[:, gid]
    ties = (cum[:, ends] - np.where(starts > 0, cum[:, np.maximum(starts - 1, 0)], 0.0))[:, gid]
    ranks = np.empty_like(m)
    ranks[:, order] = before + (ties + 1) / 2
    return ranks


def spearman_resamples(h: np.ndarray, s: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Spearman's rho of each bootstrap resample ``idx`` (n_boot x n item indices drawn with replacement),
    equal to :func:`biaskit.annotate.validation.spearman` on ``h[idx[b]], s[idx[b]]``: Pearson's r of the
    resample's average ranks, computed with the items' multiplicities as weights (NaN when a resample has no
    spread)."""
    n_boot, n = idx.shape
    k = len(h)
    mult = np.bincount((np.arange(n_boot)[:, None] * k + idx).ravel(), minlength=n_boot * k).reshape(n_boot, k)
    rs = _resample_ranks(s, mult)
    cats, hcode = np.unique(h, return_inverse=True)
    if len(cats) <= 32:
        # few distinct human labels (an ordinal scale): work per category with matrix products instead of
        # per-item rank arrays: C[b, c] = draws of category c, its average rank r = draws below + (C + 1) / 2
        onehot = np.zeros((len(h), len(cats)))
        onehot[np.arange(len(h)), hcode] = 1.0
        m = mult.astype(float)
        cnt = m @ onehot
        r = np.cumsum(cnt, axis=1) - cnt + (cnt + 1) / 2
        mrs = m * rs
        s_rs = mrs.sum(axis=1)
        s_rs2 = (mrs * rs).sum(axis=1)
        s_rh = (cnt * r).sum(axis=1)
        s_rh2 = (cnt * r * r).sum(axis=1)
        s_cross = ((mrs @ onehot) * r).sum(axis=1)
        num = s_cross - s_rh * s_rs / n
        den = np.sqrt((s_rh2 - s_rh**2 / n) * (s_rs2 - s_rs**2 / n))
        with np.errstate(divide="ignore", invalid="ignore"):
            rho = np.where(den > 0, num / den, np.nan)  # half-integer ranks: exact sums, so no spread gives exactly 0
        return np.clip(rho, -1.0, 1.0)
    rh = _resample_ranks(h, mult)
    mh = (mult * rh).sum(axis=1, keepdims=True) / n
    ms = (mult * rs).sum(axis=1, keepdims=True) / n
    dh, ds = rh - mh, rs - ms
    num = (mult * dh * ds).sum(axis=1)
    den = np.sqrt((mult * dh * dh).sum(axis=1) * (mult * ds * ds).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.clip(np.where(den > 0, num / den, np.nan), -1.0, 1.0)


def spearman_boot(h: np.ndarray, s: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """rho of ``n_boot`` resamples drawn as ``rng.integers(0, n, size=n)`` one after the other (the stream of
    :func:`~biaskit.annotate.agreement.bootstrap_ci`), in chunks of about 2 million draws to bound memory."""
    n = len(h)
    step = max(1, 2_000_000 // max(n, 1))
    out = [spearman_resamples(h, s, rng.integers(0, n, size=(min(step, n_boot - b), n))) for b in range(0, n_boot, step)]
    return np.concatenate(out) if out else np.array([])
