"""Pages from a ``pages-articles`` dump for :func:`biaskit.scrape.pipeline.scrape_dump`: the dump's language, the
first pass (redirects, seed links, category members), the config's pages and groups, the learnt abbreviations,
the multistream index, and the pages themselves in one pass or one task per stream."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.log import get_logger
from biaskit.pool import engine_spec
from biaskit.scrape.abbrev import learn_from_dump, needs_learning
from biaskit.scrape.clean import clean_wikitext, is_interlanguage
from biaskit.scrape.config import Assignment, DomainConfig, resolve_assignments, seed_kind
from biaskit.scrape.dump import Page, dump_wiki_name, iter_dump, normalize_title, resolve_title
from biaskit.scrape.extract import ALL_PAGES_KEY
from biaskit.scrape.multistream import find_index, read_index, read_stream, stream_spans
from biaskit.scrape.siteinfo import read_dump_siteinfo, siteinfo_language

log = get_logger("scrape")


_NON_ARTICLE_NS = {
    "file",
    "image",
    "media",
    "category",
    "template",
    "wikipedia",
    "wp",
    "help",
    "portal",
    "user",
    "talk",
    "special",
    "mediawiki",
    "module",
    "draft",
    "book",
    "timedtext",
    "wiktionary",
    "wikt",
    "commons",
    "s",
    "q",
    "n",
    "b",
    "v",
    "w",
}


def wikitext_links(text: str, site: Any = None) -> list[str]:
    """Article titles linked from wikitext, in order, without duplicates (``site``: the wiki's own namespace
    names, so ``[[Κατηγορία:...]]`` is no article)."""
    import mwparserfromhell

    out: list[str] = []
    for link in mwparserfromhell.parse(text or "").filter_wikilinks():
        t = str(link.title).strip().lstrip(":").split("#", 1)[0].strip()
        if not t:
            continue
        prefix, sep, _ = t.partition(":")
        if sep and (
            prefix.strip().lower() in _NON_ARTICLE_NS or is_interlanguage(prefix.strip().lower()) or (site is not None and site.is_namespace(prefix))
        ):
            continue
        t = normalize_title(t)
        if t not in out:
            out.append(t)
    return out


_CAT_RE = re.compile(r"\[\[\s*category\s*:\s*([^|\]]+)", re.I)


def dump_language(dump: Path, cfg: DomainConfig) -> tuple[DomainConfig, str]:
    """The config to run with and where its language comes from: ``config`` when the config names one, else
    the dump's ``<siteinfo>`` (``siteinfo:xml:lang``, ``siteinfo:base``, ``siteinfo:dbname``: a copy of ``cfg``
    takes it); a dump that names none keeps the config's default (``default``)."""
    if cfg.language_named:
        return cfg, "config"

    lang, _, general = read_dump_siteinfo(dump) if dump.is_file() else ("", {}, {})
    code, where = siteinfo_language(lang, general)
    if code is None:
        return cfg, "default"
    assert where is not None  # a language code comes with where it was read
    cfg = replace(cfg)
    cfg.use_language(code)
    return cfg, where


def learn_abbreviations(dump: Path, cfg: DomainConfig, names: Any) -> Any:
    """The abbreviations of a language the ``wiki`` splitter has no list for, learnt from the dump's first pages
    (:mod:`biaskit.scrape.abbrev`); None when the language has a list or another splitter is used."""
    if not needs_learning(cfg.language, cfg.splitter) or not dump.is_file():
        return None

    learned = learn_from_dump(dump, cfg.language, names, clean=clean_wikitext)
    log.info("learnt %d abbreviations from %d pages of %s (%s)", len(learned.as_dict()["words"]), learned.pages, dump.name, cfg.language)
    return learned


def multistream_plan(dump: Path, index: str | os.PathLike | None, processes: int, engine: Any) -> tuple[Any, Path | None, list | None]:
    """The engine (an ``EngineSpec``, or None), the multistream index and the dump's stream spans (None: the dump
    is read in one pass); ``--engine ray`` without a multistream dump is E234."""
    spans = None
    if engine is not None and not hasattr(engine, "is_ray"):
        engine = engine_spec(engine, actors=processes)
    if index is not None or (dump.is_file() and (processes > 1 or (engine is not None and engine.is_ray))):
        index = Path(index) if index is not None else find_index(dump)
        if index is not None:
            spans = stream_spans(dump, read_index(index))
    if engine is not None and engine.is_ray and spans is None:
        raise BiaskitError(
            "E234",
            "--engine ray needs a multistream dump and its index",
            value=str(dump),
            fix="give --index FILE (…-multistream-index.txt.bz2), or put it next to the dump, or use --processes N",
        )
    return engine, index, spans


