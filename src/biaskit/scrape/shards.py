"""A scrape run's sharded outputs and resume state: the prompts, per-page report and sentence shards written as
pages finish (``<out>.parts/``), the settings a resumed run must share with the killed one, and the final
tables (with their manifests) read back from the shards."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from biaskit.errors import BiaskitError
from biaskit.io import ShardedWriter, write_json_atomic, write_table
from biaskit.log import ProgressBar, get_logger
from biaskit.manifest import new_manifest
from biaskit.scrape.config import DomainConfig
from biaskit.scrape.extract import PAGE_FILTERS, SENTENCE_SCHEMA, STATUS_SCHEMA
from biaskit.scrape.prompts import CANDIDATE_SCHEMA, FilterCounts, dedupe_prompts, prompt_order

log = get_logger("scrape")


@dataclass
class Shards:
    """The three sharded outputs of a run (prompts, the per-page report, sentences when asked for) and the rows
    waiting for their next shard."""

    prompts: Any  # biaskit.io.ShardedWriter
    status: Any
    sentences: Any | None
    rows: list[dict] = field(default_factory=list)
    status_rows: list[dict] = field(default_factory=list)
    sentence_rows: list[dict] = field(default_factory=list)

    @classmethod
    def open(cls, out: Path, report: Path, sentences_out: str | os.PathLike | None) -> Shards:
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


def check_run_state(shards: Shards, out: Path, command: str, cfg: DomainConfig, assignments: dict) -> None:
    """Record what a resumed run must share with the killed one (else its shards would mix with other settings),
    or refuse (E006) when an unfinished earlier run at ``out`` had other settings."""
    state: dict[str, Any] = {"command": command, "config": {k: v for k, v in cfg.settings().items() if k != "source"}}
    if type(assignments) is dict:
        state["assignments"] = sorted(f"{t}|{a.domain}|{a.group}|{','.join(a.terms)}" for t, al in assignments.items() for a in al)
    state_file = shards.status.parts / "run_state.json"
    if state_file.is_file():
        before = json.loads(state_file.read_text(encoding="utf-8"))
        if before != json.loads(json.dumps(state)):
            raise BiaskitError(
                "E006",
                f"{out} has an unfinished earlier run with other settings (domains, pages or rule)",
                value=str(shards.status.parts),
                fix=f"rerun with the same settings to resume it, or delete {shards.prompts.parts} and {shards.status.parts} to start over",
            )
    else:
        write_json_atomic(state_file, state)


def write_shards(results: Iterable[tuple[list[dict], dict, list[dict]]], shards: Shards, todo: int | None, shard_pages: int) -> None:
    """Write the page results in shards of ``shard_pages`` pages, with a progress bar; a skipped page is logged."""
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


def tally_shards(shards: Shards, cfg: DomainConfig, skipped: dict[str, int]) -> _Tally:
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


def write_outputs(tally: _Tally, shards: Shards, cfg: DomainConfig, command: str, provenance: tuple[Iterable[str], dict | None]) -> None:
    """Write the prompts table, the per-page report and the sentences (each with its manifest; ``provenance``: the
    run's inputs and the extra facts of the prompts' manifest) where ``shards`` finish, then remove the shards."""
    out, report = shards.prompts.out, shards.status.out
    inputs, extra = provenance
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
