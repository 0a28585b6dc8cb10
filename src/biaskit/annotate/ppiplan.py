"""The PPI view of ``annotate plan``: how many more human labels per group bring the PPI++ interval of a label's
share to a target half-width.

From the pilot round (n labelled rows with human label Y and metric label Ŷ, N unlabelled rows with Ŷᵤ) the PPI
variance with m more labels (taken from the unlabelled rows: n' = n + m, N' = N - m) is predicted as
``λ'²·var(Ŷᵤ)/N' + var(Y − λ'Ŷ)/n'`` with the pilot's variances (ddof 0, as the interval itself) and
``var(Y − λŶ) = var(Y) − 2λ·cov(Y, Ŷ) + λ²·var(Ŷ)``; λ' is the PPI++ λ at the new sizes
(``cov / ((1 + n'/N')·var(Ŷ ∪ Ŷᵤ))`` clipped to [0, 1]) or the fixed ``lam``. The plan asks for the smallest m whose
half-width ``z·sqrt(variance)`` is at most the target. A test checks the planned half-widths against simulated
rounds (within 20%). The plan file has the shape of :func:`biaskit.annotate.planning.plan_round`'s, so
``annotate sample --plan`` draws it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from biaskit.errors import BiaskitError
from biaskit.evaluate.stats._common import fill_keys, require_columns, to_frame
from biaskit.evaluate.stats.inference import Z95
from biaskit.evaluate.stats.ppi import PPIData, PPIShare, binary, check_lam, ppi_mean
from biaskit.evaluate.stats.ppiround import HUMAN_COLUMN, join_round_files
from biaskit.io import read_table


def predicted_half_widths(pilot: PPIData, more, *, lam: float | None = None, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """(half-widths, λ) predicted for each number of extra labels in ``more`` (an int array, each < N) from the pilot
    round's data."""
    y, yh, yu = (np.asarray(v, dtype=float) for v in pilot)
    m = np.asarray(more, dtype=float)
    n, big_n = y.size + m, yu.size - m
    cov = float(np.mean((y - y.mean()) * (yh - yh.mean())))
    var_pool = float(np.var(np.concatenate([yh, yu]), ddof=1))
    if lam is None:
        lam_v = np.clip(cov / ((1.0 + n / big_n) * var_pool), 0.0, 1.0) if var_pool > 0 else np.zeros_like(m)
    else:
        lam_v = np.full_like(m, float(lam))
    var_r = np.var(y) - 2 * lam_v * cov + lam_v**2 * np.var(yh)
    var_u = float(np.var(yu))
    return z * np.sqrt(lam_v**2 * var_u / big_n + np.maximum(var_r, 0.0) / n), lam_v


def _group_plan(pilot: PPIData, target: float, lam, z: float) -> dict[str, Any]:
    y, yh, yu = pilot
    n, big_n = int(y.size), int(yu.size)
    entry: dict[str, Any] = {"n_now": n, "n_unlabelled": big_n}
    if n < 2 or big_n < 2:
        return {**entry, "n_more": None, "error": "PPI needs at least 2 labelled and 2 unlabelled rows in the group"}
    now = ppi_mean(y, yh, yu, lam=lam)
    more = np.arange(0, big_n)
    half, lams = predicted_half_widths(pilot, more, lam=lam, z=z)
    ok = np.nonzero(half <= target)[0]
    entry.update({"share_ppi": now["estimate"], "lam_now": now["lam"], "half_width_now": (now["ci_high"] - now["ci_low"]) / 2})
    if not ok.size:
        return {**entry, "n_more": None, "error": f"the target is out of reach: labelling all {big_n} unlabelled rows gives +-{half[-1]:.4f}"}
    k = int(ok[0])
    return {
        **entry,
        "n_more": k,
        "n_needed": n + k,
        "half_width_planned": float(half[k]),
        "lam_planned": float(lams[k]),
        "note": "small group: n < 30" if n < 30 else None,
    }


def plan_ppi(table: Any, share: PPIShare, *, target: float = 0.05, lam: float | None = None, z: float = Z95) -> dict[str, Any]:
    """The PPI plan of the share of every group (see the module docstring); E348 for a bad target."""
    metric_column, human_column, label, by = share.metric_column, share.human_column, share.label, share.by
    if not (0 < target < 0.5):
        raise BiaskitError("E348", "the target CI half-width must be between 0 and 0.5", value=target, fix="e.g. --target-ci 0.03")
    check_lam(lam)
    df = to_frame(table)
    require_columns(
        df, [metric_column, human_column, by], "annotate plan --ppi", "pass --metric-column, --human-column and --by with columns of the table"
    )
    df = fill_keys(df, [by])
    m, h = binary(df[metric_column], label), binary(df[human_column], label)
    groups = {}
    for g, idx in df.groupby(by, sort=True).indices.items():
        mg, hg = m[idx], h[idx]
        ok = ~np.isnan(mg)
        lab = ok & ~np.isnan(hg)
        groups[str(g)] = _group_plan(PPIData(hg[lab], mg[lab], mg[ok & np.isnan(hg)]), target, lam, z)
    return {
        "version": 1,
        "method": "PPI++ variance with the pilot round's variances (" + ("power-tuned lambda" if lam is None else f"lambda = {lam:g}") + ")",
        "view": "ppi",
        "metric": metric_column,
        "rate": f"share of {label}",
        "group_by": by,
        "target_half_width": target,
        "z": z,
        "groups": groups,
        "total_more": int(sum(e.get("n_more") or 0 for e in groups.values())),
    }


def plan_ppi_files(scored, target: float, metric_column, label, by, human_column, samples=None, annotations=None, labels=None) -> dict[str, Any]:
    """``annotate plan --ppi``: :func:`plan_ppi` of a scored table file, the human labels from its column or from a
    round's samples + annotations / labels files (joined as ``stats ppi`` does)."""
    if not metric_column or not label:
        raise BiaskitError("E348", "--ppi needs --metric-column and --label", fix="e.g. --metric-column vader_label --label negative")
    if (human_column is None) == (samples is None):
        raise BiaskitError(
            "E346",
            "give exactly one of --human-column and --samples (with --annotations or --labels)",
            fix="--human-column COL, or --samples S --annotations A",
        )
    t = read_table(scored)
    if samples is not None:
        t, _ = join_round_files(t, samples, annotations=annotations, labels=labels)
        human_column = HUMAN_COLUMN
    p = plan_ppi(t, PPIShare(metric_column=metric_column, human_column=human_column, label=label, by=by), target=target)
    p["scored"] = str(scored)
    return p
