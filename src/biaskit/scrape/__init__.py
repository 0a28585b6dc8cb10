"""Wikipedia (MediaWiki API or dump) -> clean sentences -> BOLD-style prompts.

Modules: :mod:`~biaskit.scrape.api` (MediaWiki Action API client), :mod:`~biaskit.scrape.dump` (streaming
dump reader), :mod:`~biaskit.scrape.clean` (wikitext cleaning, sentence splitting),
:mod:`~biaskit.scrape.wikitemplates` (MediaWiki inline templates rendered as a reader sees them),
:mod:`~biaskit.scrape.prompts` (BOLD's prompt rule and filters), :mod:`~biaskit.scrape.config` (domains and
groups as data), :mod:`~biaskit.scrape.pipeline` (resumable, parallel pages -> prompts),
:mod:`~biaskit.scrape.bold` (BOLD import/export). See docs/scrape.md.

Names are imported from their module (``from biaskit.scrape.pipeline import scrape_api``), so
``import biaskit.scrape`` loads neither spaCy, mwparserfromhell nor requests.
"""
