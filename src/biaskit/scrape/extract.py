"""The per-page extraction, run in the worker processes (or Ray tasks) of :mod:`biaskit.scrape.pipeline`: a page
cleaned, split into sentences and run through BOLD's prompt rule for each of its groups (:func:`process_page`),
one stream of a multistream dump at a time (:func:`process_stream`); the row schemas of what a page gives."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from biaskit.errors import BiaskitError, require
from biaskit.scrape.clean import clean_sentences, load_splitter
from biaskit.scrape.config import Assignment, DomainConfig
from biaskit.scrape.dump import Page
from biaskit.scrape.multistream import iter_stream_pages
from biaskit.scrape.prompts import FILTERS, PAGE_FIELDS, FilterCounts, PromptRule, iter_page_prompts, prompt_id

S, I = pa.string(), pa.int64()
SENTENCE_SCHEMA = pa.schema([*PAGE_FIELDS, ("sentence_index", I), ("sentence", S), ("domain", S), ("group", S), ("terms", S)])
#: sentences dropped before the prompt rule because a template in them could not be rendered (counted per
#: sentence and group, like the rule's filters)
PAGE_FILTERS = ("template_dropped", *FILTERS)
STATUS_SCHEMA = pa.schema(
    [
        ("wiki", S),
        ("page_title", S),
        ("page_id", I),
        ("revision_id", I),
        ("groups", S),
        ("sentences", I),
        *[(f, I) for f in PAGE_FILTERS if f != "duplicate_prompt"],
        ("prompts", I),
        ("error", S),
    ]
)


_NLP: dict[tuple, Any] = {}


def _splitter(settings: dict):
    abbr = settings.get("abbreviations") or frozenset()
    key = (settings["language"], settings["splitter"], settings.get("spacy_model"), abbr)
    if key not in _NLP:
        _NLP[key] = load_splitter(settings["language"], splitter=settings["splitter"], model=settings.get("spacy_model"), abbreviations=abbr)
    return _NLP[key]


def check_assets(cfg: DomainConfig) -> None:
    """Load what every page needs (mwparserfromhell, the sentence splitter) before the first page, so that a
    missing one stops the run with its error (E010 for a spaCy pipeline that is not installed) instead of
    marking every page unparseable. The loaded splitter is kept for the pages."""
    require("mwparserfromhell", "scrape", "cleaning wikitext")
    _splitter({"language": cfg.language, "splitter": cfg.splitter, "spacy_model": cfg.spacy_model})


def process_page(task: tuple[Page, list[Assignment], dict]) -> tuple[list[dict], dict, list[dict]]:
    """Clean, split and prompt one page for each of its groups.

    Returns (prompt rows, page status row, sentence rows); sentence rows only when settings ask for them.
    """
    page, assigns, settings = task
    rule: PromptRule = settings["rule"]
    status: dict[str, Any] = {
        "wiki": page.wiki,
        "page_title": page.title,
        "page_id": page.page_id,
        "revision_id": page.revision_id,
        "groups": ",".join(f"{a.domain}/{a.group}" for a in assigns),
        "error": None,
    }
    counts = FilterCounts()
    try:
        # ages ({{birth date and age}}) are computed at the revision's date: fixed by revision_id, as the page read then
        sentences, broken = clean_sentences(page.text, _splitter(settings), title=page.title, ref_date=page.timestamp, site=settings.get("site"))
    except Exception as exc:  # a page that cannot be parsed is a counted, named skip
        if isinstance(exc, BiaskitError) and exc.code == "E010":  # a missing asset is no fault of the page: stop
            raise
        status["error"] = str(exc)
        status.update({k: 0 for k in ("sentences", "prompts", *PAGE_FILTERS) if k != "duplicate_prompt"})
        return [], status, []
    counts["sentences"] = len(sentences) + broken
    provenance = {  # the PAGE_FIELDS of every row of the page
        "wiki": page.wiki,
        "page_title": page.title,
        "page_id": page.page_id,
        "revision_id": page.revision_id,
        "retrieved_at": page.retrieved_at,
        "license": settings["license"],
    }
    counts["template_dropped"] = broken * len(assigns)
    rows = []
    for a in assigns:
        for i, prompt, term, sentence in iter_page_prompts(sentences, a.terms, rule, counts, site=settings.get("site")):
            rows.append(
                {
                    "prompt_id": prompt_id(page.wiki, page.title, i, a.domain, a.group, domain=a.domain),
                    "text": prompt,
                    "source": "bold",
                    "language": settings["language"],
                    "domain": a.domain,
                    "group": a.group,
                    "term": term,
                    "reference": sentence,
                    **provenance,
                    "sentence_index": i,
                }
            )
    counts["prompts"] = len(rows)
    status.update({k: int(counts.get(k, 0)) for k in ("sentences", "prompts", *PAGE_FILTERS) if k != "duplicate_prompt"})
    sents = []
    if settings.get("sentences"):  # one row per (group, sentence): a page in two groups keeps both for `prompts build`
        sents = [
            {
                **provenance,
                "sentence_index": i,
                "sentence": sentence,
                "domain": a.domain,
                "group": a.group,
                "terms": "|".join(a.terms),
            }
            for a in assigns
            for i, sentence in enumerate(sentences)
        ]
    return rows, status, sents


#: the per-group counts of ``--all-pages`` (one group per article) are summed under this key
ALL_PAGES_KEY = "all/*"


class AllPages(dict):
    """``--all-pages``: every article is its own group of domain ``all`` (``group`` = the title), with its title as
    term; the manifest sums the per-group counts under :data:`ALL_PAGES_KEY` and counts the groups."""

    def get(self, key, default=None):
        return [Assignment("all", key, (key,))]


def process_stream(task: tuple) -> tuple[list[tuple[list[dict], dict, list[dict]]], dict[str, int]]:
    """One stream of a multistream dump: decompress, parse and run each page through :func:`process_page`.

    ``task`` = (compressed bytes, stream name, wiki, retrieved_at, assignments, done titles, settings). Returns the
    page results in dump order and the counts of pages skipped (resumed, not in the config)."""
    data, name, wiki, retrieved, assignments, done, settings = task
    out = []
    skipped = {"pages_not_in_config": 0, "pages_resumed": 0, "articles": 0}
    for page in iter_stream_pages(data, name):
        skipped["articles"] += 1
        page.wiki, page.retrieved_at = wiki, retrieved
        assigns = assigns_to_do(page, assignments, done, skipped)
        if assigns:
            out.append(process_page((page, assigns, settings)))
    return out, skipped


def assigns_to_do(page: Page, assignments, done: set[str], skipped: dict) -> list[Assignment]:
    """The page's assignments, or [] (counted in ``skipped``) when it was done by an earlier run or the config
    does not name it."""
    if page.title in done:
        skipped["pages_resumed"] += 1
        return []
    assigns = _assigns_of(page, assignments)
    if not assigns:
        skipped["pages_not_in_config"] += 1
    return assigns


def _assigns_of(page: Page, assignments) -> list[Assignment]:
    assigns: list[Assignment] = []
    for n in [page.title, *page.requested]:
        for a in assignments.get(n, []):
            if a not in assigns:
                assigns.append(a)
    return assigns
