"""Counterfactual swapping: one variant of a text per target group of an axis (:mod:`.counterfactual`).

For a target group, every word of the axis that belongs to another group is replaced by its form in the target
group; the variant exists only when that changed the text. So a text with "he" gives a ``female`` variant and a
text with "she" a ``male`` one (both directions); a text mixing groups gives one variant per group.

* Words are found by one regular expression over the axis's words (longest first, case-insensitive, not inside
  another word), so the first and last words of a sentence are swapped like any other.
* The case of the source word is kept: ``She`` -> ``He``, ``SHE`` -> ``HE``, ``she`` -> ``he``.
* A word with several readings ("her": object or possessive; "his": possessive determiner or standalone) is
  resolved from spaCy's analysis of the sentence (:func:`token_role`); without spaCy (``syntax=False``, the regex
  baseline) its first listed reading is used.
* An indefinite article in front of a swapped word is re-chosen by sound ("a Deaf" -> "an autistic").
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from biaskit.assets import load_spacy
from biaskit.errors import BiaskitError, check_choice
from biaskit.io import read_table, write_table
from biaskit.manifest import new_manifest
from biaskit.templates.articles import indefinite_article
from biaskit.templates.counterfactual import LANGUAGES, Axis, Entry, load_axis
from biaskit.templates.files import short_hash

#: spaCy components the roles need (the tagger's tags, the parser's dependencies, the attribute ruler's morphology)
SPACY_EXCLUDE = ("ner", "lemmatizer")
#: swap: every word to the other group (two-group axes, one variant); each: one variant per target group
MODES = ("swap", "each")
SWAPPED = "swapped"
_ARTICLE = re.compile(r"(?<![\w'])(an?)(\s+)$", re.IGNORECASE)


def match_case(source: str, target: str, listed: str) -> str:
    """``target`` written in the case of ``source`` (``listed`` is how the list spells the source word).

    All capitals stay all capitals, a capital first letter stays one, and a word written as listed gives the
    target as listed; a lower-cased word ("deaf" for "Deaf") gives the target lower-cased.
    """
    letters = [c for c in source if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return target.upper()
    if source == listed:
        return target
    if source[:1].isupper():
        return target[:1].upper() + target[1:]
    if source.islower():
        return target.lower()
    return target


def token_role(token: Any) -> str:
    """The reading of a pronoun token, from spaCy: ``determiner`` (it modifies a noun: "her book", "his car"),
    ``standalone`` (a possessive that stands alone: "it is his", "hers"), else ``object`` ("I saw her").

    A determiner needs the tagger and the parser to agree (tag ``PRP$`` and dependency ``poss``): where they
    disagree the tag decides, which gets "had her wed Peleus" and "leaving her feeling" (tag ``PRP``, parsed
    ``poss``) and "not his" (tag ``PRP$``, parsed ``appos``) right."""
    if token.tag_ == "PRP$" and token.dep_ == "poss":
        return "determiner"
    if "Yes" in token.morph.get("Poss") or token.lower_ == "hers":
        return "standalone"
    return "object"


def _token_at(doc: Any, start: int) -> Any:
    for tok in doc:
        if tok.idx <= start < tok.idx + len(tok.text):
            return tok
    return None


def _has_roles(readings: list[tuple[str, Entry]], targets: Sequence[str]) -> bool:
    """Whether the readings of a word carry roles and give different words in some target group."""
    if not any(g in e.roles for g, e in readings):
        return False
    return any(len({e.forms[t] for _, e in readings}) > 1 for t in targets if all(g != t for g, _ in readings))


@dataclass
class Variant:
    """One variant text and its swaps: ``{from, to, start, end}`` with the offsets of ``to`` in ``text``."""

    group: str
    text: str
    swaps: list[dict[str, Any]] = field(default_factory=list)


class Swapper:
    """Swaps the words of ``axis`` in texts; ``nlp`` is a loaded spaCy pipeline, or None for the regex baseline."""

    def __init__(self, axis: Axis, nlp: Any = None, targets: Sequence[str] | None = None, mode: str | None = None) -> None:
        if axis.language not in LANGUAGES:
            raise BiaskitError(
                "E422",
                f"axis {axis.name!r} is in {axis.language!r}: a word-list swap cannot make verbs, adjectives and participles agree",
                value=axis.language,
                options=LANGUAGES,
                fix="use an English axis; for gendered languages build minimal pairs from templates with agreement forms (biaskit expand templates)",
            )
        self.axis = axis
        self.nlp = nlp
        self.readings = axis.readings()
        self.targets = tuple(targets) if targets else axis.groups
        unknown = [t for t in self.targets if t not in axis.groups]
        if unknown:
            raise BiaskitError("E421", "unknown target group of the axis", value=unknown, options=axis.groups, fix="use groups of the axis")
        self.mode = check_choice(
            "E005", "unknown counterfactual mode", mode or ("swap" if len(axis.groups) == 2 else "each"), MODES, fix="use swap or each"
        )
        if self.mode == "swap" and (len(axis.groups) != 2 or targets):
            raise BiaskitError(
                "E005",
                f"mode swap needs an axis of two groups and no target groups (axis {axis.name!r} has {len(axis.groups)} groups)",
                value=list(targets or axis.groups),
                options=MODES,
                fix="use mode each (one variant per target group)",
            )
        self.other = {axis.groups[0]: axis.groups[-1], axis.groups[-1]: axis.groups[0]}
        words = sorted(self.readings, key=lambda w: (-len(w), w))
        self.pattern = re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(w) for w in words) + r")(?![\w-])", re.IGNORECASE)
        self.ambiguous = {w for w, rs in self.readings.items() if _has_roles(rs, self.targets)}

    def needs_syntax(self, text: str) -> bool:
        """Whether ``text`` holds a word whose reading only the syntax decides."""
        return self.nlp is not None and any(m.group(0).lower() in self.ambiguous for m in self.pattern.finditer(text))

    def _reading(self, word: str, target: str | None, start: int, doc: Any) -> tuple[str, Entry] | None:
        """The (source group, entry) of ``word`` to swap towards ``target`` (None: the other group); None when the
        word is already in the target group."""
        readings = self.readings[word.lower()]
        if target is not None and any(g == target for g, _ in readings):
            return None
        if doc is not None and word.lower() in self.ambiguous:
            tok = _token_at(doc, start)
            role = token_role(tok) if tok is not None else None
            for g, e in readings:
                if e.roles.get(g) == role:
                    return g, e
            for g, e in readings:
                if g not in e.roles:
                    return g, e
        return readings[0]

    def variant(self, text: str, target: str | None, doc: Any = None) -> Variant:
        """``text`` with every word of another group put in ``target``, or with every word put in the other
        group (``target`` None, mode swap); no swaps: the text unchanged. The variant is named after the group its
        words went to (``swapped`` when a swap sent words to both groups)."""
        went: set[str] = set()
        out: list[str] = []
        swaps: list[dict[str, Any]] = []
        pos = 0
        length = 0
        for m in self.pattern.finditer(text):
            word = m.group(0)
            reading = self._reading(word, target, m.start(), doc)
            if reading is None:
                continue
            group, entry = reading
            to = target or self.other[group]
            went.add(to)
            new = match_case(word, entry.forms[to], entry.forms[group])
            gap = text[pos : m.start()]
            art = _ARTICLE.search(gap)
            if art:
                want = match_case(art.group(1), indefinite_article(new), art.group(1).lower())
                if want != art.group(1):
                    a_start = length + art.start(1)
                    swaps.append({"from": art.group(1), "to": want, "start": a_start, "end": a_start + len(want)})
                    gap = gap[: art.start(1)] + want + art.group(2)
            out.append(gap)
            length += len(gap)
            swaps.append({"from": word, "to": new, "start": length, "end": length + len(new)})
            out.append(new)
            length += len(new)
            pos = m.end()
        out.append(text[pos:])
        name = target or (went.pop() if len(went) == 1 else SWAPPED)
        return Variant(name, "".join(out), swaps)

    def variants(self, text: str, doc: Any = None) -> list[Variant]:
        """The variants of ``text`` that differ from it, one per target group, in the axis's group order."""
        targets: Sequence[str | None] = [None] if self.mode == "swap" else self.targets
        return [v for v in (self.variant(text, t, doc) for t in targets) if v.swaps and v.text != text]

    def swap_all(self, texts: Sequence[str], batch_size: int = 256) -> list[list[Variant]]:
        """:meth:`variants` of every text; spaCy parses (``nlp.pipe``) only the texts with an ambiguous word."""
        docs: dict[int, Any] = {}
        if self.nlp is not None:
            todo = [i for i, t in enumerate(texts) if self.needs_syntax(t)]
            for i, doc in zip(todo, self.nlp.pipe((texts[i] for i in todo), batch_size=batch_size)):
                docs[i] = doc
        return [self.variants(t, docs.get(i)) for i, t in enumerate(texts)]


