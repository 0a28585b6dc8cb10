"""Pages -> clean sentences -> BOLD-style prompts, resumable and in parallel.

:func:`scrape_dump` and :func:`scrape_api` resolve a domain config into pages, then
:func:`build_from_pages` cleans each page, splits it into sentences, applies BOLD's prompt rule for each
group the page belongs to and writes the prompts table with a manifest. Work is written in shards as it
finishes (``<out>.parts/``, plus a per-page report ``<stem>.pages.parquet``), so a killed run resumes where it
stopped: finished pages are skipped and ids are content-derived, so nothing is duplicated or lost.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from biaskit.errors import BiaskitError
from biaskit.log import get_logger
from biaskit.scrape.config import Assignment, DomainConfig, _seed_kind, resolve_assignments
from biaskit.scrape.dump import Page
from biaskit.scrape.prompts import CANDIDATE_SCHEMA, FILTERS, FilterCounts, PromptRule, dedupe_prompts, iter_page_prompts, prompt_id, prompt_order

log = get_logger("scrape")

S, I = pa.string(), pa.int64()
SENTENCE_SCHEMA = pa.schema(
    [
        ("wiki", S),
        ("page_title", S),
        ("page_id", I),
        ("revision_id", I),
        ("retrieved_at", S),
        ("license", S),
        ("sentence_index", I),
        ("sentence", S),
        ("domain", S),
        ("group", S),
        ("terms", S),
    ]
)
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


# --------------------------------------------------------------------------- worker side

_NLP: dict[tuple, Any] = {}


def _splitter(settings: dict):
    abbr = settings.get("abbreviations") or frozenset()
    key = (settings["language"], settings["splitter"], settings.get("spacy_model"), abbr)
    if key not in _NLP:
        from biaskit.scrape.clean import load_splitter

        _NLP[key] = load_splitter(settings["language"], splitter=settings["splitter"], model=settings.get("spacy_model"), abbreviations=abbr)
    return _NLP[key]


def check_assets(cfg: DomainConfig) -> None:
    """Load what every page needs (mwparserfromhell, the sentence splitter) before the first page, so that a
    missing one stops the run with its error (E010 for a spaCy pipeline that is not installed) instead of
    marking every page unparseable. The loaded splitter is kept for the pages."""
    from biaskit.errors import require

    require("mwparserfromhell", "scrape", "cleaning wikitext")
    _splitter({"language": cfg.language, "splitter": cfg.splitter, "spacy_model": cfg.spacy_model})


def process_page(task: tuple[Page, list[Assignment], dict]) -> tuple[list[dict], dict, list[dict]]:
    """Clean, split and prompt one page for each of its groups.

    Returns (prompt rows, page status row, sentence rows); sentence rows only when settings ask for them.
    """
    from biaskit.scrape.clean import clean_sentences

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
                    "wiki": page.wiki,
                    "page_title": page.title,
                    "page_id": page.page_id,
                    "revision_id": page.revision_id,
                    "retrieved_at": page.retrieved_at,
                    "license": settings["license"],
                    "sentence_index": i,
                }
            )
    counts["prompts"] = len(rows)
    status.update({k: int(counts.get(k, 0)) for k in ("sentences", "prompts", *PAGE_FILTERS) if k != "duplicate_prompt"})
    sents = []
    if settings.get("sentences"):  # one row per (group, sentence): a page in two groups keeps both for `prompts build`
        sents = [
            {
                "wiki": page.wiki,
                "page_title": page.title,
                "page_id": page.page_id,
                "revision_id": page.revision_id,
                "retrieved_at": page.retrieved_at,
                "license": settings["license"],
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
    from biaskit.scrape.multistream import iter_stream_pages

    data, name, wiki, retrieved, assignments, done, settings = task
    out = []
    skipped = {"pages_not_in_config": 0, "pages_resumed": 0, "articles": 0}
    for page in iter_stream_pages(data, name):
        skipped["articles"] += 1
        page.wiki, page.retrieved_at = wiki, retrieved
        assigns = _assigns_to_do(page, assignments, done, skipped)
        if assigns:
            out.append(process_page((page, assigns, settings)))
    return out, skipped


def _assigns_to_do(page: Page, assignments, done: set[str], skipped: dict) -> list[Assignment]:
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


def _ray_map(fn, tasks: Iterable, engine: Any, window: int = 8) -> Iterator:
    """``fn`` over ``tasks`` as Ray tasks on the cluster of ``engine`` (an :class:`~biaskit.evaluate.engine.EngineSpec`),
    results in task order, at most ``window`` x actors tasks in flight."""
    from collections import deque

    from biaskit.evaluate.engine import RayCluster, _biaskit_cause

    with RayCluster(engine):  # connects (or starts) Ray for the tasks below
        import ray

        remote = ray.remote(num_cpus=engine.num_cpus, max_retries=0)(fn)
        pending: deque = deque()
        limit = max(1, engine.actors) * window
        try:
            for t in tasks:
                pending.append(remote.remote(t))
                if len(pending) >= limit:
                    yield ray.get(pending.popleft())
            while pending:
                yield ray.get(pending.popleft())
        except Exception as exc:
            err = _biaskit_cause(exc)
            if err is not None:
                raise err from None
            raise


# --------------------------------------------------------------------------- driver


def pages_report_path(out: str | os.PathLike) -> Path:
    p = Path(out)
    stem = p.name.split(".")[0] or p.name
    return p.parent / f"{stem}.pages.parquet"


def _pool_map(fn, tasks: Iterable, processes: int) -> Iterator:
    if processes <= 1:
        for t in tasks:
            yield fn(t)
        return
    import multiprocessing as mp

    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    with ctx.Pool(processes) as pool:
        yield from pool.imap(fn, tasks, chunksize=1)


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
        from biaskit.limits import check_processes

        check_processes(processes)
    elif not isinstance(processes, int) or processes < 1:
        raise BiaskitError("E005", "processes must be a positive integer", value=processes, fix="e.g. --processes 2")
    check_assets(cfg)  # before any page and before any output is written
    out = Path(out)
    report = pages_report_path(out)
    shards = _Shards.open(out, report, sentences_out)
    _check_run_state(shards, out, command, cfg, assignments)
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
        results = _pool_map(process_page, _page_tasks(pages, assignments, done, settings, skipped), processes)
    else:
        results = _stream_results(streams, assignments, done, settings, skipped, processes, engine, extra)
    todo = total - len(done) if total is not None else None
    _write_shards(results, shards, todo, shard_pages)
    tally = _tally(shards, cfg, skipped)
    if isinstance(assignments, AllPages):  # one group per article: the manifest gets their sum and their number
        extra = {**(extra or {}), "groups_with_prompts": len(tally.per_group)}
        tally.per_group = {ALL_PAGES_KEY: sum(tally.per_group.values())}
    if site is not None:
        extra = {**(extra or {}), "site_names": site.as_dict()}
    _write_outputs(tally, shards, out, report, cfg, command, inputs, extra)
    return ScrapeResult(out, report, tally.totals, per_group=tally.per_group, failed=tally.failed)


@dataclass
class _Shards:
    """The three sharded outputs of a run (prompts, the per-page report, sentences when asked for) and the rows
    waiting for their next shard."""

    prompts: Any  # biaskit.io.ShardedWriter
    status: Any
    sentences: Any | None
    rows: list[dict] = field(default_factory=list)
    status_rows: list[dict] = field(default_factory=list)
    sentence_rows: list[dict] = field(default_factory=list)

    @classmethod
    def open(cls, out: Path, report: Path, sentences_out: str | os.PathLike | None) -> _Shards:
        from biaskit.io import ShardedWriter

        return cls(
            ShardedWriter(out, ("prompt_id",), schema=CANDIDATE_SCHEMA),
            ShardedWriter(report, ("wiki", "page_title"), schema=STATUS_SCHEMA),
            ShardedWriter(sentences_out, ("wiki", "page_title", "domain", "group", "sentence_index"), schema=SENTENCE_SCHEMA)
            if sentences_out
            else None,
        )

    def add(self, rows: list[dict], status: dict, sents: list[dict]) -> None:
        self.rows.extend(rows)
        self.sentence_rows.extend(sents)
        self.status_rows.append(status)

    def flush(self) -> None:
        if self.status_rows:
            self.prompts.write(pa.Table.from_pylist(self.rows, schema=CANDIDATE_SCHEMA))  # prompts first, then the page marks
            if self.sentences is not None:
                self.sentences.write(pa.Table.from_pylist(self.sentence_rows, schema=SENTENCE_SCHEMA))
            self.status.write(pa.Table.from_pylist(self.status_rows, schema=STATUS_SCHEMA))
            self.rows.clear()
            self.status_rows.clear()
            self.sentence_rows.clear()


def _check_run_state(shards: _Shards, out: Path, command: str, cfg: DomainConfig, assignments: dict) -> None:
    """Record what a resumed run must share with the killed one (else its shards would mix with other settings),
    or refuse (E006) when an unfinished earlier run at ``out`` had other settings."""
    state: dict[str, Any] = {"command": command, "config": {k: v for k, v in cfg.settings().items() if k != "source"}}
    if type(assignments) is dict:
        state["assignments"] = sorted(f"{t}|{a.domain}|{a.group}|{','.join(a.terms)}" for t, al in assignments.items() for a in al)
    state_file = shards.status.parts / "run_state.json"
    if state_file.is_file():
        import json

        before = json.loads(state_file.read_text(encoding="utf-8"))
        if before != json.loads(json.dumps(state)):
            raise BiaskitError(
                "E006",
                f"{out} has an unfinished earlier run with other settings (domains, pages or rule)",
                value=str(shards.status.parts),
                fix=f"rerun with the same settings to resume it, or delete {shards.prompts.parts} and {shards.status.parts} to start over",
            )
    else:
        from biaskit.io import write_json_atomic

        write_json_atomic(state_file, state)


def _page_tasks(pages: Callable[[set[str]], Iterable[Page]], assignments, done: set[str], settings: dict, skipped: dict) -> Iterator[tuple]:
    """Tasks for :func:`process_page`: the source's pages not done yet that the config names (the rest counted)."""
    for page in pages(done):
        assigns = _assigns_to_do(page, assignments, done, skipped)
        if assigns:
            done.add(page.title)
            yield page, assigns, settings


