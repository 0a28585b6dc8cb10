"""Sentence-split fidelity on real dumps: sentences, cuts before a number, sentences still holding a full stop
before a number, and sentences dropped for a ``|``.

Uses only what every biaskit version has (``iter_dump``, ``clean_wikitext``, ``split_text``, ``has_residue``), so
the same script measures before and after a change: run it once with ``PYTHONPATH`` on the old source tree and
once on the new one.

* ``cuts_before_number``: sentence boundaries where the next sentence starts with a digit;
* ``dot_number_inside``: sentences that still hold ``<word of 2+ letters>. <digit>`` (run-togethers and
  abbreviations before a number: ``world no. 1``, ``ca. 1900``; read the printed examples to tell them apart);
* ``pipe_dropped`` / ``pipe_kept``: sentences holding a ``|`` that ``has_residue`` drops / keeps.

Run: PYTHONPATH=src python bench/split_fidelity.py DUMP[:LANG] ... [--examples N]
(the bundled dumps: tests/fixtures/wiki/enwiki-pages-articles-206pages.xml.bz2:en,
tests/fixtures/wiki/multi/elwiki-20230501-truncated.xml.bz2:el, .../viwiki-20230501-truncated.xml.bz2:vi)
"""

from __future__ import annotations

import argparse
import json
import re

from biaskit.scrape.clean import clean_wikitext, has_residue
from biaskit.scrape.dump import iter_dump
from biaskit.scrape.sentences import split_text
from biaskit.scrape.siteinfo import site_names_from_dump

_DOT_NUMBER = re.compile(r"[^\W\d_]{2,}\.\s+\d")


def measure(dump: str, language: str, examples: int = 0) -> dict:
    site = site_names_from_dump(dump, language) if language != "en" else None
    out = {"dump": dump, "language": language, "pages": 0, "sentences": 0, "cuts_before_number": 0, "dot_number_inside": 0}
    out |= {"pipe_dropped": 0, "pipe_kept": 0}
    shown: list[str] = []
    for page in iter_dump(dump):
        try:
            paragraphs = clean_wikitext(page.text, title=page.title, site=site)
        except Exception:  # noqa: BLE001 - an unparseable page is skipped, as the scrape does
            continue
        out["pages"] += 1
        for p in paragraphs:
            sents = split_text(p, language)
            out["sentences"] += len(sents)
            out["cuts_before_number"] += sum(1 for s in sents[1:] if s[:1].isdigit())
            for s in sents:
                m = _DOT_NUMBER.search(s)
                if m:
                    out["dot_number_inside"] += 1
                    if len(shown) < examples:
                        shown.append(s[max(0, m.start() - 40) : m.end() + 30])
                if "|" in s:
                    out["pipe_dropped" if has_residue(s, site) else "pipe_kept"] += 1
    out["examples"] = shown
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dumps", nargs="+", help="DUMP[:LANG] (LANG default en)")
    ap.add_argument("--examples", type=int, default=0)
    args = ap.parse_args()
    for d in args.dumps:
        path, _, lang = d.partition(":")
        print(json.dumps(measure(path, lang or "en", args.examples), ensure_ascii=False))


if __name__ == "__main__":
    main()
