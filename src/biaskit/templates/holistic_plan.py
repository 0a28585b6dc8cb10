"""HolisticBias expansion plan: templates, noun-phrase and template filters, the seeded descriptor subset,
stylistic variants, and the vectorised row plan (:class:`_Plan`) that builds any slice of the table with
Arrow ``take`` and string joins.

See :mod:`biaskit.templates.holistic` for the entry points (:func:`~biaskit.templates.holistic.expand_holistic`,
:func:`~biaskit.templates.holistic.write_holistic`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from biaskit.errors import BiaskitError, check_choice
from biaskit.templates.files import short_hash
from biaskit.templates.holistic_data import NO_PREFERENCE, NOUN_PHRASE_TYPES, PREFERENCES, VARIANTS, HolisticData, load_holistic, placeholders_in
from biaskit.templates.holistic_phrases import NP_COLUMNS, noun_phrases

_IM = re.compile(r"\bI'm\b")


# --------------------------------------------------------------------------- Arrow arrays from buffers
# ``pa.array``/``pa.scalar`` make pyarrow import pandas (~0.3 s, ~70 MB); the expansion builds its arrays
# from buffers instead, so streaming a full expansion stays fast and small.


def _ints(a: np.ndarray) -> pa.Array:
    a = np.ascontiguousarray(a, dtype=np.int32)
    return pa.Array.from_buffers(pa.int32(), len(a), [None, pa.py_buffer(a)])


def _bools(a: np.ndarray | Sequence[bool]) -> pa.Array:
    a = np.asarray(a, dtype=bool)
    return pa.Array.from_buffers(pa.bool_(), len(a), [None, pa.py_buffer(np.packbits(a, bitorder="little"))])


def _strs(values: Sequence[str | None]) -> pa.Array:
    values = list(values)
    has_null = None in values
    enc = [b"" if v is None else v.encode("utf-8") for v in values]
    offsets = np.zeros(len(enc) + 1, dtype=np.int32)
    np.cumsum(np.fromiter(map(len, enc), dtype=np.int64, count=len(enc)), out=offsets[1:])
    bitmap, nulls = None, 0
    if has_null:
        valid = np.fromiter((v is not None for v in values), dtype=bool, count=len(values))
        nulls = int(len(values) - valid.sum())
        bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(pa.string(), len(enc), [bitmap, pa.py_buffer(offsets), pa.py_buffer(b"".join(enc))], null_count=nulls)


def _const(value: str, n: int) -> pa.Array:
    return _strs([value]).take(_ints(np.zeros(n, dtype=np.int32)))


# --------------------------------------------------------------------------- expansion


@dataclass
class ExpansionStats:
    version: str
    noun_phrases: int = 0
    templates: int = 0
    rows_before_dedupe: int = 0
    rows: int = 0
    distinct_texts: int | None = None
    merged_duplicates: int = 0
    descriptors_selected: list[str] | None = None
    filters: dict[str, Any] = field(default_factory=dict)
    variants: str = "none"
    variant_rows_skipped_as_no_op: int = 0

    def as_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        if d["descriptors_selected"] is not None:
            d["descriptors_selected"] = len(d["descriptors_selected"])
        return d


@dataclass
class _Tpl:
    template: str
    prefix: str
    suffix: str
    plural: bool
    first_turn_only: bool
    must_be_noun: bool
    tid: str


def _templates(data: HolisticData) -> list[_Tpl]:
    out = []
    for tpl, flags in data.templates.items():
        slot = placeholders_in(tpl)[0]
        prefix, suffix = tpl.split("{" + slot + "}")
        flags = flags or {}
        out.append(
            _Tpl(
                tpl,
                prefix,
                suffix,
                slot == "plural_noun_phrase",
                bool(flags.get("first_turn_only", False)),
                bool(flags.get("must_be_noun", False)),
                "hbt-" + short_hash(tpl, size=4),
            )
        )
    return out


def _as_set(name: str, values: Iterable[str] | None, valid: Iterable[str] | None = None) -> set[str] | None:
    if values is None:
        return None
    vals = {v for v in values}
    if valid is not None:
        valid_l = sorted({v for v in valid if v is not None})
        bad = sorted(v for v in vals if v not in valid_l)
        if bad:
            raise BiaskitError(
                "E005",
                f"unknown {name} value(s) {bad}",
                value=bad,
                options=valid_l,
                fix=f"use values from the dataset for --{name.replace('_', '-')}",
            )
    return vals


def _phrase_variant(phrase: str, hyphens: bool, lower: bool) -> str:
    if hyphens:
        phrase = phrase.replace("-", " ")
    if lower:
        phrase = phrase.lower()
    return phrase


def _check_variant_args(variants: str, variant_names: Sequence[str]) -> None:
    check_choice(
        "E005",
        "unknown variants mode",
        variants,
        ("none", "all", "sample"),
        fix="use --variants none, all or sample",
        options=["none", "all", "sample"],
    )
    bad_v = [v for v in variant_names if v not in VARIANTS]
    if bad_v:
        raise BiaskitError("E005", "unknown variant name(s)", value=bad_v, options=VARIANTS, fix="use the dataset's variant names")


@dataclass
class _NpFilters:
    """The noun-phrase filters of :func:`plan_holistic` (None: not filtered), checked against the dataset's values."""

    axes: set[str] | None
    buckets: set[str] | None
    preferences: set[str] | None
    noun_genders: set[str] | None
    nouns: set[str] | None
    noun_phrase_types: set[str] | None
    descriptors: set[str] | None
    keep_nouns: bool

    @classmethod
    def check(cls, nps: list[dict[str, Any]], *, axes, buckets, preferences, noun_genders, nouns, noun_phrase_types, descriptors, keep_nouns):
        return cls(
            _as_set("axis", axes, {r["axis"] for r in nps}),
            _as_set("bucket", buckets, {r["bucket"] for r in nps}),
            _as_set("preference", preferences, [*PREFERENCES, NO_PREFERENCE]),
            _as_set("noun_gender", noun_genders, {r["noun_gender"] for r in nps}),
            _as_set("noun", nouns, {r["noun"] for r in nps}),
            _as_set("noun_phrase_type", noun_phrase_types, NOUN_PHRASE_TYPES),
            _as_set("descriptor", descriptors, {r["descriptor"] for r in nps}),
            keep_nouns,
        )

    def as_dict(self) -> dict[str, list[str]]:
        """The filters given, for the expansion stats (sorted values, in parameter order)."""
        names = ("axes", "buckets", "preferences", "noun_genders", "nouns", "noun_phrase_types", "descriptors")
        return {k: sorted(v) for k in names if (v := getattr(self, k)) is not None}

    def keep(self, r: dict) -> bool:
        """Noun type, gender and noun filters apply to every row; the descriptor filters spare the ``noun``
        controls when ``keep_nouns``."""
        if not self._passes(r, _ROW_FILTERS):
            return False
        if r["noun_phrase_type"] == "noun" and self.keep_nouns:
            return True
        return self._passes(r, _DESCRIPTOR_FILTERS)

    def _passes(self, r: dict, filters: tuple[tuple[str, str], ...]) -> bool:
        """Whether row ``r`` passes each (filter, column) of ``filters`` that is set."""
        return all((allowed := getattr(self, name)) is None or r[column] in allowed for name, column in filters)