def _stream_results(streams, assignments, done: set[str], settings: dict, skipped: dict, processes: int, engine: Any, extra: dict | None) -> Iterator:
    """Page results of a multistream dump, its streams run on ``processes`` workers or on Ray, adding up what
    each stream skipped."""
    stream_tasks = streams(done, settings)
    mapped = (
        _ray_map(process_stream, stream_tasks, engine) if engine is not None and engine.is_ray else _pool_map(process_stream, stream_tasks, processes)
    )
    for out, skip in mapped:
        skipped["pages_not_in_config"] += skip["pages_not_in_config"]
        skipped["pages_resumed"] += skip["pages_resumed"]
        if isinstance(assignments, AllPages) and extra and ALL_PAGES_KEY in extra.get("pages_per_group", {}):
            extra["pages_per_group"][ALL_PAGES_KEY] += skip["articles"]  # as the one-pass reader counts them
        yield from out


def _write_shards(results: Iterable[tuple[list[dict], dict, list[dict]]], shards: _Shards, todo: int | None, shard_pages: int) -> None:
    """Write the page results in shards of ``shard_pages`` pages, with a progress bar; a skipped page is logged."""
    from biaskit.log import ProgressBar

    try:
        with ProgressBar(todo if todo and todo > 0 else None, desc="pages -> prompts") as bar:
            for rows, status, sents in results:
                shards.add(rows, status, sents)
                bar.advance(1)
                if status["error"]:
                    log.warning("page %r skipped: %s", status["page_title"], status["error"])
                if len(shards.status_rows) >= shard_pages:
                    shards.flush()
    finally:
        shards.flush()  # keep finished work even when the source fails part-way (malformed dump, dead endpoint)


