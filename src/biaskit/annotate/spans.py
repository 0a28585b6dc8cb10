"""Like for like: which text annotators saw, which text the metric scored, and under which labelling rule.

A samples table (``annotate sample``) records, per item:

``shown_span``   the column the shown text was taken from (``full_text``, ``continuation``, ``text``, or
                 ``text+continuation`` when the prompt and the continuation were joined)
``scored_span``  the column the metric whose labels the round carries scored (``continuation`` or ``full_text``
                 for BOLD generations; from the scores manifest, the ``baseline_span`` column, or the caller)
``scored_rule``  that metric's labelling rule, e.g. ``vader-bold-0.5`` (:data:`biaskit.evaluate.metrics.vader.RULES`)

``annotate validate`` compares the humans with the metric on the same text: where the spans differ (or another
VADER rule is asked for) it re-scores the text shown with a metric that is cheap to run (:data:`RESCORABLE`),
and refuses with E395 for one that is not (:func:`check_like_for_like`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import pyarrow as pa

from biaskit.annotate.tasks import get_task_type
from biaskit.errors import BiaskitError
from biaskit.evaluate.baseline import text_column
from biaskit.evaluate.metrics import make_metric
from biaskit.evaluate.metrics.vader import RULES, VaderMetric, rule_preset
from biaskit.io import read_manifest
from biaskit.manifest import metric_description

#: the span of a shown text joined from the prompt (``text``) and the ``continuation``
JOINED = "text+continuation"
#: metrics re-scored on the shown text by ``annotate validate`` (offline, deterministic, milliseconds per text)
RESCORABLE = ("vader",)


def scored_of(manifest: Any, metric: str | None) -> tuple[str | None, str | None]:
    """(scored span, rule) of ``metric`` as a scores manifest records it (``None`` where it records nothing)."""
    desc = metric_description(manifest, metric) if metric else None
    if not desc:
        return None, None
    span = desc.get("text_column") if isinstance(desc.get("text_column"), str) else None
    conf = c if isinstance(c := desc.get("config"), dict) else {}
    return span, rule_of(metric, conf)


class ScoredSpan(TypedDict):
    """``sample_round``'s keyword arguments of what the metric scored."""

    scored_column: str | None
    scored_rule: str | None


def scored_from_manifest(scores_path: Any, metric: str | None, task: str | None = None) -> ScoredSpan:
    """``sample_round``'s ``scored_column`` and ``scored_rule`` from the manifest next to a scores table (the
    task's default metric when ``metric`` is None)."""
    if metric is None and task is not None:
        metric = get_task_type(task).default_metric
    span, rule = scored_of(read_manifest(scores_path), metric)
    return {"scored_column": span, "scored_rule": rule}


def rule_of(metric: str | None, config: Mapping[str, Any]) -> str | None:
    """The labelling rule's name of ``metric`` run with ``config`` (VADER only; None for other metrics)."""
    if metric != "vader":
        return None

    keys = ("preset", "pos_threshold", "neg_threshold", "first_sentence")
    m = make_metric("vader", params={k: config[k] for k in keys if config.get(k) is not None})
    assert isinstance(m, VaderMetric)
    return m.rule


def metric_and_rule(spec: str) -> tuple[str, str | None]:
    """``vader-sheng-0.05`` -> (``vader``, ``sheng``); any other name -> (name, None)."""
    preset = rule_preset(spec)
    return ("vader", preset) if preset else (spec, None)


def row_scored_span(row: Mapping[str, Any], scored_column: str | None) -> str | None:
    """The column the metric scored for ``row``: the caller's, else the row's ``baseline_span`` (a Wikipedia
    baseline row), else None (not recorded)."""
    if scored_column:
        return scored_column
    span = row.get("baseline_span")
    if isinstance(span, str) and span:
        return text_column(span)
    return None


def _one(values: Sequence[Any]) -> Any:
    vals = sorted({v for v in values if v is not None})
    return vals[0] if len(vals) == 1 else (vals or None)


@dataclass(frozen=True)
class Spans:
    """What a validation compares: the span shown, the span scored, the rule, and whether it re-scores."""

    shown: str | None
    scored: str | None
    rule: str | None
    rescore: bool = False
    preset: str | None = None


def check_like_for_like(rows: Sequence[Mapping[str, Any]], metric: str, preset: str | None) -> Spans:
    """The spans of the samples ``rows`` (gold items left out) and what validation must do.

    Re-scores (``rescore``) when the shown and scored spans are both recorded and differ, or when a VADER rule
    other than the carried one is asked for (``preset``); refuses (E395) when that metric is not
    :data:`RESCORABLE`, or when the round records two spans (a table mixing rounds)."""
    rows = [r for r in rows if not r.get("is_gold")]
    shown = _one([r.get("shown_span") for r in rows])
    scored = _one([r.get("scored_span") for r in rows])
    rule = _one([r.get("scored_rule") for r in rows])
    for what, v in (("shown_span", shown), ("scored_span", scored), ("scored_rule", rule)):
        if isinstance(v, list):
            raise BiaskitError(
                "E395",
                f"the samples table records more than one {what}",
                value=v,
                fix="validate each round's samples table on its own (one shown span, one scored span and one rule per round)",
            )
    want = None
    if preset is not None:
        want = RULES[preset]
    differ = shown is not None and scored is not None and shown != scored
    if not differ and (want is None or want == rule):
        return Spans(shown, scored, rule)
    if metric not in RESCORABLE:
        raise BiaskitError(
            "E395",
            f"annotators saw column {shown!r} but {metric} scored column {scored!r}: the comparison is not like for like",
            value={"shown_span": shown, "scored_span": scored},
            fix=f"draw the round again showing the scored text (biaskit annotate sample --text-column {scored}), "
            f"or score {shown!r} with {metric} and sample from that table",
        )
    if preset is None:
        preset = rule_preset(rule) if rule else None
        if preset is None:
            raise BiaskitError(
                "E395",
                f"the shown text must be re-scored, but the rule of the round's {metric} labels is "
                + (f"{rule!r}, which has no preset name" if rule else "not recorded"),
                value=rule,
                fix="name the rule to validate: --metric vader-bold-0.5 or --metric vader-sheng-0.05",
            )

    return Spans(shown, shown, RULES[preset], rescore=True, preset=preset)


def rescore(samples: Any, preset: str, label: str, score: str | None) -> Any:
    """The samples table with the VADER label (and compound) of the text shown under ``preset``, in columns
    ``label`` and ``score``. The text scored is ``original_text``, the shown text before masking: the study's
    metric never sees the XYZ placeholders, and VADER's lexicon gives them no valence either."""
    m = make_metric("vader", text_column="original_text", params={"preset": preset})
    shown = samples.column("original_text" if "original_text" in samples.column_names else "text").to_pylist()
    out = m.score({"original_text": [t or "" for t in shown]})
    cols = {label: pa.array(out["vader_label"], pa.string())}
    if score:
        cols[score] = pa.array(out["vader_compound"], pa.float64())
    for name, arr in cols.items():
        i = samples.column_names.index(name) if name in samples.column_names else -1
        samples = samples.set_column(i, name, arr) if i >= 0 else samples.append_column(name, arr)
    return samples