#: (filter, noun-phrase column it restricts): the filters every row passes, then the descriptor filters
_ROW_FILTERS = (("noun_phrase_types", "noun_phrase_type"), ("noun_genders", "noun_gender"), ("nouns", "noun"))
_DESCRIPTOR_FILTERS = (("axes", "axis"), ("buckets", "bucket"), ("preferences", "descriptor_preference"), ("descriptors", "descriptor"))


def _draw_descriptors(nps: list[dict[str, Any]], n_descriptors: int, keep_nouns: bool, seed: int, stats: ExpansionStats) -> list[dict[str, Any]]:
    """Keep the noun phrases of a seeded random subset of ``n_descriptors`` descriptors (and the ``noun``
    controls when ``keep_nouns``)."""
    pool = sorted({r["descriptor"] for r in nps if r["descriptor"] is not None})
    if n_descriptors < 1 or n_descriptors > len(pool):
        raise BiaskitError(
            "E005",
            f"cannot draw {n_descriptors} descriptors from the {len(pool)} left after filtering",
            value=n_descriptors,
            fix=f"use --n-descriptors between 1 and {len(pool)}",
        )
    rng = np.random.default_rng(seed)
    chosen = set(rng.choice(np.array(pool, dtype=object), size=n_descriptors, replace=False).tolist())
    stats.descriptors_selected = sorted(chosen)
    stats.filters["n_descriptors"] = n_descriptors
    stats.filters["seed"] = seed
    return [r for r in nps if r["descriptor"] in chosen or (r["noun_phrase_type"] == "noun" and keep_nouns)]