@dataclass
class _Tally:
    """What a run made, read back from its shards: the final prompts, the counts, prompts per group, the
    failed pages and one status row per page."""

    final: list[dict]
    totals: dict[str, int]
    per_group: dict[str, int]
    failed: list[str]
    status_rows: list[dict]


def _tally(shards: _Shards, cfg: DomainConfig, skipped: dict[str, int]) -> _Tally:
    cand = shards.prompts.read_all()
    status_t = shards.status.read_all()
    rows = cand.to_pylist() if cand is not None else []
    seen_ids: set[str] = set()
    uniq = []
    for r in rows:  # a page re-done after a kill between the two shard writes: drop the repeat
        if r["prompt_id"] not in seen_ids:
            seen_ids.add(r["prompt_id"])
            uniq.append(r)
    uniq.sort(key=prompt_order)
    counts = FilterCounts()
    status_rows = status_t.to_pylist() if status_t is not None else []
    seen_pages: set[tuple] = set()
    failed = []
    for s in status_rows:
        k = (s["wiki"], s["page_title"])
        if k in seen_pages:
            continue
        seen_pages.add(k)
        if s["error"]:
            failed.append(s["page_title"])
        for f in ("sentences", *PAGE_FILTERS):
            if f != "duplicate_prompt":
                counts[f] += s.get(f) or 0
    final = dedupe_prompts(uniq, cfg.rule.dedupe, counts)
    counts["prompts"] = len(final)
    totals = counts.as_dict()
    totals.update({"pages_processed": len(seen_pages), "pages_failed": len(failed), **skipped})
    per_group: dict[str, int] = {}
    for r in final:
        per_group[f"{r['domain']}/{r['group']}"] = per_group.get(f"{r['domain']}/{r['group']}", 0) + 1
    return _Tally(final, totals, per_group, failed, status_rows)


