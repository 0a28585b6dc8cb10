"""Benchmark: gender counterfactual swapping of N sentences (default 100,000), three ways.

* ``regex``: the word-list baseline (no spaCy; "her" -> "him", "his" -> "her" always: the first listed reading);
* ``biaskit``: what ``biaskit templates counterfactual`` does: the same regular expression, and spaCy (``nlp.pipe``)
  only on the sentences holding a word whose reading the syntax decides (her, his);
* ``pipe-all``: spaCy's ``nlp.pipe`` over every sentence, then the same swap (the cost of parsing everything).

The sentences are the bundled 206-page Wikipedia excerpt (``src/biaskit/data/wiki``), cleaned by the scrape layer and
split at sentence-final punctuation, repeated in order until there are N (the number of distinct sentences is
printed). Reported: wall and CPU seconds per way, sentences per second, how many sentences got a pair, and the
share of sentences whose swapped text differs between the regex baseline and spaCy's readings, with examples.

Usage: python bench/counterfactual_bench.py [--n 100000] [--no-pipe-all]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from itertools import islice

from biaskit.scrape.clean import clean_wikitext
from biaskit.scrape.dump import iter_dump
from biaskit.templates.counterfactual import load_axis
from biaskit.templates.counterfactual_swap import Swapper, load_swap_nlp
from biaskit.templates.files import data_dir

_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"“(])")


def sentences() -> list[str]:
    """Distinct sentences of the bundled dump excerpt (5 to 80 words)."""
    out: dict[str, None] = {}
    for page in iter_dump(data_dir("wiki", "enwiki-pages-articles-206pages.xml.bz2")):
        for para in clean_wikitext(page.text, title=page.title):
            for s in _SPLIT.split(para):
                if 5 <= len(s.split()) <= 80:
                    out.setdefault(s.strip(), None)
    return list(out)


def repeat_to(items: list[str], n: int) -> list[str]:
    return [items[i % len(items)] for i in range(n)]


def timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    res = fn()
    return res, round(time.perf_counter() - w0, 2), round(time.process_time() - c0, 2)


def pipe_all(sw: Swapper, nlp, texts: list[str]):
    return [sw.variants(t, doc) for t, doc in zip(texts, nlp.pipe(texts, batch_size=256))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--no-pipe-all", action="store_true", help="skip parsing every sentence (the slowest way)")
    args = ap.parse_args()
    distinct = sentences()
    texts = repeat_to(distinct, args.n)
    axis = load_axis("gender")
    (nlp, load_s, _) = timed(lambda: load_swap_nlp("en"))
    regex, syntax = Swapper(axis, None), Swapper(axis, nlp)
    result: dict = {"n": len(texts), "distinct": len(distinct), "spacy_load_s": load_s, "ways": {}}
    runs = {"regex": lambda: regex.swap_all(texts), "biaskit": lambda: syntax.swap_all(texts)}
    if not args.no_pipe_all:
        runs["pipe-all"] = lambda: pipe_all(syntax, nlp, texts)
    outputs = {}
    for name, fn in runs.items():
        outputs[name], wall, cpu = timed(fn)
        result["ways"][name] = {"wall_s": wall, "cpu_s": cpu, "per_s": round(len(texts) / max(wall, 1e-9))}
    result["parsed_by_biaskit"] = sum(syntax.needs_syntax(t) for t in texts)
    with_pair = [i for i, v in enumerate(outputs["biaskit"]) if v]
    result["with_pair"] = len(with_pair)
    differ = [i for i in range(len(texts)) if [v.text for v in outputs["regex"][i]] != [v.text for v in outputs["biaskit"][i]]]
    result["regex_differs_from_spacy"] = {
        "sentences": len(differ),
        "share_of_all": len(differ) / len(texts),
        "share_of_pairs": len(differ) / max(len(with_pair), 1),
    }
    if "pipe-all" in outputs:
        result["pipe_all_differs_from_biaskit"] = sum(
            [v.text for v in outputs["pipe-all"][i]] != [v.text for v in outputs["biaskit"][i]] for i in range(len(texts))
        )
    seen = dict.fromkeys(texts[i] for i in differ)
    result["examples"] = [
        {"text": t, "regex": [v.text for v in regex.variants(t)], "spacy": [v.text for v in syntax.swap_all([t])[0]]} for t in islice(seen, 5)
    ]
    print(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
