"""Pages -> clean sentences -> BOLD-style prompts, resumable and in parallel.

:func:`scrape_dump` and :func:`scrape_api` resolve a domain config into pages, then
:func:`build_from_pages` cleans each page, splits it into sentences, applies BOLD's prompt rule for each
group the page belongs to and writes the prompts table with a manifest. Work is written in shards as it
finishes (``<out>.parts/``, plus a per-page report ``<stem>.pages.parquet``), so a killed run resumes where it
stopped: finished pages are skipped and ids are content-derived, so nothing is duplicated or lost.

The parts: :mod:`~biaskit.scrape.extract` (one page, one stream), :mod:`~biaskit.scrape.workers` (processes, Ray),
:mod:`~biaskit.scrape.shards` (shards, resume state, final outputs), :mod:`~biaskit.scrape.dump_source` (a dump's pages).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pyarrow.parquet as pq

from biaskit import assets
from biaskit.errors import BiaskitError, check_choice
from biaskit.limits import check_processes
from biaskit.log import get_logger
from biaskit.manifest import utcnow
from biaskit.scrape.api import MediaWikiClient
from biaskit.scrape.config import Assignment, DomainConfig, resolve_assignments
from biaskit.scrape.dump import Page, SiteInfo, dump_wiki_name, normalize_title
from biaskit.scrape.dump_source import (
    DumpSource,
    dump_assignments,
    dump_language,
    first_pass,
    learn_abbreviations,
    multistream_plan,
)
from biaskit.scrape.extract import ALL_PAGES_KEY, PAGE_FILTERS, AllPages, check_assets, process_page
from biaskit.scrape.shards import Shards, check_run_state, tally_shards, write_outputs, write_shards
from biaskit.scrape.siteinfo import site_names_from_api, site_names_from_dump
from biaskit.scrape.workers import page_tasks, pool_map, stream_results

log = get_logger("scrape")


@dataclass
class ScrapeResult:
    out: Path
    pages_report: Path
    counts: dict[str, int]
    per_group: dict[str, int] = field(default_factory=dict)  # prompts per domain/group
    pages_per_group: dict[str, int] = field(default_factory=dict)  # pages the config resolved to
    missing: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    requests: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        c = self.counts
        return f"{c.get('prompts', 0)} prompts from {c.get('pages_processed', 0)} pages ({c.get('sentences', 0)} sentences); dropped: " + ", ".join(
            f"{k} {c.get(k, 0)}" for k in PAGE_FILTERS
        )


def pages_report_path(out: str | os.PathLike) -> Path:
    p = Path(out)
    stem = p.name.split(".")[0] or p.name
    return p.parent / f"{stem}.pages.parquet"


def build_from_pages(
    pages: Callable[[set[str]], Iterable[Page]],
    assignments: dict[str, list[Assignment]],
    cfg: DomainConfig,
    out: str | os.PathLike,
    *,
    processes: int = 1,
    command: str = "biaskit prompts build",
    inputs: Iterable[str] = (),
    extra: dict | None = None,
    total: int | None = None,
    shard_pages: int = 16,
    license: str | None = None,
    sentences_out: str | os.PathLike | None = None,
    site: Any = None,
    streams: Callable[[set[str], dict], Iterable[tuple]] | None = None,
    engine: Any = None,
    abbreviations: frozenset = frozenset(),
) -> ScrapeResult:
    """Run pages through the cleaner and the prompt rule and write the prompts table at ``out``.

    ``pages(done)`` yields pages; ``done`` holds titles finished by an earlier (killed) run, which the
    source may skip. A page is matched to its groups by title (or by the titles that redirected to it).
    ``site``: the wiki's namespace names and image options (:class:`~biaskit.scrape.siteinfo.SiteNames`).
    ``streams(done, settings)`` (instead of ``pages``): tasks for :func:`process_stream`, one per stream of a
    multistream dump, run on ``processes`` workers or on Ray (``engine``: an ``EngineSpec`` named ``ray``).
    ``abbreviations``: words the ``wiki`` splitter never ends a sentence after (learnt: :mod:`biaskit.scrape.abbrev`).
    """
    if getattr(engine, "name", "local") != "ray":  # Ray: tasks in flight per window, on the cluster's CPUs
        check_processes(processes)
    elif not isinstance(processes, int) or processes < 1:
        raise BiaskitError("E005", "processes must be a positive integer", value=processes, fix="e.g. --processes 2")
    check_assets(cfg)  # before any page and before any output is written
    out = Path(out)
    report = pages_report_path(out)
    shards = Shards.open(out, report, sentences_out)
    check_run_state(shards, out, command, cfg, assignments)
    done = {t for _, t in shards.status.done_keys()}
    if done:
        log.info("resuming: %d pages already done in %s", len(done), shards.status.parts)
    settings = {
        "language": cfg.language,
        "splitter": cfg.splitter,
        "spacy_model": cfg.spacy_model,
        "rule": cfg.rule,
        "license": license or cfg.license,
        "sentences": shards.sentences is not None,
        "site": site,
        "abbreviations": frozenset(abbreviations),
    }
    skipped = {"pages_not_in_config": 0, "pages_resumed": 0}
    if streams is None:
        results = pool_map(process_page, page_tasks(pages, assignments, done, settings, skipped), processes)
    else:
        results = stream_results(streams, assignments, done, settings, skipped, processes, engine, extra)
    todo = total - len(done) if total is not None else None
    write_shards(results, shards, todo, shard_pages)
    tally = tally_shards(shards, cfg, skipped)
    if isinstance(assignments, AllPages):  # one group per article: the manifest gets their sum and their number
        extra = {**(extra or {}), "groups_with_prompts": len(tally.per_group)}
        tally.per_group = {ALL_PAGES_KEY: sum(tally.per_group.values())}
    if site is not None:
        extra = {**(extra or {}), "site_names": site.as_dict()}
    write_outputs(tally, shards, cfg, command, (inputs, extra))
    return ScrapeResult(out, report, tally.totals, per_group=tally.per_group, failed=tally.failed)


def scrape_dump(
    dump: str | os.PathLike,
    cfg: DomainConfig,
    out: str | os.PathLike,
    *,
    processes: int = 1,
    all_pages: bool = False,
    redirects: str = "resolve",
    sentences_out: str | os.PathLike | None = None,
    shard_pages: int = 16,
    index: str | os.PathLike | None = None,
    engine: Any = None,
) -> ScrapeResult:
    """Prompts from a ``pages-articles`` dump for the pages the config names (or every article).

    ``redirects``: ``resolve`` (a config title that is a redirect in the dump means its target) or
    ``skip``. ``all_pages`` assigns every article to domain/group ``all`` with its title as term.

    A multistream dump (its ``index`` given, or found next to it: :func:`~biaskit.scrape.multistream.find_index`)
    is read stream by stream: each worker (``processes``) or Ray task (``engine="ray"`` or an ``EngineSpec``)
    decompresses and parses its own streams, so reading scales with the workers. The output is the same.
    """
    check_choice("E005", "invalid redirects mode", redirects, ("resolve", "skip"), fix="use resolve or skip", options=["resolve", "skip"])

    dump = Path(dump)
    cfg, language_source = dump_language(dump, cfg)
    check_assets(cfg)  # before the first pass over the dump
    engine, index, spans = multistream_plan(dump, index, processes, engine)
    site = SiteInfo()
    names = site_names_from_dump(dump, cfg.language if cfg.language != "en" else None) if dump.is_file() else None
    first = first_pass(dump, cfg, site, names, all_pages)
    wiki = dump_wiki_name(dump, site)  # with --all-pages: set again once the single pass has read <siteinfo>
    retrieved = utcnow()
    if all_pages:
        assignments: dict[str, list[Assignment]] = {}
        per_group = {ALL_PAGES_KEY: first.articles}
    else:
        assignments, per_group = dump_assignments(cfg, first, redirects)
    extra = {"dump": str(dump), "wiki": wiki, "redirects": redirects, "pages_per_group": per_group}
    if language_source != "config":  # the config's own language is in the manifest's config already
        extra["language_source"] = language_source
    source = DumpSource(dump, site, all_pages, wiki, retrieved, extra, per_group, AllPages() if all_pages else assignments, spans)
    learned = learn_abbreviations(dump, cfg, names)
    if learned is not None:
        extra["abbreviations"] = learned.as_dict()
    if spans is not None:
        extra["multistream"] = {"index": str(index), "streams": len(spans), "engine": "ray" if engine is not None and engine.is_ray else "local"}
    res = build_from_pages(
        source.pages,
        source.assignments,
        cfg,
        out,
        processes=processes,
        command=f"biaskit scrape dump {dump.name}",
        inputs=[str(dump)],
        total=None if all_pages else len(assignments),
        sentences_out=sentences_out,
        shard_pages=shard_pages,
        extra=extra,
        site=names,
        streams=source.streams if spans is not None else None,
        engine=engine,
        abbreviations=learned.words if learned is not None else frozenset(),
    )
    _record_missing(res, set(assignments) if not all_pages else set())
    res.pages_per_group = per_group
    return res


def _record_missing(res: ScrapeResult, wanted: set[str]) -> None:
    """Configured pages the run did not find as articles in the dump: on ``res`` and its counts, and logged."""
    got = set()
    for t in pq.read_table(res.pages_report, columns=["page_title"]).column("page_title").to_pylist():
        got.add(t)
    res.missing = sorted(wanted - got)
    res.counts["pages_missing"] = len(res.missing)
    if res.missing:
        log.warning("%d configured pages are not articles in the dump: %s", len(res.missing), ", ".join(res.missing[:20]))


def scrape_api(
    endpoint: str,
    cfg: DomainConfig,
    out: str | os.PathLike,
    *,
    processes: int = 1,
    cache_dir: str | os.PathLike | None = None,
    client: Any = None,
    batch: int = 50,
    sentences_out: str | os.PathLike | None = None,
    shard_pages: int = 16,
    **client_kwargs: Any,
) -> ScrapeResult:
    """Prompts from a live wiki: seeds -> page titles (links, category members) -> wikitext -> prompts."""

    check_assets(cfg)  # before the first request
    if client is None:
        if cache_dir is None:
            cache_dir = assets.cache_dir() / "mediawiki" / re.sub(r"[^\w.-]+", "_", (urlparse(endpoint).netloc + urlparse(endpoint).path))
        client = MediaWikiClient(endpoint, cache_dir=cache_dir, **client_kwargs)

    info = client.siteinfo()
    names = site_names_from_api(info, cfg.language if cfg.language != "en" else None)
    rights = (info.get("rightsinfo") or {}).get("text") or None
    assignments, per_group = resolve_assignments(cfg, links=client.links, category=client.category_members, normalize=normalize_title)
    missing: list[str] = []

    def pages(done: set[str]) -> Iterator[Page]:
        titles = [t for t in assignments if t not in done]
        yield from client.pages(titles, batch=batch, missing=missing)

    res = build_from_pages(
        pages,
        assignments,
        cfg,
        out,
        processes=processes,
        command=f"biaskit scrape api {endpoint}",
        total=len(assignments),
        license=rights,
        sentences_out=sentences_out,
        shard_pages=shard_pages,
        extra={"endpoint": endpoint, "pages_per_group": per_group, "missing_pages": missing, "http": client.stats},
        site=names,
    )
    res.missing = missing
    res.counts["pages_missing"] = len(missing)
    res.requests = dict(client.stats)
    res.pages_per_group = per_group
    return res