def _write_outputs(
    tally: _Tally, shards: _Shards, out: Path, report: Path, cfg: DomainConfig, command: str, inputs: Iterable[str], extra: dict | None
) -> None:
    """Write the prompts table, the per-page report and the sentences (each with its manifest), then remove the shards."""
    from biaskit.io import write_table
    from biaskit.manifest import new_manifest

    table = pa.Table.from_pylist(tally.final, schema=CANDIDATE_SCHEMA) if tally.final else CANDIDATE_SCHEMA.empty_table()
    manifest = new_manifest(
        command,
        config=cfg.settings(),
        inputs=list(inputs),
        stage="prompts",
        extra={"filter_counts": tally.totals, "prompts_per_group": tally.per_group, "failed_pages": tally.failed, **(extra or {})},
    )
    write_table(table, out, stage="prompts", manifest=manifest)
    srt = sorted({(s["wiki"], s["page_title"]): s for s in tally.status_rows}.values(), key=lambda s: s["page_title"])
    write_table(
        pa.Table.from_pylist(srt, schema=STATUS_SCHEMA) if srt else STATUS_SCHEMA.empty_table(),
        report,
        manifest=new_manifest(command, config=cfg.settings(), stage="pages_report"),
    )
    if shards.sentences is not None:
        shards.sentences.finalize(manifest=new_manifest(command, config=cfg.settings(), stage="sentences"), empty=SENTENCE_SCHEMA.empty_table())
    shutil.rmtree(shards.prompts.parts, ignore_errors=True)
    shutil.rmtree(shards.status.parts, ignore_errors=True)