def load_swap_nlp(spacy_model: str | None = "en") -> Any:
    """The spaCy pipeline the roles come from (``en`` resolves as :func:`biaskit.assets.load_spacy` does)."""
    if not spacy_model:
        return None
    return load_spacy(spacy_model, exclude=list(SPACY_EXCLUDE))


def swap_texts(
    axis: Axis, texts: Iterable[str], *, nlp: Any = None, targets: Sequence[str] | None = None, mode: str | None = None
) -> list[list[Variant]]:
    """Variants of each text (see :class:`Swapper`)."""
    return Swapper(axis, nlp, targets, mode).swap_all(list(texts))


# --------------------------------------------------------------------------- the pairs table

#: columns the pairs table adds; a source column of the same name is carried as ``source_<name>``
PAIR_COLUMNS = ("pair_id", "variant", "text", "swaps", "axis", "prompt_id")
ORIGINAL = "original"


@dataclass
class PairStats:
    """What :func:`counterfactual_table` made and skipped (recorded in the manifest)."""

    rows: int = 0
    pairs: int = 0
    variant_rows: int = 0
    by_variant: dict[str, int] = field(default_factory=dict)
    unswapped_rows: list[int] = field(default_factory=list)
    unswapped_ids: list[str] = field(default_factory=list)
    parsed: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "pairs": self.pairs,
            "variant_rows": self.variant_rows,
            "by_variant": dict(sorted(self.by_variant.items())),
            "no_swappable_word": len(self.unswapped_rows),
            "no_swappable_word_rows": self.unswapped_rows,
            "no_swappable_word_ids": self.unswapped_ids,
            "parsed_by_spacy": self.parsed,
        }