@dataclass
class _FirstPass:
    """What the first pass over a dump collects: redirects, the links of seed pages, category members, articles."""

    redirects: dict[str, str] = field(default_factory=dict)
    seed_links: dict[str, list[str]] = field(default_factory=dict)
    members: dict[str, list[str]] = field(default_factory=dict)
    articles: int = 0


def first_pass(dump: Path, cfg: DomainConfig, site: Any, names: Any, all_pages: bool) -> _FirstPass:
    """Pass 1 over the dump: redirects, seed links, categories; --all-pages needs none of them and reads the dump once."""
    cat_re = names.category_link if names is not None else _CAT_RE
    seed_pages: set[str] = set()
    cats: set[str] = set()
    for dom in cfg.domains.values():
        for seed in [*dom.seeds, *(s for g in dom.groups.values() for s in g.seeds)]:
            kind, target = seed_kind(seed)
            if kind == "category":
                cats.add(normalize_title(target.split(":", 1)[-1]))
            else:
                seed_pages.add(normalize_title(target))
    found = _FirstPass(members={c: [] for c in cats})
    for page in [] if all_pages else iter_dump(dump, include_redirects=True, site=site):
        if page.redirect:
            found.redirects[page.title] = normalize_title(page.redirect)
            continue
        found.articles += 1
        if page.title in seed_pages:
            found.seed_links[page.title] = wikitext_links(page.text, names)
        if cats:
            for c in cat_re.findall(page.text):
                c = normalize_title(c)
                if c in found.members:
                    found.members[c].append(page.title)
    return found


def dump_assignments(cfg: DomainConfig, first: _FirstPass, redirects: str) -> tuple[dict[str, list[Assignment]], dict[str, int]]:
    """The config's pages and groups, its seeds expanded from what the first pass found (titles through the dump's
    redirects unless ``redirects="skip"``)."""

    def norm(t: str) -> str:
        t = normalize_title(t)
        return resolve_title(t, first.redirects) if redirects == "resolve" else t

    def links(page: str) -> list[str]:
        t = norm(page)
        if t not in first.seed_links:
            raise BiaskitError("E033", "seed page not found in the dump", value=page, fix="check the title, or scrape seeds through the API")
        return first.seed_links[t]

    return resolve_assignments(cfg, links=links, category=lambda c: first.members.get(normalize_title(c.split(":", 1)[-1]), []), normalize=norm)


@dataclass
class DumpSource:
    """The dump's pages for :func:`build_from_pages`: one pass in this process (:meth:`pages`) or one task per
    stream of a multistream dump (:meth:`streams`). With --all-pages there was no first pass: they read the
    wiki's name (``<siteinfo>``) and count the articles as they go."""

    dump: Path
    site: Any  # biaskit.scrape.dump.SiteInfo, filled as the dump is read
    all_pages: bool
    wiki: str
    retrieved: str
    extra: dict
    per_group: dict[str, int]
    assignments: dict[str, list[Assignment]]
    spans: list | None

    def pages(self, done: set[str]) -> Iterator[Page]:
        for page in iter_dump(self.dump, site=self.site):
            if self.all_pages:
                self.wiki = self.extra["wiki"] = dump_wiki_name(self.dump, self.site)
                self.per_group[ALL_PAGES_KEY] += 1
            page.wiki, page.retrieved_at = self.wiki, self.retrieved
            yield page

    def streams(self, done: set[str], settings: dict) -> Iterator[tuple]:
        if self.all_pages:  # there was no first pass to read <siteinfo>: read it from the head stream
            for k, v in read_dump_siteinfo(self.dump)[2].items():
                setattr(self.site, k, v)
            self.wiki = self.extra["wiki"] = dump_wiki_name(self.dump, self.site)
        finished = frozenset(done)
        for span in self.spans or []:
            yield read_stream(self.dump, span), f"{self.dump.name}@{span[0]}", self.wiki, self.retrieved, self.assignments, finished, settings