def _select_templates(tpls: list[_Tpl], templates: Iterable[str] | None, first_turn: bool, stats: ExpansionStats) -> list[_Tpl]:
    """The templates asked for (template strings or ``hbt-`` ids), without ``first_turn_only`` ones unless ``first_turn``."""
    if templates is not None:
        wanted = set(templates)
        known = {t.template for t in tpls} | {t.tid for t in tpls}
        bad = sorted(wanted - known)
        if bad:
            raise BiaskitError(
                "E005",
                f"unknown template(s) {bad}",
                value=bad,
                options=[t.template for t in tpls],
                fix="give templates exactly as in sentence_templates.json, or their hbt- ids",
            )
        tpls = [t for t in tpls if t.template in wanted or t.tid in wanted]
        stats.filters["templates"] = sorted(wanted)
    if not first_turn:
        tpls = [t for t in tpls if not t.first_turn_only]
        stats.filters["first_turn"] = False
    return tpls


def _row_index(nps: list[dict[str, Any]], tpls: list[_Tpl]) -> tuple[np.ndarray, np.ndarray]:
    """Noun-phrase and template index per row: noun-phrase major, templates in file order (phrases without a
    noun skip ``must_be_noun`` templates)."""
    n_np, n_t = len(nps), len(tpls)
    has_noun = np.fromiter((r["noun"] is not None for r in nps), dtype=bool, count=n_np)
    t_all = np.arange(n_t, dtype=np.int32)
    t_free = np.array([i for i, t in enumerate(tpls) if not t.must_be_noun], dtype=np.int32)
    counts = np.where(has_noun, n_t, len(t_free))
    np_idx = np.repeat(np.arange(n_np, dtype=np.int32), counts)
    # template index per row: tile the right template list per noun phrase, vectorised by blocks
    tpl_idx = np.empty(len(np_idx), dtype=np.int32)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    for mask, tl in ((has_noun, t_all), (~has_noun, t_free)):
        if len(tl) == 0 or not mask.any():
            continue
        s = starts[mask]
        pos = (s[:, None] + np.arange(len(tl))[None, :]).ravel()
        tpl_idx[pos] = np.tile(tl, len(s))
    return np_idx, tpl_idx


