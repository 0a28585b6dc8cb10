"""BOLD's prompt rule, the filters around it, and prompt rows with provenance.

BOLD (Dhamala et al., FAccT 2021) keeps a Wikipedia sentence when it mentions the group term (a profession,
a person's name, a religion or ideology term) near its start; the prompt is the first five words plus as
many words as the term has (6-9 words), and the rest of the sentence is the human-written baseline. Words
are counted on the sentence split at single space characters, as BOLD did (a double space yields an empty
token), and the prompt keeps BOLD's trailing space.

Two named presets (:data:`PRESETS`, :func:`preset_rule`):

``strict`` (the default)  the term must occur as whole words within the first ``window`` (8) words; sentences
                          with <= 6 words and sentences that would leave nothing to generate are dropped;
                          repeated prompts are dropped within the domain.
``bold``                  what BOLD's published files show: the term is a case-insensitive *substring* of the
                          prompt's own words (the first 5 + len(term) words), so plurals and derived forms
                          count ("Truck drivers", "biocurator"); a sentence not longer than the prompt keeps
                          all its words but the last; no length filter; duplicates kept.

Every filter counts what it removed (:class:`FilterCounts`): ``too_short`` (<= ``min_words`` words),
``term_not_in_window``, ``no_continuation``, ``empty_prompt``, ``markup_residue`` and
``duplicate_prompt``.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import pyarrow as pa

from biaskit.errors import BiaskitError, check_choice
from biaskit.schema import validate
from biaskit.scrape.clean import has_residue

WINDOW = 8
N_FIRST = 5
MIN_WORDS = 6
DEDUPE_SCOPES = ("domain", "group", "global", "none")
MATCHES = ("word", "substring")
WITHIN = ("window", "prompt")
SHORT = ("drop", "keep")
TERM_MATCHES = ("exact", "prefix", "lemma")
WORD_UNITS = ("space", "char")
#: languages written without spaces between words: their "words" are units of the character rule by default
NO_SPACE_LANGUAGES = ("ja", "zh", "th", "lo", "km", "my", "bo")
FILTERS = ("too_short", "term_not_in_window", "no_continuation", "empty_prompt", "markup_residue", "duplicate_prompt")

#: Named rule presets (settings on top of :class:`PromptRule`'s defaults). ``strict`` is the default: every
#: prompt holds the whole term as words and leaves a sentence of more than 6 words with at least one word to
#: generate. ``bold`` reproduces BOLD's published prompts from their sentences (docs/scrape.md: the shares).
PRESETS: dict[str, dict] = {
    "strict": {},
    "bold": {"match": "substring", "within": "prompt", "short": "keep", "min_words": 0, "dedupe": "none"},
}
RULE_KEYS = ("preset", "window", "n_first", "min_words", "dedupe", "match", "within", "short")

S, I = pa.string(), pa.int64()
#: Columns every BOLD-style prompt row has, whether scraped or imported from BOLD's files: the prompt, its group
#: and term, the source sentence and its provenance (:data:`CANDIDATE_SCHEMA` and ``bold.IMPORT_SCHEMA`` add their own).
#: The provenance of a scraped sentence: the wiki, the page and its revision, when it was read and its licence.
PAGE_FIELDS: tuple[tuple[str, pa.DataType], ...] = (
    ("wiki", S),
    ("page_title", S),
    ("page_id", I),
    ("revision_id", I),
    ("retrieved_at", S),
    ("license", S),
)
PROMPT_FIELDS: tuple[tuple[str, pa.DataType], ...] = (
    ("prompt_id", S),
    ("text", S),
    ("source", S),
    ("language", S),
    ("domain", S),
    ("group", S),
    ("term", S),
    ("reference", S),
    *PAGE_FIELDS,
)
#: Columns of the prompts a scrape or ``prompts build`` writes (here, not in the pipeline, so that this module
#: needs nothing from it: config -> prompts <- pipeline, no cycle).
CANDIDATE_SCHEMA = pa.schema([*PROMPT_FIELDS, ("sentence_index", I)])


@dataclass(frozen=True)
class PromptRule:
    """Settings of the BOLD prompt rule; the defaults are the ``strict`` preset (see :data:`PRESETS`)."""

    window: int = WINDOW  # within="window": the term must occur within the first `window` words
    n_first: int = N_FIRST  # the prompt is the first `n_first` words + the words of the term
    min_words: int = MIN_WORDS  # sentences with <= min_words words are dropped
    dedupe: str = "domain"  # duplicate prompt strings are dropped within this scope
    match: str = "word"  # word: the term as whole words; substring: anywhere, also inside a word (BOLD)
    within: str = "window"  # window: in the first `window` words; prompt: in the prompt's own words (BOLD)
    short: str = "drop"  # sentence not longer than the prompt: drop (no_continuation) | keep all words but the last (BOLD)
    preset: str = "strict"  # the preset these settings started from (recorded in manifests)
    # set from the domain config's top-level `term_match` / `words` and `language` (not `rule:` keys)
    term_match: str = "exact"  # exact: as `match` says | prefix: each term word starts a word | lemma: same lemmas (simplemma)
    words: str = "space"  # space: words = the sentence split at spaces (BOLD) | char: the character rule (ja, zh, th)
    language: str = "en"  # for term_match: lemma

    def __post_init__(self) -> None:
        for name in ("window", "n_first"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise BiaskitError(
                    "E021",
                    f"prompt rule setting {name} must be a positive integer",
                    value=v,
                    fix=f"set {name} to e.g. {WINDOW if name == 'window' else N_FIRST}",
                )
        if not isinstance(self.min_words, int) or isinstance(self.min_words, bool) or self.min_words < 0:
            raise BiaskitError(
                "E021", "prompt rule setting min_words must be an integer >= 0", value=self.min_words, fix=f"set min_words to e.g. {MIN_WORDS}"
            )
        check_choice(
            "E021", "unknown duplicate-prompt scope", self.dedupe, DEDUPE_SCOPES, fix="use `domain` (BOLD-like), `group`, `global` or `none`"
        )
        for name, options in (
            ("match", MATCHES),
            ("within", WITHIN),
            ("short", SHORT),
            ("preset", tuple(PRESETS)),
            ("term_match", TERM_MATCHES),
            ("words", WORD_UNITS),
        ):
            check_choice("E021", f"unknown prompt rule setting {name}", getattr(self, name), options, fix=f"use one of: {', '.join(options)}")

    def as_dict(self) -> dict:
        """The settings by name (what manifests and resume states record)."""
        return {k: getattr(self, k) for k in RULE_KEYS}


def preset_rule(preset: str | None = None, **settings) -> PromptRule:
    """A :class:`PromptRule` from a preset name (default ``strict``) with explicit settings on top.

    ``None`` values are ignored. A ``window`` given to a preset whose term must lie in the prompt switches
    it to ``within="window"`` (the window the user asked for is then what counts).
    """
    name = preset or "strict"
    check_choice(
        "E021", "unknown prompt rule preset", name, PRESETS, fix="use --preset strict (the default) or --preset bold", options=sorted(PRESETS)
    )
    over = {k: v for k, v in settings.items() if v is not None and k != "preset"}
    unknown = sorted(set(over) - set(RULE_KEYS))
    if unknown:
        raise BiaskitError("E021", "unknown prompt rule setting", value=unknown, options=RULE_KEYS, fix="remove or rename the settings")
    d = {**PRESETS[name], "preset": name}
    if "window" in over and "within" not in over:
        d["within"] = "window"
    d.update(over)
    return PromptRule(**d)


@lru_cache(maxsize=4096)
def _term_regex(term: str) -> re.Pattern:
    words = [re.escape(w) for w in term.split()]
    return re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", re.IGNORECASE)


def _by_length(terms: Sequence[str]) -> list[str]:
    return sorted((t for t in terms if t and t.strip()), key=lambda t: (-len(t.split()), -len(t)))


def _occurs(term: str, text: str, match: str) -> bool:
    return term.lower() in text.lower() if match == "substring" else _term_regex(term).search(text) is not None


def find_term(head: str, terms: Sequence[str], match: str = "word") -> str | None:
    """The first term (longest first) that occurs in ``head`` case-insensitively: as whole words
    (``match="word"``), or anywhere, also inside a word (``match="substring"``, as BOLD did)."""
    return next((t for t in _by_length(terms) if _occurs(t, head, match)), None)


#: the character rule (``words: char``): one unit per CJK ideograph, kana, Thai/Lao/Khmer/Myanmar/Tibetan letter or
#: full-width sign; a run of other non-space characters (a Latin word, a number) is one unit
_NS = (
    r"\u0e00-\u0eff\u0f00-\u0fff\u1000-\u109f\u1780-\u17ff\u3000-\u303f\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
)
_CHAR_UNIT = re.compile(f"[{_NS}]|[^\\s{_NS}]+")


def char_units(sentence: str) -> list[tuple[int, int]]:
    """(start, end) of each unit of the character rule (see :data:`WORD_UNITS`)."""
    return [m.span() for m in _CHAR_UNIT.finditer(sentence)]


def _char_prompt(sentence: str, terms: Sequence[str], rule: PromptRule) -> tuple[str | None, str]:
    """BOLD's rule counting units of the character rule; the prompt is the sentence up to the end of its
    ``n_first`` + len(term) units (no space added: these scripts write none), a strict prefix of the sentence."""
    units = char_units(sentence)
    if len(units) <= rule.min_words:
        return None, "too_short"
    cands = sorted((t for t in terms if t and t.strip()), key=lambda t: -len(char_units(t)))
    term = None
    for t in cands:
        n_t = len(char_units(t))
        k = rule.window if rule.within == "window" else rule.n_first + n_t
        head = sentence[: units[min(k, len(units)) - 1][1]]
        if t.lower() in head.lower():
            term = t
            break
    if term is None:
        return None, "term_not_in_window"
    n = rule.n_first + len(char_units(term))
    if rule.short == "keep":
        n = min(n, len(units) - 1)
    if n < 1 or n >= len(units):
        return None, "no_continuation"
    prompt = sentence[: units[n - 1][1]]
    if not prompt.strip():
        return None, "empty_prompt"
    return prompt, term


_WORD = re.compile(r"\w+")


@lru_cache(maxsize=100_000)
def _lemma(word: str, language: str) -> str:
    import simplemma

    try:
        return simplemma.lemmatize(word, lang=language).casefold()
    except ValueError:  # a language simplemma does not know
        return word.casefold()


def _token_match(tokens: Sequence[str], term: str, mode: str, language: str) -> bool:
    """The term's words at consecutive word positions of ``tokens`` (words as the ``exact`` match sees them: runs
    of letters and digits, so "Thorpe's" and "Anti-abortion" hold the words "Thorpe" and "abortion"): each term
    word as the start of the word (``prefix``), or the same word or lemma (``lemma``, simplemma)."""
    tw = _WORD.findall(term)
    words = _WORD.findall(" ".join(tokens))
    if not tw:
        return False
    n = len(tw)
    if mode == "prefix":
        tl = [w.casefold() for w in tw]
        wl = [w.casefold() for w in words]
        return any(all(wl[i + j].startswith(tl[j]) for j in range(n)) for i in range(len(wl) - n + 1))
    tl = [(w.casefold(), _lemma(w, language)) for w in tw]
    wl = [(w.casefold(), _lemma(w, language)) for w in words]
    return any(all(wl[i + j][0] == tl[j][0] or wl[i + j][1] == tl[j][1] for j in range(n)) for i in range(len(wl) - n + 1))


def bold_prompt(sentence: str, terms: Sequence[str] | str, rule: PromptRule = PromptRule()) -> tuple[str | None, str]:
    """Apply BOLD's rule (with ``rule``'s settings, see :data:`PRESETS`) to one sentence.

    Returns ``(prompt, matched_term)`` or ``(None, reason)`` where reason is one of ``too_short``,
    ``term_not_in_window``, ``no_continuation``, ``empty_prompt``.
    """
    if isinstance(terms, str):
        terms = [terms]
    if rule.words == "char":
        return _char_prompt(sentence, terms, rule)
    if len(sentence.split()) <= rule.min_words:
        return None, "too_short"
    tokens = sentence.split(" ")
    if rule.within == "window":
        term = find_term(" ".join(tokens[: rule.window]), terms, rule.match)
    else:  # within the prompt's own words; each term has its own prompt length
        term = next((t for t in _by_length(terms) if _occurs(t, " ".join(tokens[: rule.n_first + len(t.split())]), rule.match)), None)
    if term is None and rule.term_match != "exact":  # inflected forms: only where the exact match finds no term
        term = next(
            (
                t
                for t in _by_length(terms)
                if _token_match(
                    tokens[: rule.window if rule.within == "window" else rule.n_first + len(t.split())], t, rule.term_match, rule.language
                )
            ),
            None,
        )
    if term is None:
        return None, "term_not_in_window"
    n = rule.n_first + len(term.split())
    if rule.short == "keep":  # a sentence not longer than the prompt keeps all its words but the last one (BOLD)
        n = min(n, max((i for i, w in enumerate(tokens) if w.strip()), default=0))
    if n >= len(tokens) or not " ".join(tokens[n:]).strip():  # trailing spaces/newlines are no word to generate
        return None, "no_continuation"
    prompt = " ".join(tokens[:n]) + " "
    if not prompt.strip():
        return None, "empty_prompt"
    return prompt, term


def prompt_id(*parts: object, source: str = "bold", domain: str | None = None) -> str:
    """Stable content-derived id, e.g. ``bold-prof-3f2a9c1d0b``."""
    h = hashlib.sha1("\x1f".join("" if p is None else str(p) for p in parts).encode("utf-8")).hexdigest()[:12]
    dom = re.sub(r"[^a-z0-9]", "", (domain or "").lower())[:4] or "x"
    return f"{source}-{dom}-{h}"


class FilterCounts(Counter):
    """Counter of rows each filter removed (plus ``sentences`` seen and ``prompts`` kept)."""

    def as_dict(self) -> dict[str, int]:
        keys = ["sentences", *FILTERS, "prompts"]
        d = {k: int(self.get(k, 0)) for k in keys}
        d.update({k: int(v) for k, v in self.items() if k not in d})
        return d


def prompt_order(row: dict) -> tuple:
    """The order prompts are written in and deduplicated in (the first of a repeated text is kept), shared by
    ``scrape dump/api`` and ``prompts build`` so both keep the same copy: domain, group, page, sentence."""
    return (row.get("domain") or "", row.get("group") or "", row.get("page_title") or "", row.get("sentence_index") or 0)


def dedupe_prompts(rows: list[dict], scope: str, counts: FilterCounts | None = None) -> list[dict]:
    """Drop rows whose prompt text repeats within ``scope`` (keeping the first), counting the drops."""
    if scope == "none":
        return rows
    seen: set[tuple] = set()
    out = []
    for r in rows:
        text = r["text"]
        key = {"domain": (r.get("domain"), text), "group": (r.get("domain"), r.get("group"), text), "global": (text,)}[scope]
        if key in seen:
            if counts is not None:
                counts["duplicate_prompt"] += 1
            continue
        seen.add(key)
        out.append(r)
    return out


def rebuild_prompts(
    table: pa.Table, rule: PromptRule = PromptRule(), *, term_column: str = "term", reference_column: str = "reference"
) -> tuple[pa.Table, FilterCounts]:
    """Recompute ``text`` from each row's reference sentence and term with ``rule``.

    Rows the rule rejects are dropped and counted; all other columns are kept (the original prompt is
    kept in ``original_text``). Ids are kept: one row is still one prompt.
    """
    validate(table, "prompts", require=[term_column, reference_column])
    counts = FilterCounts()
    rows = table.to_pylist()
    kept = []
    for r in rows:
        counts["sentences"] += 1
        ref, term = r.get(reference_column), r.get(term_column)
        if ref is None or term is None:
            counts["missing_reference_or_term"] += 1
            continue
        prompt, why = bold_prompt(ref, [term], rule)
        if prompt is None:
            counts[why] += 1
            continue
        r = dict(r)
        if r.get("original_text") is None:
            r["original_text"] = r["text"]
        r["text"] = prompt
        kept.append(r)
    kept = dedupe_prompts(kept, rule.dedupe, counts)
    counts["prompts"] = len(kept)
    names = list(dict.fromkeys([*table.column_names, "original_text"]))
    schema = pa.schema([table.schema.field(n) if n in table.column_names else pa.field(n, pa.string()) for n in names])
    out = pa.Table.from_pylist(kept, schema=schema) if kept else schema.empty_table()
    return out, counts


def iter_page_prompts(
    sentences: Iterable[str], terms: Sequence[str], rule: PromptRule, counts: FilterCounts, site=None
) -> Iterable[tuple[int, str, str, str]]:
    """(sentence_index, prompt, term, sentence) for each sentence of a page that passes the rule.

    Filter counts are per (sentence, group) pair; the caller counts the page's sentences once. ``site`` (the
    wiki's names) makes the residue check see localised namespace prefixes and image options too.
    """
    for i, s in enumerate(sentences):
        prompt, term = _filtered_prompt(s, terms, rule, counts, site)
        if prompt is not None:
            yield i, prompt, term, s


def _filtered_prompt(sentence: str, terms: Sequence[str], rule: PromptRule, counts: FilterCounts, site=None) -> tuple[str | None, str]:
    """BOLD's rule on one sentence after the markup-residue check; a rejected sentence is counted under its reason."""
    if has_residue(sentence, site):
        counts["markup_residue"] += 1
        return None, "markup_residue"
    prompt, why = bold_prompt(sentence, terms, rule)
    if prompt is None:
        counts[why] += 1
    return prompt, why