# --------------------------------------------------------------------------- sources

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

    from biaskit.scrape.clean import _is_interlanguage
    from biaskit.scrape.dump import normalize_title

    out: list[str] = []
    for link in mwparserfromhell.parse(text or "").filter_wikilinks():
        t = str(link.title).strip().lstrip(":").split("#", 1)[0].strip()
        if not t:
            continue
        prefix, sep, _ = t.partition(":")
        if sep and (
            prefix.strip().lower() in _NON_ARTICLE_NS or _is_interlanguage(prefix.strip().lower()) or (site is not None and site.is_namespace(prefix))
        ):
            continue
        t = normalize_title(t)
        if t not in out:
            out.append(t)
    return out


_CAT_RE = re.compile(r"\[\[\s*category\s*:\s*([^|\]]+)", re.I)


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
    from biaskit.manifest import utcnow
    from biaskit.scrape.dump import SiteInfo, dump_wiki_name

    if redirects not in ("resolve", "skip"):
        raise BiaskitError("E005", "invalid redirects mode", value=redirects, options=["resolve", "skip"], fix="use resolve or skip")
    from biaskit.scrape.siteinfo import site_names_from_dump

    dump = Path(dump)
    cfg, language_source = _dump_language(dump, cfg)
    check_assets(cfg)  # before the first pass over the dump
    engine, index, spans = _multistream(dump, index, processes, engine)
    site = SiteInfo()
    names = site_names_from_dump(dump, cfg.language if cfg.language != "en" else None) if dump.is_file() else None
    first = _first_pass(dump, cfg, site, names, all_pages)
    wiki = dump_wiki_name(dump, site)  # with --all-pages: set again once the single pass has read <siteinfo>
    retrieved = utcnow()
    if all_pages:
        assignments: dict[str, list[Assignment]] = {}
        per_group = {ALL_PAGES_KEY: first.articles}
    else:
        assignments, per_group = _dump_assignments(cfg, first, redirects)
    extra = {"dump": str(dump), "wiki": wiki, "redirects": redirects, "pages_per_group": per_group}
    if language_source != "config":  # the config's own language is in the manifest's config already
        extra["language_source"] = language_source
    source = _DumpSource(dump, site, all_pages, wiki, retrieved, extra, per_group, AllPages() if all_pages else assignments, spans)
    learned = _learn_abbreviations(dump, cfg, names)
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


def _dump_language(dump: Path, cfg: DomainConfig) -> tuple[DomainConfig, str]:
    """The config to run with and where its language comes from: ``config`` when the config names one, else
    the dump's ``<siteinfo>`` (``siteinfo:xml:lang``, ``siteinfo:base``, ``siteinfo:dbname``: a copy of ``cfg``
    takes it); a dump that names none keeps the config's default (``default``)."""
    if cfg.language_named:
        return cfg, "config"
    from dataclasses import replace

    from biaskit.scrape.siteinfo import read_dump_siteinfo, siteinfo_language

    lang, _, general = read_dump_siteinfo(dump) if dump.is_file() else ("", {}, {})
    code, where = siteinfo_language(lang, general)
    if code is None:
        return cfg, "default"
    cfg = replace(cfg)
    cfg.use_language(code)
    return cfg, where


def _learn_abbreviations(dump: Path, cfg: DomainConfig, names: Any) -> Any:
    """The abbreviations of a language the ``wiki`` splitter has no list for, learnt from the dump's first pages
    (:mod:`biaskit.scrape.abbrev`); None when the language has a list or another splitter is used."""
    from biaskit.scrape.abbrev import learn_from_pages, needs_learning

    if not needs_learning(cfg.language, cfg.splitter) or not dump.is_file():
        return None
    from biaskit.scrape.dump import iter_dump

    learned = learn_from_pages(iter_dump(dump), cfg.language, names)
    log.info("learnt %d abbreviations from %d pages of %s (%s)", len(learned.as_dict()["words"]), learned.pages, dump.name, cfg.language)
    return learned