def _effective_variants(nps: list[dict[str, Any]], tpls: list[_Tpl], np_idx: np.ndarray, tpl_idx: np.ndarray) -> dict[str, np.ndarray]:
    """Per variant, which rows it would change."""
    tpl_plural = np.array([t.plural for t in tpls], dtype=bool)
    tpl_has_im = np.array([bool(_IM.search(t.prefix) or _IM.search(t.suffix)) for t in tpls])
    tpl_has_period = np.array([t.suffix.endswith(".") for t in tpls])
    sg_h = np.array(["-" in r["noun_phrase"] for r in nps])
    pl_h = np.array(["-" in r["plural_noun_phrase"] for r in nps])
    plural_row = tpl_plural[tpl_idx]
    hy_ok = np.where(plural_row, pl_h[np_idx], sg_h[np_idx])
    effective = {"remove_im_contraction": tpl_has_im[tpl_idx], "remove_final_period": tpl_has_period[tpl_idx], "remove_descriptor_hyphens": hy_ok}
    sg_low = np.array([r["noun_phrase"] != r["noun_phrase"].lower() for r in nps])
    pl_low = np.array([r["plural_noun_phrase"] != r["plural_noun_phrase"].lower() for r in nps])
    effective["lowercase_descriptor"] = np.where(plural_row, pl_low[np_idx], sg_low[np_idx])
    return effective


def _sample_variants(effective: dict[str, np.ndarray], names: list[str], n_base: int, probability: float, seed: int) -> dict[str, np.ndarray]:
    """Each row gets each variant with ``probability`` (seeded); a drawn variant that would not change the row
    is recorded as False (the columns say what was applied)."""
    flags = {v: np.zeros(n_base, dtype=bool) for v in VARIANTS}
    rng = np.random.default_rng(seed)
    draws = rng.random((n_base, len(VARIANTS))) < probability
    for j, v in enumerate(VARIANTS):
        if v in names:
            flags[v] = draws[:, j] & effective[v]
    return flags


def _all_variants(
    effective: dict[str, np.ndarray], names: list[str], np_idx: np.ndarray, tpl_idx: np.ndarray
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], int]:
    """Every combination of ``names`` that changes the row, combination-major; returns the new row index,
    the flags and how many (row, combination) pairs were left out as no-ops."""
    n_base = len(np_idx)
    sel_np, sel_t = [], []
    sel_flags: dict[str, list] = {v: [] for v in VARIANTS}
    skipped = 0
    for c in range(1 << len(names)):
        on = [names[j] for j in range(len(names)) if c >> j & 1]
        mask = np.ones(n_base, dtype=bool)
        for v in on:
            mask &= effective[v]
        skipped += int(n_base - mask.sum())
        sel_np.append(np_idx[mask])
        sel_t.append(tpl_idx[mask])
        for v in VARIANTS:
            sel_flags[v].append(np.full(int(mask.sum()), v in on, dtype=bool))
    return np.concatenate(sel_np), np.concatenate(sel_t), {v: np.concatenate(sel_flags[v]) for v in VARIANTS}, skipped