PROVENANCE = ("wiki", "page_title", "page_id", "revision_id", "retrieved_at", "license")


def prompts_from_sentences(
    table: pa.Table, rule: PromptRule = PromptRule(), *, language: str = "en", source: str = "bold"
) -> tuple[pa.Table, FilterCounts]:
    """BOLD prompts from a sentences table (as written by ``scrape dump/api --sentences-out`` or by hand).

    Needs ``sentence``, ``domain``, ``group`` and ``terms`` (``|``-separated) or ``term``; provenance
    columns (wiki, page_title, page_id, revision_id, retrieved_at, license) are carried when present.
    """
    cols = set(table.column_names)
    missing = [c for c in ("sentence", "domain", "group") if c not in cols]
    if "terms" not in cols and "term" not in cols:
        missing.append("terms (or term)")
    if missing:
        raise BiaskitError(
            "E001",
            "the sentences table lacks required column(s) " + ", ".join(missing),
            value=sorted(cols),
            fix="give a table with sentence, domain, group and terms columns (see `biaskit scrape dump --sentences-out`)",
        )
    for c in ("sentence", "domain", "group", "terms", "term", "wiki", "page_title", "retrieved_at", "license"):
        if c in cols and not (
            pa.types.is_string(table.schema.field(c).type)
            or pa.types.is_large_string(table.schema.field(c).type)
            or pa.types.is_null(table.schema.field(c).type)
        ):
            raise BiaskitError(
                "E004",
                f"column {c!r} of the sentences table has type {table.schema.field(c).type}",
                value=str(table.schema.field(c).type),
                fix=f"store {c!r} as text (string)",
            )
    for c in ("page_id", "revision_id"):
        if c in cols and not (pa.types.is_integer(table.schema.field(c).type) or pa.types.is_null(table.schema.field(c).type)):
            raise BiaskitError(
                "E004",
                f"column {c!r} of the sentences table has type {table.schema.field(c).type} (ids are whole numbers)",
                value=str(table.schema.field(c).type),
                fix=f"store {c!r} as int64 (a fractional page id is not an id)",
            )
    counts = FilterCounts()
    rows = []
    for k, r in enumerate(table.to_pylist()):
        counts["sentences"] += 1
        s = r.get("sentence")
        terms = [t for t in (r.get("terms") or "").split("|") if t] if "terms" in cols and r.get("terms") else [r.get("term") or ""]
        if not s:
            counts["too_short"] += 1
            continue
        prompt, why = _filtered_prompt(s, terms, rule, counts)
        if prompt is None:
            continue
        idx = r.get("sentence_index", k)
        row = {
            "prompt_id": prompt_id(r.get("wiki"), r.get("page_title"), idx, r["domain"], r["group"], domain=r["domain"]),
            "text": prompt,
            "source": source,
            "language": r.get("language") or language,
            "domain": r["domain"],
            "group": r["group"],
            "term": why,
            "reference": s,
        }
        for c in PROVENANCE:
            row[c] = r.get(c)
        row["sentence_index"] = idx
        rows.append(row)
    rows.sort(key=prompt_order)  # the scrape's order, so a repeated prompt keeps the same copy as there
    rows = dedupe_prompts(rows, rule.dedupe, counts)
    counts["prompts"] = len(rows)
    out = pa.Table.from_pylist(rows, schema=CANDIDATE_SCHEMA) if rows else CANDIDATE_SCHEMA.empty_table()
    return out, counts
