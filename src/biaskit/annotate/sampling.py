"""Choosing items for an annotation round.

Two designs, both seeded and independent of the input row order:

* **stratified** (BOLD): strata are the combinations of ``strata`` columns (source, group, template, ...)
  times bins of a metric's score, so the sample spans the score range; ``allocation="equal"`` spreads
  ``n`` evenly over the strata (a stratum with too few items gives its share to the others),
  ``"proportional"`` follows stratum sizes.
* **per label** (Sheng et al.'s "3 positive + 3 negative per template"): ``per_label={"positive": 3,
  "negative": 3}`` picks that many items with each metric label within each value of ``by``.

Items annotated in earlier rounds (``exclude``: sample ids) are never drawn again; optional gold items
with known answers are mixed in for quality control. Each item gets a stable content-derived
``sample_id`` (the Label Studio task key), and its text is masked (see :mod:`biaskit.annotate.masking`).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pyarrow as pa

from biaskit.annotate.masking import mask_text, row_mentions
from biaskit.annotate.metriccols import MetricColumns, resolve
from biaskit.annotate.planning import boundaries, uncertainty
from biaskit.annotate.spans import JOINED, row_scored_span
from biaskit.annotate.tasks import TaskType, get_task_type, task_spec
from biaskit.arrow import to_arrow
from biaskit.errors import BiaskitError, check_choice
from biaskit.schema import SAMPLES, conform

#: columns of the samples table that sampling itself writes
OWN_COLUMNS = (
    "sample_id",
    "round",
    "task_type",
    "text",
    "original_text",
    "mask_mapping",
    "prompt_id",
    "stratum",
    "is_gold",
    "gold_label",
    "shown_span",
    "scored_span",
    "scored_rule",
)


@dataclass
class SampleReport:
    pool: int = 0
    dropped_no_text: int = 0
    dropped_metric_error: int = 0
    duplicates: int = 0
    excluded: int = 0
    chosen: int = 0
    gold: int = 0
    masked: int = 0
    bin_edges: list[float] = field(default_factory=list)
    strata: dict[str, dict[str, int]] = field(default_factory=dict)  # stratum -> {available, chosen}

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def make_sample_id(*parts: Any) -> str:
    h = hashlib.sha1(json.dumps([p for p in parts], ensure_ascii=False, default=str).encode("utf-8")).hexdigest()
    return f"s-{h[:12]}"


def _text_of(row: Mapping[str, Any], text_column: str | None) -> tuple[str | None, str | None]:
    """(the text shown to annotators, the column it came from: :mod:`biaskit.annotate.spans`' ``shown_span``)."""
    if text_column:
        v = row.get(text_column)
        return (v, text_column) if isinstance(v, str) else (None, None)
    for col in ("full_text",):
        v = row.get(col)
        if isinstance(v, str) and v.strip():
            return v, col
    t, c = row.get("text"), row.get("continuation")
    if isinstance(t, str) and isinstance(c, str) and c.strip():
        return (t + c if (t.endswith(" ") or c.startswith(" ") or not t) else f"{t} {c}"), (JOINED if t else "continuation")
    for col, v in (("continuation", c), ("text", t)):
        if isinstance(v, str) and v.strip():
            return v, col
    return None, None


def _allocate(sizes: Sequence[int], n: int, how: str, rng: np.random.Generator | None = None) -> list[int]:
    """Spread ``n`` over strata of ``sizes``: equal shares or proportional, never more than a stratum holds.

    Units that cannot be shared evenly go to strata in a seeded random order (``rng``), not to the
    alphabetically first strata.
    """
    k = len(sizes)
    take = [0] * k
    remaining = min(n, sum(sizes))
    if how == "proportional":
        total = sum(sizes)
        quotas = [n * s / total for s in sizes] if total else [0.0] * k
        take = [min(int(q), s) for q, s in zip(quotas, sizes)]
        # largest remainders first, then any spare capacity (stable by stratum order)
        tie = rng.permutation(k) if rng is not None else np.arange(k)
        order = sorted(range(k), key=lambda i: (-(quotas[i] - int(quotas[i])), int(tie[i])))
        left = remaining - sum(take)
        while left > 0:
            moved = False
            for i in order:
                if left and take[i] < sizes[i]:
                    take[i] += 1
                    left -= 1
                    moved = True
            if not moved:
                break
        return take
    # equal: water-filling
    open_ = [i for i in range(k) if sizes[i] > 0]
    if rng is not None:
        open_ = [open_[int(j)] for j in rng.permutation(len(open_))]
    while remaining > 0 and open_:
        share, extra = divmod(remaining, len(open_))
        nxt = []
        given = 0
        for j, i in enumerate(open_):
            want = share + (1 if j < extra else 0)
            got = min(want, sizes[i] - take[i])
            take[i] += got
            given += got
            if take[i] < sizes[i]:
                nxt.append(i)
        remaining -= given
        if given == 0:
            break
        open_ = nxt
    return take


def _bins(values: np.ndarray, bins: int, how: str) -> tuple[np.ndarray, list[float]]:
    if how == "quantile":
        edges = np.unique(np.quantile(values, np.linspace(0, 1, bins + 1)))
    elif how == "width":
        lo, hi = float(values.min()), float(values.max())
        edges = np.linspace(lo, hi, bins + 1) if hi > lo else np.array([lo, hi])
    else:
        raise BiaskitError("E091", "unknown binning", value=how, options=["width", "quantile"], fix="use --binning width or quantile")
    inner = edges[1:-1]
    idx = np.searchsorted(inner, values, side="right")
    return idx, [float(e) for e in edges]


def sample_round(
    scores: Any,
    *,
    round: str,
    task: str | TaskType,
    n: int = 100,
    metric: str | None = None,
    score_column: str | None = None,
    label_column: str | None = None,
    strata: Sequence[str] | None = None,
    bins: int = 4,
    binning: str = "width",
    allocation: str = "equal",
    per_label: Mapping[str, int] | None = None,
    by: str | None = None,
    text_column: str | None = None,
    mask: bool = True,
    extra_mentions: Iterable[str] = (),
    exclude: Iterable[str] = (),
    gold: Any = None,
    n_gold: int | None = None,
    seed: int = 0,
    quota: Mapping[str, int] | None = None,
    quota_by: str | None = None,
    prefer: str = "random",
    scored_column: str | None = None,
    scored_rule: str | None = None,
) -> tuple[pa.Table, SampleReport]:
    """Draw the items of one annotation round from a scores (or prompts/generations) table.

    Returns the samples-stage table (masked text, original text, mapping, stratum, gold flags, and every
    column of the source row carried along; the source ``text`` is kept as ``source_text``) and a report.

    ``quota`` (from a round plan, :mod:`biaskit.annotate.planning`): items to draw per value of the ``quota_by``
    column instead of the stratified design; ``prefer="uncertain"`` takes, within each group, the items the
    metric is least sure about first (:func:`~biaskit.annotate.planning.uncertainty`), ``random`` a seeded draw.

    Like for like (:mod:`biaskit.annotate.spans`): each item records the column its text was shown from
    (``shown_span``), the column the metric scored (``scored_column``: the scores manifest's ``text_column``;
    default the row's ``baseline_span``, else not recorded) and the metric's labelling rule (``scored_rule``,
    e.g. ``vader-bold-0.5``), so ``annotate validate`` can compare the humans and the metric on the same text.
    """
    d = _Design(
        n=n,
        strata=strata,
        bins=bins,
        binning=binning,
        allocation=allocation,
        per_label=per_label,
        by=by,
        quota=quota,
        quota_by=quota_by,
        prefer=prefer,
        text_column=text_column,
        metric=metric,
        score_column=score_column,
        label_column=label_column,
    )
    tt = _check_options(task, d, round=round, n_gold=n_gold)
    t = to_arrow(scores)
    cols = list(t.column_names)
    rows = t.to_pylist()
    rep = SampleReport(pool=len(rows))
    d = replace(d, mc=_metric_columns(tt, cols, d))
    d = replace(d, strata=_design_columns(cols, d))
    excl = set(exclude)
    pool = _candidate_pool(rows, d, excl, rep)
    rng = np.random.default_rng(seed)
    if quota is not None:
        chosen = _draw_quota(pool, d, _uncertainty_of(rows, cols, tt, d.mc) if d.prefer == "uncertain" else None, rng, rep)
    elif per_label:
        chosen = _draw_per_label(pool, d, tt, rng, rep)
    else:
        chosen = _draw_stratified(pool, d, rng, rep)
    shown = _Shown(round, task_spec(tt), mask, tuple(extra_mentions), scored_column=scored_column, scored_rule=scored_rule)
    out = [_sample_row(p, shown, rep) for p in chosen]
    rep.chosen = len(out)
    out.extend(_gold_rows(_gold_items(gold, tt, excl), shown, n_gold, rng, rep))
    order = rng.permutation(len(out)) if out else np.array([], dtype=int)
    out = [out[int(i)] for i in order]
    return _to_table(out), rep


@dataclass(frozen=True)
class _Design:
    """How :func:`sample_round` chooses the items: its design options, checked (:func:`_check_options`), then the
    metric's columns (``mc``, :func:`_metric_columns`) and the strata (:func:`_design_columns`) filled in."""

    n: int
    strata: Sequence[str] | None
    bins: int
    binning: str
    allocation: str
    per_label: Mapping[str, int] | None
    by: str | None
    quota: Mapping[str, int] | None
    quota_by: str | None
    prefer: str
    text_column: str | None = None
    metric: str | None = None
    score_column: str | None = None
    label_column: str | None = None
    mc: MetricColumns | None = None


@dataclass(frozen=True)
class _Shown:
    """What every row of the round carries besides its item: the round, the task spec, whether and which
    mentions are masked, and the text the metric scored (``scored_column``) with its rule."""

    round: str
    spec: str
    mask: bool
    extra_mentions: tuple[str, ...]
    scored_column: str | None = None
    scored_rule: str | None = None


def _check_options(task: str | TaskType, d: _Design, *, round: str, n_gold: int | None) -> TaskType:
    """Check the options that need no table; returns the task type."""
    n, bins, allocation, quota, quota_by, prefer = d.n, d.bins, d.allocation, d.quota, d.quota_by, d.prefer
    check_choice("E256", "unknown --prefer", prefer, ("random", "uncertain"), fix="use --prefer uncertain")
    if quota is not None and not quota_by:
        raise BiaskitError("E256", "a quota needs the column it counts by", value=None, fix="pass a plan written by `biaskit annotate plan`")
    tt = get_task_type(task)
    if not round or not isinstance(round, str) or any(ch in round for ch in "/\\\n"):
        raise BiaskitError("E091", "invalid round name", value=round, fix="use a short name such as r1 or 2026-11-sentiment")
    if n < 0 or bins < 1:
        raise BiaskitError("E091", "n must be >= 0 and bins >= 1", value={"n": n, "bins": bins}, fix="e.g. --n 100 --bins 4")
    if n_gold is not None and n_gold < 0:
        raise BiaskitError("E091", "n_gold must be >= 0", value=n_gold, fix="e.g. --n-gold 10, or leave it out to mix in every gold item")
    check_choice("E091", "unknown allocation", allocation, ("equal", "proportional"), fix="use --allocation equal")
    return tt


def _metric_columns(tt: TaskType, cols: list[str], d: _Design) -> MetricColumns | None:
    """The columns of the metric the design uses: the one named, else the task's default metric when the
    table carries it (or columns are named); None without one."""
    metric, score_column, label_column, per_label, bins = d.metric, d.score_column, d.label_column, d.per_label, d.bins
    metric = metric or (
        tt.default_metric
        if tt.default_metric and (score_column or label_column or any(c.startswith(tt.default_metric + "_") for c in cols))
        else None
    )
    if not metric:
        return None
    return resolve(
        metric, cols, label_column=label_column, score_column=score_column, need_label=bool(per_label), need_score=not per_label and bins > 1
    )


def _design_columns(cols: list[str], d: _Design) -> Sequence[str]:
    """Check that the design's columns exist (per-label sampling needs a metric and ``by``); returns the strata
    (default: source and group where present, none for per-label sampling)."""
    mc, strata, per_label, by, text_column, quota, quota_by = d.mc, d.strata, d.per_label, d.by, d.text_column, d.quota, d.quota_by
    if per_label and mc is None:
        raise BiaskitError(
            "E091", "per-label sampling needs a metric whose labels to use", value=None, fix="add --metric vader (or another scored metric)"
        )
    if per_label and not by:
        raise BiaskitError(
            "E091",
            "per-label sampling needs a grouping column",
            value=None,
            options=[c for c in ("template", "template_id", "prompt_id", "group") if c in cols],
            fix="add --by template (or another column)",
        )
    if strata is None:
        strata = [c for c in ("source", "group") if c in cols] if not per_label else []
    missing = [
        c
        for c in [*strata, *([by] if by else []), *([text_column] if text_column else []), *([quota_by] if quota is not None and quota_by else [])]
        if c not in cols
    ]
    if missing:
        raise BiaskitError(
            "E091",
            f"column(s) {', '.join(missing)} not in the table",
            value=missing,
            options=cols,
            fix="name existing columns in --strata / --by / --text-column",
        )
    return strata


def _candidate_pool(rows: list[dict[str, Any]], d: _Design, exclude: set[str], rep: SampleReport) -> list[dict[str, Any]]:
    """The rows that can be drawn, sorted by sample id: with a text and the metric's value, once per sample id,
    not annotated before (``exclude``); the report counts what is left out and why."""
    mc, text_column, per_label = d.mc, d.text_column, d.per_label
    seen: set[str] = set()
    pool: list[dict[str, Any]] = []
    err_col = mc.error_column() if mc else ""
    for r in rows:
        text, shown = _text_of(r, text_column)
        if not text or not text.strip():
            rep.dropped_no_text += 1
            continue
        if mc is not None and (
            (err_col in r and r.get(err_col))
            or (mc.score and not per_label and mc.score_of(r) is None)
            or (per_label and (mc.label is None or r.get(mc.label) is None))
        ):
            rep.dropped_metric_error += 1
            continue
        sid = make_sample_id(r.get("prompt_id"), r.get("model"), r.get("kind"), r.get("sample_index"), text)
        if sid in seen:
            rep.duplicates += 1
            continue
        seen.add(sid)
        if sid in exclude:
            rep.excluded += 1
            continue
        pool.append({"_sid": sid, "_text": text, "_shown": shown, "_row": r})
    pool.sort(key=lambda p: p["_sid"])
    return pool


def _draw_quota(
    pool: list[dict[str, Any]],
    d: _Design,
    uncertain: Callable[[list[dict[str, Any]]], np.ndarray] | None,
    rng: np.random.Generator,
    rep: SampleReport,
) -> list[dict[str, Any]]:
    """A round plan's design: ``quota[g]`` items of each value ``g`` of ``quota_by``, a seeded draw, or with
    ``uncertain`` (``prefer="uncertain"``: each item's uncertainty, see :func:`_uncertainty_of`) the most uncertain
    first."""
    quota = d.quota
    assert quota is not None  # the quota design
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in pool:
        groups[str(p["_row"].get(d.quota_by))].append(p)
    chosen: list[dict[str, Any]] = []
    for g in sorted(quota):
        items = groups.get(g, [])
        k = min(int(quota[g]), len(items))
        order = rng.permutation(len(items)) if items else np.array([], dtype=int)
        if uncertain is not None and items:
            u = uncertain([p["_row"] for p in items])
            rank = np.empty(len(items), dtype=int)
            rank[order] = np.arange(len(items))  # seeded tie-break among equally uncertain items
            order = np.array(sorted(range(len(items)), key=lambda i: (-u[i], rank[i])), dtype=int)
        for i in sorted(int(x) for x in list(order)[:k]):
            chosen.append({**items[i], "_stratum": f"{d.quota_by}={g}"})
        rep.strata[f"{d.quota_by}={g}"] = {"available": len(items), "chosen": k, "planned": int(quota[g])}
    return chosen


def _uncertainty_of(
    rows: list[dict[str, Any]], cols: list[str], tt: TaskType, mc: MetricColumns | None
) -> Callable[[list[dict[str, Any]]], np.ndarray]:
    """For ``prefer="uncertain"``: the :func:`~biaskit.annotate.planning.uncertainty` of a group's rows, with the other
    label columns on the task's scale and the score boundaries of the whole table."""
    same_scale, cuts = _uncertainty_inputs(rows, cols, tt, mc)
    return lambda group: uncertainty(group, mc, list(tt.ordinal), same_scale, cuts=cuts)


def _uncertainty_inputs(rows: list[dict[str, Any]], cols: list[str], tt: TaskType, mc: MetricColumns | None) -> tuple[list[str], Any]:
    """For ``prefer="uncertain"``: the other label columns on the task's scale, and the score boundaries between
    labels (from the whole table, not one group)."""
    same_scale = [
        c
        for c in cols
        if c.endswith("_label") and (mc is None or c != mc.label) and {r.get(c) for r in rows if r.get(c) is not None} <= set(tt.labels)
    ]
    cuts = (
        boundaries(rows, mc.label, mc.score_of, list(tt.ordinal))  # from the whole table, not one group
        if mc is not None and mc.label and mc.score
        else None
    )
    return same_scale, cuts


def _group_value(v: Any) -> Any:
    """A grouping value as a stratum name: a float NaN (a float --by column) is a null, as None."""
    return None if isinstance(v, float) and v != v else v


def _draw_per_label(pool: list[dict[str, Any]], d: _Design, tt: TaskType, rng: np.random.Generator, rep: SampleReport) -> list[dict[str, Any]]:
    """Sheng et al.'s design: ``per_label[lab]`` items with the metric's label ``lab`` in each value of ``by``."""
    mc, per_label = d.mc, d.per_label
    assert mc is not None and per_label is not None  # per-label sampling needs a metric (E091 before)
    for lab in per_label:
        if lab not in tt.labels and mc and lab not in {p["_row"].get(mc.label) for p in pool}:
            raise BiaskitError(
                "E091",
                f"label {lab!r} of --per-label is neither a {tt.name} label nor a value of {mc.label}",
                value=lab,
                options=tt.labels,
                fix="e.g. --per-label positive=3,negative=3",
            )
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in pool:
        lab = p["_row"].get(mc.label)
        if lab in per_label:
            key = f"{d.by}={_group_value(p['_row'].get(d.by))}|{mc.metric}={lab}"
            groups[key].append(p)
    chosen: list[dict[str, Any]] = []
    for key in sorted(groups):
        k = per_label[key.rsplit("=", 1)[1]]
        items = groups[key]
        pick = rng.choice(len(items), size=min(k, len(items)), replace=False) if items else np.array([], dtype=int)
        for i in sorted(int(x) for x in pick):
            chosen.append({**items[i], "_stratum": key})
        rep.strata[key] = {"available": len(items), "chosen": min(k, len(items))}
    return chosen


def _draw_stratified(pool: list[dict[str, Any]], d: _Design, rng: np.random.Generator, rep: SampleReport) -> list[dict[str, Any]]:
    """BOLD's design: strata are the ``strata`` columns' values times bins of the metric's score; ``n`` items
    are allocated over them (:func:`_allocate`) and drawn without replacement in each."""
    mc = d.mc
    assert d.strata is not None  # filled in by _design_columns
    bin_idx = None
    if mc is not None and mc.score and d.bins > 1 and pool:
        vals = np.array([mc.score_of(p["_row"]) for p in pool], dtype=float)
        bin_idx, rep.bin_edges = _bins(vals, d.bins, d.binning)
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for j, p in enumerate(pool):
        parts = [f"{c}={p['_row'].get(c)}" for c in d.strata]
        if bin_idx is not None and mc is not None:  # bins come from the metric's score
            parts.append(f"{mc.metric}_bin={int(bin_idx[j])}")
        groups["|".join(parts) or "all"].append(p)
    keys = sorted(groups)
    take = _allocate([len(groups[k]) for k in keys], d.n, d.allocation, rng)
    chosen: list[dict[str, Any]] = []
    for key, k in zip(keys, take):
        items = groups[key]
        pick = rng.choice(len(items), size=k, replace=False) if k else np.array([], dtype=int)
        for i in sorted(int(x) for x in pick):
            chosen.append({**items[i], "_stratum": key})
        rep.strata[key] = {"available": len(items), "chosen": int(k)}
    return chosen


def _sample_row(p: dict[str, Any], shown: _Shown, rep: SampleReport) -> dict[str, Any]:
    """The samples-stage row of a chosen item: its source columns (``text`` kept as ``source_text``), then the
    masked text and the sampling columns (the spans shown and scored among them)."""
    r = p["_row"]
    text = p["_text"]
    masked, mapping = mask_text(text, row_mentions(r, shown.extra_mentions)) if shown.mask else (text, [])
    rep.masked += bool(mapping)
    row = {k: v for k, v in r.items() if k not in OWN_COLUMNS and k != "text"}
    row["source_text"] = r.get("text")
    row.update(
        {
            "sample_id": p["_sid"],
            "round": shown.round,
            "task_type": shown.spec,
            "text": masked,
            "original_text": text,
            "mask_mapping": json.dumps(mapping, ensure_ascii=False),
            "prompt_id": r.get("prompt_id"),
            "stratum": p["_stratum"],
            "is_gold": False,
            "gold_label": None,
            "shown_span": p.get("_shown"),
            "scored_span": row_scored_span(r, shown.scored_column),
            "scored_rule": shown.scored_rule,
        }
    )
    return row


def _gold_items(gold: Any, tt: TaskType, excl) -> list[tuple[str, str, str]]:
    """The gold table's items as (sample_id, text, gold label), sorted, those in ``excl`` left out; E091 for a missing
    column, E007 for an item listed twice, the task's label check for a gold label."""
    if gold is None:
        return []
    g = to_arrow(gold)
    for c in ("text", "gold_label"):
        if c not in g.column_names:
            raise BiaskitError(
                "E091", f"the gold table lacks column {c!r}", value=g.column_names, fix="give gold items as CSV/JSONL with columns text, gold_label"
            )
    items = []
    seen: dict[str, int] = {}
    for i, r in enumerate(g.to_pylist(), 1):
        lab = (r.get("gold_label") or "").strip().lower()
        tt.check_label(lab)
        sid = r.get("sample_id") or "g-" + make_sample_id(r["text"])[2:]
        if sid in seen:
            raise BiaskitError(
                "E007",
                f"gold rows {seen[sid]} and {i} are the same item (same sample_id or text)",
                value=sid,
                fix="list each gold item once in the gold file",
            )
        seen[sid] = i
        if sid not in excl:
            items.append((sid, r["text"], lab))
    return sorted(items)


def _gold_rows(items: list[tuple[str, str, str]], shown: _Shown, n_gold: int | None, rng, rep: SampleReport) -> list[dict]:
    """The sample rows of ``n_gold`` gold items (all when None) drawn from ``items``."""
    k = len(items) if n_gold is None else min(n_gold, len(items))
    pick = sorted(int(i) for i in rng.choice(len(items), size=k, replace=False)) if k else []
    rep.gold = len(pick)
    return [
        {
            "sample_id": items[i][0],
            "round": shown.round,
            "task_type": shown.spec,
            "text": items[i][1],
            "original_text": items[i][1],
            "mask_mapping": "[]",
            "prompt_id": None,
            "stratum": "gold",
            "is_gold": True,
            "gold_label": items[i][2],
        }
        for i in pick
    ]


def _to_table(rows: list[dict[str, Any]]) -> pa.Table:
    names: list[str] = list(OWN_COLUMNS)
    for r in rows:
        for k in r:
            if k not in names:
                names.append(k)
    if not rows:
        return SAMPLES.arrow_schema().empty_table()
    t = pa.Table.from_pylist([{k: r.get(k) for k in names} for r in rows])
    return conform(t, "samples")