def plan_holistic(
    data: HolisticData | str | Path = "v1.0",
    *,
    axes: Iterable[str] | None = None,
    buckets: Iterable[str] | None = None,
    preferences: Iterable[str] | None = None,
    noun_genders: Iterable[str] | None = None,
    nouns: Iterable[str] | None = None,
    noun_phrase_types: Iterable[str] | None = None,
    templates: Iterable[str] | None = None,
    descriptors: Iterable[str] | None = None,
    n_descriptors: int | None = None,
    keep_nouns: bool = True,
    first_turn: bool = True,
    variants: str = "none",
    variant_names: Sequence[str] = VARIANTS,
    variant_probability: float = 0.5,
    seed: int = 0,
) -> _Plan:
    """Plan a HolisticBias expansion (filters, seeded descriptor subset, variants); see :func:`expand_holistic`.

    Filters (all optional, combined with AND): ``axes``, ``buckets``, ``preferences`` (reviewed,
    dispreferred, polarizing, no_data), ``noun_genders``, ``nouns`` (singular nouns), ``noun_phrase_types``, ``templates`` (template
    strings or ``hbt-`` ids), ``descriptors`` (exact values); ``n_descriptors`` draws a seeded random
    subset of that many descriptors (HolisticBias's small set is 100), keeping the descriptor-less
    ``noun`` phrases as controls unless ``keep_nouns=False``; ``first_turn=False`` drops templates flagged
    ``first_turn_only``.

    ``variants``: ``"none"``; ``"all"`` (every combination of ``variant_names`` that changes the text,
    deterministic; a flag that would not change a row is not emitted, and the count is reported); or
    ``"sample"`` (each row gets each variant with ``variant_probability``, seeded).
    Row order: noun phrases in file order, templates in file order (variant combinations outermost).
    """
    if not isinstance(data, HolisticData):
        data = load_holistic(data)
    _check_variant_args(variants, variant_names)
    stats = ExpansionStats(version=data.version, variants=variants)
    nps = noun_phrases(data)
    tpls = _templates(data)

    # ---- filters on noun phrases and templates
    filters = _NpFilters.check(
        nps,
        axes=axes,
        buckets=buckets,
        preferences=preferences,
        noun_genders=noun_genders,
        nouns=nouns,
        noun_phrase_types=noun_phrase_types,
        descriptors=descriptors,
        keep_nouns=keep_nouns,
    )
    stats.filters = filters.as_dict()
    nps = [r for r in nps if filters.keep(r)]
    if n_descriptors is not None:
        nps = _draw_descriptors(nps, n_descriptors, keep_nouns, seed, stats)
    tpls = _select_templates(tpls, templates, first_turn, stats)
    stats.noun_phrases, stats.templates = len(nps), len(tpls)
    if not nps or not tpls:
        raise BiaskitError(
            "E005",
            "the filters leave nothing to expand",
            value=stats.filters,
            fix="loosen the filters (check the values with `biaskit expand holistic --help`)",
        )

    # ---- rows, then variant flags per row
    np_idx, tpl_idx = _row_index(nps, tpls)
    names = [v for v in VARIANTS if v in variant_names] if variants != "none" else []
    flags = {v: np.zeros(len(np_idx), dtype=bool) for v in VARIANTS}
    if names:
        effective = _effective_variants(nps, tpls, np_idx, tpl_idx)
        if variants == "sample":
            flags = _sample_variants(effective, names, len(np_idx), variant_probability, seed)
        else:
            np_idx, tpl_idx, flags, stats.variant_rows_skipped_as_no_op = _all_variants(effective, names, np_idx, tpl_idx)
    return _Plan(data, nps, tpls, np_idx, tpl_idx, flags, names, stats)