def _multistream(dump: Path, index: str | os.PathLike | None, processes: int, engine: Any) -> tuple[Any, Path | None, list | None]:
    """The engine (an ``EngineSpec``, or None), the multistream index and the dump's stream spans (None: the dump
    is read in one pass); ``--engine ray`` without a multistream dump is E234."""
    spans = None
    if engine is not None and not hasattr(engine, "is_ray"):
        from biaskit.evaluate.engine import engine_spec

        engine = engine_spec(engine, actors=processes)
    if index is not None or (dump.is_file() and (processes > 1 or (engine is not None and engine.is_ray))):
        from biaskit.scrape.multistream import find_index, read_index, stream_spans

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


def _first_pass(dump: Path, cfg: DomainConfig, site: Any, names: Any, all_pages: bool) -> _FirstPass:
    """Pass 1 over the dump: redirects, seed links, categories; --all-pages needs none of them and reads the dump once."""
    from biaskit.scrape.dump import iter_dump, normalize_title

    cat_re = names.category_link if names is not None else _CAT_RE
    seed_pages: set[str] = set()
    cats: set[str] = set()
    for dom in cfg.domains.values():
        for seed in [*dom.seeds, *(s for g in dom.groups.values() for s in g.seeds)]:
            kind, page = _seed_kind(seed)
            if kind == "category":
                cats.add(normalize_title(page.split(":", 1)[-1]))
            else:
                seed_pages.add(normalize_title(page))
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


def _dump_assignments(cfg: DomainConfig, first: _FirstPass, redirects: str) -> tuple[dict[str, list[Assignment]], dict[str, int]]:
    """The config's pages and groups, its seeds expanded from what the first pass found (titles through the dump's
    redirects unless ``redirects="skip"``)."""
    from biaskit.scrape.dump import normalize_title, resolve_title

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
class _DumpSource:
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
        from biaskit.scrape.dump import dump_wiki_name, iter_dump

        for page in iter_dump(self.dump, site=self.site):
            if self.all_pages:
                self.wiki = self.extra["wiki"] = dump_wiki_name(self.dump, self.site)
                self.per_group[ALL_PAGES_KEY] += 1
            page.wiki, page.retrieved_at = self.wiki, self.retrieved
            yield page

    def streams(self, done: set[str], settings: dict) -> Iterator[tuple]:
        from biaskit.scrape.dump import dump_wiki_name
        from biaskit.scrape.multistream import read_stream
        from biaskit.scrape.siteinfo import read_dump_siteinfo

        if self.all_pages:  # there was no first pass to read <siteinfo>: read it from the head stream
            for k, v in read_dump_siteinfo(self.dump)[2].items():
                setattr(self.site, k, v)
            self.wiki = self.extra["wiki"] = dump_wiki_name(self.dump, self.site)
        finished = frozenset(done)
        for span in self.spans or []:
            yield read_stream(self.dump, span), f"{self.dump.name}@{span[0]}", self.wiki, self.retrieved, self.assignments, finished, settings


def _record_missing(res: ScrapeResult, wanted: set[str]) -> None:
    """Configured pages the run did not find as articles in the dump: on ``res`` and its counts, and logged."""
    import pyarrow.parquet as pq

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
    from urllib.parse import urlparse

    from biaskit.assets import cache_dir as default_cache
    from biaskit.scrape.api import MediaWikiClient
    from biaskit.scrape.dump import normalize_title

    check_assets(cfg)  # before the first request
    if client is None:
        if cache_dir is None:
            cache_dir = default_cache() / "mediawiki" / re.sub(r"[^\w.-]+", "_", (urlparse(endpoint).netloc + urlparse(endpoint).path))
        client = MediaWikiClient(endpoint, cache_dir=cache_dir, **client_kwargs)
    from biaskit.scrape.siteinfo import site_names_from_api

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