def _slugs(names: Sequence[str]) -> dict[str, str]:
    """A prompt-id suffix per variant name: lower-case letters/digits, made unique with the name's position."""
    out: dict[str, str] = {}
    for i, n in enumerate(names):
        slug = re.sub(r"[^0-9a-z]+", "-", n.lower()).strip("-") or "g"
        out[n] = slug if slug not in out.values() else f"{slug}-{i}"
    return out


def _check_language(table: Any, axis: Axis) -> None:
    if "language" not in table.column_names:
        return
    found = sorted({x for x in table.column("language").to_pylist() if x is not None})
    other = [x for x in found if x.split("-")[0] != axis.language]
    if other:
        raise BiaskitError(
            "E422",
            f"the table has texts in {other}, the axis {axis.name!r} swaps {axis.language!r} words only: swapping words of another "
            "language without making verbs and adjectives agree would make ungrammatical pairs",
            value=other,
            options=[axis.language],
            fix="keep the rows of the axis's language, or build pairs for that language from templates with agreement forms",
        )


def _texts(table: Any, text_column: str) -> list[str | None]:
    if text_column not in table.column_names:
        raise BiaskitError(
            "E001", f"the table has no text column {text_column!r}", value=text_column, options=table.column_names, fix="pass --text-column"
        )
    col = table.column(text_column)
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type) or pa.types.is_null(col.type)):
        raise BiaskitError("E004", f"column {text_column!r} must hold text", value=str(col.type), fix="pass the column that holds the texts")
    return col.to_pylist()