class _Plan:
    """Row plan of an expansion: per row a noun-phrase index, a template index and variant flags.

    Lookup arrays are built once at noun-phrase/template level; :meth:`batch` materialises any slice
    of rows with Arrow ``take`` and string joins, so the full table never has to be in memory at once.
    """

    def __init__(self, data, nps, tpls, np_idx, tpl_idx, flags, names, stats) -> None:
        self.data, self.nps, self.tpls, self.names, self.stats = data, nps, tpls, names, stats
        self.np_idx, self.tpl_idx = np_idx, tpl_idx
        self.flags = flags
        self.n_rows = len(np_idx)
        im = flags["remove_im_contraction"].astype(np.int32)
        pe = flags["remove_final_period"].astype(np.int32)
        hy = flags["remove_descriptor_hyphens"].astype(np.int32)
        lo = flags["lowercase_descriptor"].astype(np.int32)
        # prefix/suffix per (template, I'm variant, period variant)
        pre_list, suf_list = [], []
        for t in tpls:
            for i_im in (0, 1):
                p = _IM.sub("I am", t.prefix) if i_im else t.prefix
                s = _IM.sub("I am", t.suffix) if i_im else t.suffix
                for i_pe in (0, 1):
                    pre_list.append(p)
                    suf_list.append(s.rstrip(".") if i_pe and s else s)
        self.pre = _strs(pre_list)
        self.suf = _strs(suf_list)
        self.ps_idx = (tpl_idx * 2 + im) * 2 + pe
        tpl_plural = np.array([t.plural for t in tpls], dtype=np.int32)
        plural_row = tpl_plural[tpl_idx]
        # the descriptor as written in the text: the same variant applied as to the phrase it sits in
        if names:
            phr = [
                _phrase_variant(ph, bool(i_hy), bool(i_lo))
                for r in nps
                for ph in (r["noun_phrase"], r["plural_noun_phrase"])
                for i_hy in (0, 1)
                for i_lo in (0, 1)
            ]
            spans = [
                None if sp is None else _phrase_variant(sp, bool(i_hy), bool(i_lo))
                for r in nps
                for sp in (r.get("_span"), r.get("_plural_span"))
                for i_hy in (0, 1)
                for i_lo in (0, 1)
            ]
            self.phr_idx = ((np_idx * 2 + plural_row) * 2 + hy) * 2 + lo
            self.code = im * 8 + hy * 4 + lo * 2 + pe
        else:
            phr = [ph for r in nps for ph in (r["noun_phrase"], r["plural_noun_phrase"])]
            spans = [sp for r in nps for sp in (r.get("_span"), r.get("_plural_span"))]
            self.phr_idx = np_idx * 2 + plural_row
            self.code = None
        self.phr = _strs(phr)
        self.spans = _strs(spans)
        # ids: noun-phrase hash (+ occurrence for exact repeats) + template hash (+ variant code)
        occ: dict[tuple, int] = {}
        np_ids = []
        for r in nps:
            key = tuple(r[c] for c in NP_COLUMNS)
            k = occ.get(key, 0)
            occ[key] = k + 1
            np_ids.append("hb-" + short_hash(*key, k if k else None))
        self.np_ids = _strs(np_ids)
        self.tids = _strs([t.tid[4:] for t in tpls])
        self.codes = _strs(["", *[f"-v{c:04b}" for c in range(1, 16)]])
        self.np_table = pa.table({c: _strs([r[c] for r in nps]) for c in NP_COLUMNS})
        self.t_table = pa.table(
            {
                "template": _strs([t.template for t in tpls]),
                "first_turn_only": _bools([t.first_turn_only for t in tpls]),
                "must_be_noun": _bools([t.must_be_noun for t in tpls]),
                "template_id": _strs([t.tid for t in tpls]),
            }
        )

    def batch(self, start: int = 0, stop: int | None = None) -> pa.Table:
        """Rows ``start:stop`` as a prompts-stage table."""
        sl = slice(start, self.n_rows if stop is None else stop)
        npi = _ints(self.np_idx[sl])
        tpi = _ints(self.tpl_idx[sl])
        psi = _ints(self.ps_idx[sl])
        n = len(npi)
        empty = _const("", n)
        phrase = self.phr.take(_ints(self.phr_idx[sl]))
        text = pc.binary_join_element_wise(self.pre.take(psi), phrase, self.suf.take(psi), empty)
        id_parts = [self.np_ids.take(npi), self.tids.take(tpi)]
        if self.code is not None:
            id_parts.append(self.codes.take(_ints(self.code[sl])))
        cols: dict[str, Any] = {
            "prompt_id": pc.binary_join_element_wise(*id_parts, empty),
            "text": text,
            "source": _const("holistic_bias", n),
            "language": _const("en", n),
        }
        npt = self.np_table.take(npi)
        for c in NP_COLUMNS:
            cols[c] = npt.column(c)
        cols["descriptor_span"] = self.spans.take(_ints(self.phr_idx[sl]))
        tt = self.t_table.take(tpi)
        for c in tt.column_names:
            cols[c] = tt.column(c)
        cols["masked"] = _bools(np.zeros(n, dtype=bool))
        cols["dataset_version"] = _const(self.data.version, n)
        if self.names:
            for v in VARIANTS:
                cols[v] = _bools(self.flags[v][sl])
            cols["variant_noun_phrase"] = phrase
        return pa.table(cols)

    def batches(self, batch_rows: int = 65_536):
        for start in range(0, self.n_rows, batch_rows):
            yield self.batch(start, start + batch_rows)
