"""Wikipedia (MediaWiki API or dump) -> clean sentences -> BOLD-style prompts.

Modules: :mod:`~biaskit.scrape.api` (MediaWiki Action API client), :mod:`~biaskit.scrape.dump` (streaming
dump reader), :mod:`~biaskit.scrape.clean` (wikitext cleaning, sentence splitting),
:mod:`~biaskit.scrape.wikitemplates` (MediaWiki inline templates rendered as a reader sees them),
:mod:`~biaskit.scrape.prompts` (BOLD's prompt rule and filters), :mod:`~biaskit.scrape.config` (domains and
groups as data), :mod:`~biaskit.scrape.pipeline` (resumable, parallel pages -> prompts),
:mod:`~biaskit.scrape.bold` (BOLD import/export). See docs/scrape.md.

The names below are imported lazily, so ``import biaskit.scrape`` loads neither spaCy, mwparserfromhell
nor requests.
"""

from __future__ import annotations

import importlib

_LAZY = {
    "scrape_dump": "biaskit.scrape.pipeline",
    "scrape_api": "biaskit.scrape.pipeline",
    "build_from_pages": "biaskit.scrape.pipeline",
    "MediaWikiClient": "biaskit.scrape.api",
    "iter_dump": "biaskit.scrape.dump",
    "clean_wikitext": "biaskit.scrape.clean",
    "load_splitter": "biaskit.scrape.clean",
    "split_sentences": "biaskit.scrape.clean",
    "bold_prompt": "biaskit.scrape.prompts",
    "PromptRule": "biaskit.scrape.prompts",
    "rebuild_prompts": "biaskit.scrape.prompts",
    "prompts_from_sentences": "biaskit.scrape.prompts",
    "load_config": "biaskit.scrape.config",
    "import_bold": "biaskit.scrape.bold",
    "export_bold": "biaskit.scrape.bold",
}
__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'biaskit.scrape' has no attribute {name!r}")