def counterfactual_table(table: Any, swapper: Swapper, *, text_column: str = "text") -> tuple[Any, PairStats]:
    """The pairs table of ``table`` made by ``swapper`` (its axis, spaCy pipeline or regex baseline, targets and
    mode): per text with a word of the axis, its ``original`` row and one row per variant, all with the same
    ``pair_id``; every source column is carried. Texts without such a word make no row and are listed in the stats.
    Returns (table, stats); E423 when no text has a word of the axis."""
    axis, nlp = swapper.axis, swapper.nlp
    _check_language(table, axis)
    texts = _texts(table, text_column)
    ids = table.column("prompt_id").to_pylist() if "prompt_id" in table.column_names else None
    todo = [i for i, t in enumerate(texts) if t]
    found = swapper.swap_all([texts[i] or "" for i in todo])
    stats = PairStats(rows=len(texts), parsed=sum(swapper.needs_syntax(texts[i] or "") for i in todo) if nlp is not None else 0)
    slugs = _slugs([ORIGINAL, *axis.groups, SWAPPED])
    take: list[int] = []
    cols: dict[str, list[Any]] = {c: [] for c in PAIR_COLUMNS}
    seen: dict[str, int] = {}
    variants_of = dict(zip(todo, found))
    for i, text in enumerate(texts):
        variants = variants_of.get(i) or []
        if not variants:
            stats.unswapped_rows.append(i)
            if ids is not None:
                stats.unswapped_ids.append(str(ids[i]))
            continue
        assert text is not None  # rows without text have no variants
        n = seen[text] = seen.get(text, -1) + 1
        pair_id = f"cf-{short_hash(axis.name, text, n)}"
        stats.pairs += 1
        for v in [Variant(ORIGINAL, text), *variants]:
            take.append(i)
            for c, val in zip(
                PAIR_COLUMNS, (pair_id, v.group, v.text, json.dumps(v.swaps, ensure_ascii=False), axis.name, f"{pair_id}-{slugs[v.group]}")
            ):
                cols[c].append(val)
            if v.group != ORIGINAL:
                stats.variant_rows += 1
                stats.by_variant[v.group] = stats.by_variant.get(v.group, 0) + 1
    if not take:
        raise BiaskitError(
            "E423",
            f"none of the {len(texts)} texts of column {text_column!r} has a word of the axis {axis.name!r}",
            value=[t for t in texts[:3]],
            fix="check --text-column and --axis (biaskit templates counterfactual --help lists the axes)",
        )
    carried = table.take(pa.array(take, type=pa.int64()))
    clash = set(PAIR_COLUMNS) - ({"text"} if text_column == "text" else set())
    out = {c: pa.array(v, type=pa.string()) for c, v in cols.items()}
    for name in carried.column_names:
        if name == text_column == "text":
            continue
        key = f"source_{name}" if name in clash else name
        out[key] = carried.column(name)
    if "source" not in out:
        out["source"] = pa.array(["counterfactual"] * len(take), type=pa.string())
    if "language" not in out:
        out["language"] = pa.array([axis.language] * len(take), type=pa.string())
    return pa.table(out), stats


def write_counterfactual(
    table: str | Path,
    axis: str | Path,
    out: str | Path,
    *,
    text_column: str = "text",
    mode: str | None = None,
    targets: Sequence[str] | None = None,
    spacy_model: str | None = "en",
) -> tuple[Axis, PairStats]:
    """Read ``table``, build its pairs on ``axis`` (:func:`counterfactual_table`; ``spacy_model`` None: the regex
    baseline) and write them to ``out`` as a prompts table with a manifest recording the axis, its limits and the
    texts without a word of the axis. Returns (axis, stats)."""
    ax = load_axis(axis)
    src = read_table(table, require=[text_column])
    nlp = load_swap_nlp(spacy_model)
    pairs, stats = counterfactual_table(src, Swapper(ax, nlp, targets, mode), text_column=text_column)
    manifest = new_manifest(
        "biaskit templates counterfactual",
        stage="prompts",
        inputs=[table, *([ax.path] if Path(ax.path).is_file() else [])],
        config={
            "axis": str(axis),
            "text_column": text_column,
            "mode": mode,
            "target": list(targets or []),
            "syntax": bool(spacy_model),
            "spacy_model": spacy_model,
        },
        extra={"counterfactual": {"axis": ax.describe(), "limits": ax.limits, **stats.as_dict()}},
    )
    write_table(pairs, out, stage="prompts", manifest=manifest)
    return ax, stats
