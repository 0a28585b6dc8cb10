"""Demo stage 'scrape': the bundled 206-page Wikipedia dump -> clean sentences -> BOLD-style prompts.

Reads ``biaskit/data/wiki/enwiki-pages-articles-206pages.xml.bz2`` with the streaming dump reader, cleans
and splits the pages the shipped ``demo`` domain config names (BOLD's five domains, with groups whose
pages exist in that dump), applies BOLD's prompt rule and writes ``prompts_bold.parquet``. The Wikipedia
sentence of each prompt is its ``reference`` (the generation stage compares models with it). With
``ctx.quick`` only the first page of each group is used.
"""

from __future__ import annotations

import os
from pathlib import Path

from biaskit.scrape.config import load_config
from biaskit.scrape.pipeline import scrape_dump

DUMP = Path(__file__).resolve().parent.parent / "data" / "wiki" / "enwiki-pages-articles-206pages.xml.bz2"


def demo_config(quick: bool = False):
    cfg = load_config("demo")
    if quick:
        for dom in cfg.domains.values():
            for g in dom.groups.values():
                g.pages = g.pages[:1]
    return cfg


def run(ctx) -> None:
    cfg = demo_config(ctx.quick)
    out = Path(ctx.run_dir) / "prompts_bold.parquet"
    processes = 1 if ctx.quick else max(1, min(2, os.cpu_count() or 1))
    res = scrape_dump(DUMP, cfg, out, processes=processes)
    ctx.add("prompts_bold", out)
    c = res.counts
    ctx.info["scrape"] = {
        "dump": DUMP.name,
        "config": "demo" + (" (quick: 1 page per group)" if ctx.quick else ""),
        "processes": processes,
        "filter_counts": c,
        "prompts_per_group": res.per_group,
        "pages_per_group": res.pages_per_group,
        "pages_missing": res.missing,
        "pages_report": str(res.pages_report),
    }
    ctx.note(
        "scrape",
        f"{c['prompts']} BOLD-style prompts from {c['pages_processed']} pages of the bundled dump "
        f"({c['sentences']} sentences; dropped: too_short {c['too_short']}, term_not_in_window {c['term_not_in_window']}, "
        f"no_continuation {c['no_continuation']}, markup_residue {c['markup_residue']}, duplicate_prompt {c['duplicate_prompt']})",
    )
