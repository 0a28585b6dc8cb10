"""Power at the sizes the groups actually have: the smallest gap a two-sided test of two shares can see.

The headline's "no evidence at this size" sentence reads this, instead of asking for a number of texts per group
(which, for groups that already hold more texts than a planned size, read as a request for fewer texts).

The gap is found on Cohen's arcsine scale, as statsmodels plans two-proportion tests:
``h = statsmodels.stats.power.NormalIndPower().solve_power(effect_size=None, nobs1=n_a, ratio=n_b / n_a,
alpha=alpha, power=power)`` is the smallest effect ``h = 2 asin sqrt(p1) - 2 asin sqrt(p0)``
(``statsmodels.stats.proportion.proportion_effectsize(p1, p0)``) the test finds with ``power``; the share ``p1``
with that ``h`` above and below the base share ``p0`` gives the gap ``|p1 - p0|``, and the smaller of the two
(where both exist) is the gap under which no difference in either direction can be seen.
"""

from __future__ import annotations

import math

import numpy as np

#: the power the sentence plans for
POWER = 0.8


def detectable_h(n_a: int, n_b: int, alpha: float, *, power: float = POWER) -> float | None:
    """The smallest Cohen's h a two-sided normal test at ``alpha`` detects with ``power`` for groups of ``n_a`` and
    ``n_b`` texts (statsmodels ``NormalIndPower``); None when a group is empty."""
    from statsmodels.stats.power import NormalIndPower

    if not n_a or not n_b or n_a < 1 or n_b < 1 or not (0 < alpha < 1):
        return None
    h = NormalIndPower().solve_power(effect_size=None, nobs1=float(n_a), ratio=float(n_b) / float(n_a), alpha=alpha, power=power)
    return float(np.atleast_1d(h)[0])


def min_detectable_gap(p0: float | None, n_a: int, n_b: int, alpha: float, *, power: float = POWER) -> float | None:
    """The smallest gap from the share ``p0`` that groups of ``n_a`` and ``n_b`` texts detect with ``power`` at
    ``alpha`` (two-sided; the family's corrected alpha): the smaller of the gaps up and down on Cohen's arcsine
    scale (module docstring). None when ``p0`` is not a share or a group is empty; 1.0 when no gap within [0, 1]
    reaches the needed effect (a group too small to see any gap)."""
    if p0 is None or p0 != p0 or not (0.0 <= p0 <= 1.0):
        return None
    h = detectable_h(n_a, n_b, alpha, power=power)
    if h is None:
        return None
    phi = math.asin(math.sqrt(p0))
    gaps = []
    if phi + h / 2 <= math.pi / 2:
        gaps.append(math.sin(phi + h / 2) ** 2 - p0)
    if phi - h / 2 >= 0:
        gaps.append(p0 - math.sin(phi - h / 2) ** 2)
    return float(min(gaps)) if gaps else 1.0
