"""Markup residue of the English cleaner on real Wikipedia pages: development set vs held-out set.

The bundled real pages (tests/fixtures/wiki) are split by tests/fixtures/wiki/make_heldout.py (sha256 of the
title mod 3); cleaning rules are written looking at the development pages only. Residue = share of clean
sentences that still carry markup (``biaskit.scrape.clean.has_residue``), and ``template_dropped`` = sentences
dropped because a template in them could not be rendered.

Run: PYTHONPATH=src python bench/clean_residue.py [--show-dev]   (--show-dev prints the dev residue sentences;
the held-out ones are never printed, only counted)
"""

from __future__ import annotations

import bz2
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures" / "wiki"


def pages(which: str):
    """(title, wikitext) of the development or held-out pages."""
    from biaskit.scrape.dump import iter_dump

    if which == "heldout":
        with bz2.open(FIX / "enwiki-heldout-pages.jsonl.bz2", "rt", encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                yield r["title"], r["text"]
        return
    split = json.loads((FIX / "heldout_split.json").read_text(encoding="utf-8"))
    for name, sets in split["sources"].items():
        dev = set(sets["dev"])
        for p in iter_dump(FIX / name):
            if p.title in dev:
                yield p.title, p.text


def residue(which: str, show: bool = False) -> dict:
    from biaskit.scrape.clean import clean_sentences, has_residue, load_splitter

    nlp = load_splitter("en")
    n = bad = dropped = npages = 0
    for title, text in pages(which):
        npages += 1
        sents, d = clean_sentences(text, nlp, title=title)
        dropped += d
        n += len(sents)
        for s in sents:
            if has_residue(s):
                bad += 1
                if show:
                    print(f"  [{title}] {s[:300]}")
    return {"set": which, "pages": npages, "sentences": n, "residue": bad, "residue_share": bad / n if n else None, "template_dropped": dropped}


if __name__ == "__main__":
    show = "--show-dev" in sys.argv
    for which in ("dev", "heldout"):
        r = residue(which, show=show and which == "dev")
        print(
            f"{r['set']:8s} pages {r['pages']:3d}  sentences {r['sentences']:6d}  residue {r['residue']:4d} "
            f"({100 * r['residue_share']:.2f}%)  template_dropped {r['template_dropped']}"
        )
