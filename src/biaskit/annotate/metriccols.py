"""Which columns of a scores table hold a metric's label and continuous score (docs/CONTRACTS.md)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics.catalog import label_outputs


def known() -> dict[str, tuple[str, str]]:
    """metric -> (label column, score column or "a-b" difference of two columns), from the metrics' own
    declarations (:func:`biaskit.evaluate.metrics.catalog.label_outputs`); a label output without a score
    column gets the default ``<metric>_score``."""
    return {k: (lo.column, lo.score or f"{k}_score") for k, lo in label_outputs().items()}


@dataclass(frozen=True)
class MetricColumns:
    metric: str
    label: str | None
    score: str | None

    def score_of(self, row: Mapping[str, Any]) -> float | None:
        if not self.score:
            return None
        if self.score in row:
            v = row.get(self.score)
            v = float(v) if v is not None else None
        else:
            a, b = self.score.split("-")
            va, vb = row.get(a), row.get(b)
            v = None if va is None or vb is None else float(va) - float(vb)
        return v if v is not None and math.isfinite(v) else None  # NaN/inf is no score: such rows are not drawn

    def error_column(self) -> str:
        return f"{self.metric.split('_')[0]}_error"


def resolve(
    metric: str,
    columns: Sequence[str],
    *,
    label_column: str | None = None,
    score_column: str | None = None,
    need_label: bool = False,
    need_score: bool = False,
) -> MetricColumns:
    """Columns for ``metric`` in a table with ``columns``; options override; missing needed ones -> E091."""
    cols = set(columns)
    lab, sc = known().get(metric, (f"{metric}_label", f"{metric}_score"))
    lab = label_column or lab
    sc = score_column or sc
    mc = MetricColumns(metric, lab if lab in cols else None, None)
    parts = sc.split("-") if (sc not in cols and sc.count("-") == 1) else [sc]
    if all(p in cols for p in parts):
        mc = MetricColumns(metric, mc.label, sc)
    if need_label and mc.label is None:
        raise BiaskitError(
            "E091",
            f"no label column for metric {metric!r} (looked for {lab!r})",
            value=sorted(cols)[:30],
            fix=f"score the table with `biaskit score --metric {metric}` first, or name the column with --label-column",
        )
    if need_score and mc.score is None:
        raise BiaskitError(
            "E091",
            f"no score column for metric {metric!r} (looked for {sc!r})",
            value=sorted(cols)[:30],
            fix="name the continuous score column with --score-column",
        )
    return mc
