"""Benchmark of the scrape stage (not a test): run `python bench/scrape_bench.py` (JSON on stdout).

Everything runs in one process, side by side on the same input, so the ratios hold on a loaded machine even
when the absolute numbers do not. Times are CPU seconds of the measuring process (`time.process_time`, plus
its finished children for the multi-process runs) and wall seconds.

1. Throughput of `scrape dump --all-pages` on the bundled 206-page dump (106 articles): the default `wiki`
   splitter vs spaCy's `senter` (today's default before issue 13), 1 and 2 processes: pages/s, sentences/s.
2. Cleaning only, biaskit (`clean_wikitext`) vs WikiExtractor (PyPI `wikiextractor`, `Extractor.clean_text`
   without template expansion) on the same pages: pages/s, paragraphs; sentences/s with the `wiki` splitter.
3. Sentence splitting only, on biaskit's cleaned paragraphs of the same pages: `wiki`, spaCy `senter`
   (en_core_web_sm, `nlp.pipe` batches of 64, every other component disabled), spaCy's rule-based
   `sentencizer`, the sentencizer followed by the `wiki` abbreviation rules (a split the rules reject is
   joined again), pysbd and blingfire: sentences/s, and boundary precision/recall on the hand-checked gold
   set `tests/fixtures/wiki/sentence_boundaries.jsonl` (362 boundaries).
4. Residue: share of clean sentences that still hold markup, on the 206-page dump and the 5-page table dump.
5. (`--multistream`, or `--multistream-only`) Whole dumps in parallel (issue 25): `--all-pages` on the
   multistream form of the 206-page dump and of the real Greek and Vietnamese dumps
   (`tests/fixtures/wiki/multi`; 20 pages per stream), 1 process (the plain reader) and 2 processes (streams read
   in the workers): pages/s wall and per CPU second, the speed-up, and that the two outputs are equal.
6. (`--api`) HTTP requests of a category scrape against a real local MediaWiki, cold vs cached.

pysbd, blingfire and wikiextractor come with the `bench` extra (`pip install -e '.[bench]'`); a missing one
is reported as skipped.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DUMP = ROOT / "src" / "biaskit" / "data" / "wiki" / "enwiki-pages-articles-206pages.xml.bz2"
TABLES = ROOT / "tests" / "fixtures" / "wiki" / "enwiki-table-markup-5pages.xml.bz2"
GOLD = ROOT / "tests" / "fixtures" / "wiki" / "sentence_boundaries.jsonl"
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _cpu() -> float:
    own = time.process_time()
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own + ch.ru_utime + ch.ru_stime


def bench_dump(splitter: str, processes: int, tmp: Path) -> dict:
    from biaskit.scrape.config import load_config
    from biaskit.scrape.pipeline import scrape_dump

    cfg = load_config({"splitter": splitter, "domains": {"all": {"groups": {"all": ["unused"]}}}})
    c0, m0, t0 = _cpu(), time.process_time(), time.perf_counter()
    res = scrape_dump(DUMP, cfg, tmp / f"all_{splitter}_{processes}.parquet", processes=processes, all_pages=True)
    wall, cpu, main = time.perf_counter() - t0, _cpu() - c0, time.process_time() - m0
    c = res.counts
    return {
        "splitter": splitter,
        "processes": processes,
        "pages": c["pages_processed"],
        "sentences": c["sentences"],
        "template_dropped": c["template_dropped"],
        "markup_residue": c["markup_residue"],
        "prompts": c["prompts"],
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "main_process_cpu_s": round(main, 2),
        "worker_cpu_s": round(cpu - main, 2),
        "pages_per_s_wall": round(c["pages_processed"] / wall, 1),
        "pages_per_cpu_s": round(c["pages_processed"] / cpu, 1),
        "sentences_per_s_wall": round(c["sentences"] / wall, 1),
    }


def _pages():
    from biaskit.scrape.dump import iter_dump

    return list(iter_dump(DUMP))


def bench_cleaning(pages) -> dict:
    from biaskit.scrape.clean import clean_wikitext, load_splitter, split_sentences

    wiki = load_splitter("en", splitter="wiki")
    out = {}
    c0 = time.process_time()
    paras = [clean_wikitext(p.text, title=p.title) for p in pages]
    dt = time.process_time() - c0
    n_sent = sum(len(split_sentences(ps, wiki)) for ps in paras)
    out["biaskit"] = {
        "pages": len(pages),
        "paragraphs": sum(map(len, paras)),
        "sentences": n_sent,
        "cpu_s": round(dt, 2),
        "pages_per_cpu_s": round(len(pages) / dt, 1),
        "sentences_per_cpu_s": round(n_sent / dt, 1),
    }
    try:
        from wikiextractor.extract import Extractor
    except ImportError:
        out["wikiextractor"] = {"skipped": "pip install wikiextractor (the bench extra)"}
        return out
    import logging

    logging.getLogger("wikiextractor").setLevel(logging.ERROR)
    c0 = time.process_time()
    we = []
    for p in pages:
        ex = Extractor(p.page_id, p.revision_id, "https://en.wikipedia.org/wiki?curid=", p.title, [p.text])
        we.append([x for x in ex.clean_text(p.text, expand_templates=False) if x.strip()])
    dt = time.process_time() - c0
    n_sent = sum(len(split_sentences(ps, wiki)) for ps in we)
    out["wikiextractor"] = {
        "pages": len(pages),
        "paragraphs": sum(map(len, we)),
        "sentences": n_sent,
        "cpu_s": round(dt, 2),
        "pages_per_cpu_s": round(len(pages) / dt, 1),
        "sentences_per_cpu_s": round(n_sent / dt, 1),
        "note": "cleaning without template expansion; sentences counted with biaskit's wiki splitter",
    }
    out["speed_ratio_biaskit_over_wikiextractor"] = round(out["biaskit"]["pages_per_cpu_s"] / out["wikiextractor"]["pages_per_cpu_s"], 2)
    return out


def _splitters() -> dict:
    from biaskit.scrape.clean import load_splitter, split_sentences
    from biaskit.scrape.sentences import split_text

    out: dict = {"wiki": lambda ps: [s for p in ps for s in split_text(p)]}
    senter = load_splitter("en", splitter="senter")
    out["spacy senter (nlp.pipe)"] = lambda ps: split_sentences(ps, senter, batch_size=64)
    sentencizer = load_splitter("en", splitter="sentencizer")
    out["spacy sentencizer"] = lambda ps: split_sentences(ps, sentencizer, batch_size=64)

    def rejoined(ps):  # the sentencizer's splits, joined again where the wiki rules see no boundary
        res = []
        for s in split_sentences(ps, sentencizer, batch_size=64):
            if res and len(split_text(res[-1] + " " + s)) == 1:
                res[-1] = res[-1] + " " + s
            else:
                res.append(s)
        return res

    out["spacy sentencizer + wiki abbreviation rules"] = rejoined
    try:
        import pysbd

        seg = pysbd.Segmenter(language="en", clean=False)
        out["pysbd"] = lambda ps: [s.strip() for p in ps for s in seg.segment(p) if s.strip()]
    except ImportError:
        out["pysbd"] = None
    try:
        import blingfire

        out["blingfire"] = lambda ps: [s for p in ps for s in blingfire.text_to_sentences(p).split("\n") if s.strip()]
    except ImportError:
        out["blingfire"] = None
    return out


def bench_splitting(pages) -> list[dict]:
    from biaskit.scrape.clean import clean_wikitext
    from biaskit.scrape.sentences import boundary_scores

    paras = [p for page in pages for p in clean_wikitext(page.text, title=page.title)]
    gold = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines()]
    rows = []
    for name, fn in _splitters().items():
        if fn is None:
            rows.append({"splitter": name, "skipped": "not installed (the bench extra)"})
            continue
        c0 = time.process_time()
        n = len(fn(paras))
        dt = time.process_time() - c0
        sc = boundary_scores(gold, lambda p: fn([p]))
        rows.append(
            {
                "splitter": name,
                "sentences": n,
                "cpu_s": round(dt, 2),
                "sentences_per_cpu_s": round(n / dt),
                "pages_per_cpu_s": round(len(pages) / dt, 1),
                "gold_precision": round(sc["precision"], 3),
                "gold_recall": round(sc["recall"], 3),
                "gold_f1": round(sc["f1"], 3),
                "tp": sc["tp"],
                "fp": sc["fp"],
                "fn": sc["fn"],
            }
        )
    return rows


def bench_residue() -> dict:
    from biaskit.scrape.clean import clean_sentences, has_residue, load_splitter
    from biaskit.scrape.dump import iter_dump

    nlp = load_splitter("en")
    out = {}
    for path in (DUMP, TABLES):
        n = res = dropped = 0
        for page in iter_dump(path):
            sents, d = clean_sentences(page.text, nlp, title=page.title)
            n += len(sents) + d
            dropped += d
            res += sum(1 for s in sents if has_residue(s))
        out[path.name] = {
            "sentences": n,
            "markup_residue": res,
            "residue_share": round(res / n, 5),
            "template_dropped": dropped,
            "template_dropped_share": round(dropped / n, 5),
        }
    return out


def bench_api(tmp: Path) -> dict | None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("scrape_conftest", ROOT / "tests" / "scrape" / "conftest.py")
    cf = importlib.util.module_from_spec(spec)
    sys.modules["scrape_conftest"] = cf
    spec.loader.exec_module(cf)
    if not (cf.MW / "maintenance" / "install.php").is_file():
        return {"skipped": "MediaWiki not installed (bash scripts/services/mediawiki.sh)"}
    (tmp / "mw").mkdir()
    with cf.start_wiki(tmp / "mw") as wiki:
        from biaskit.scrape.api import MediaWikiClient
        from biaskit.scrape.config import load_config
        from biaskit.scrape.pipeline import scrape_api

        cfg = load_config({"domains": {"gender": {"groups": {"metaphysicians": {"seeds": [{"category": "Category:Metaphysicians"}]}}}}})
        out = {}
        for run in ("cold", "cached"):
            c = MediaWikiClient(wiki.endpoint, cache_dir=tmp / "cache", max_rps=None)
            t0 = time.perf_counter()
            res = scrape_api(wiki.endpoint, cfg, tmp / f"api_{run}.parquet", client=c)
            out[run] = {
                "http_requests": c.stats["http_requests"],
                "cache_hits": c.stats["cache_hits"],
                "pages": res.counts["pages_processed"],
                "prompts": res.counts["prompts"],
                "seconds": round(time.perf_counter() - t0, 2),
            }
        return out


MULTI = ROOT / "tests" / "fixtures" / "wiki" / "multi"


def bench_multistream(tmp: Path) -> list[dict]:
    """`scrape dump --all-pages` on multistream dumps: 1 process vs 2 (the streams read in the workers)."""
    import pyarrow.parquet as pq

    from biaskit.scrape.config import load_config
    from biaskit.scrape.multistream import write_multistream
    from biaskit.scrape.pipeline import scrape_dump

    out = []
    for src, lang in ((DUMP, "en"), (MULTI / "elwiki-20230501-truncated.xml.bz2", "el"), (MULTI / "viwiki-20230501-truncated.xml.bz2", "vi")):
        dump, _ = write_multistream(src, tmp / f"{lang}wiki-bench-pages-articles-multistream.xml.bz2", pages_per_stream=20)
        cfg = load_config({"language": lang, "domains": {"all": {"groups": {"all": ["unused"]}}}})
        row: dict = {"dump": src.name}
        tables = {}
        for n in (1, 2):
            c0, m0, t0 = _cpu(), time.process_time(), time.perf_counter()
            res = scrape_dump(dump, cfg, tmp / f"ms_{lang}_{n}.parquet", processes=n, all_pages=True)
            wall, cpu = time.perf_counter() - t0, _cpu() - c0
            pages = res.counts["pages_processed"]
            tables[n] = pq.read_table(tmp / f"ms_{lang}_{n}.parquet").drop(["retrieved_at"])
            row[f"processes_{n}"] = {
                "pages": pages,
                "sentences": res.counts["sentences"],
                "prompts": res.counts["prompts"],
                "markup_residue": res.counts["markup_residue"],
                "wall_s": round(wall, 2),
                "cpu_s": round(cpu, 2),
                "main_process_cpu_s": round(time.process_time() - m0, 2),
                "pages_per_s_wall": round(pages / wall, 1),
                "pages_per_cpu_s": round(pages / cpu, 1),
            }
        row["two_over_one_wall"] = round(row["processes_1"]["wall_s"] / row["processes_2"]["wall_s"], 2)
        row["same_output"] = tables[1].equals(tables[2])
        out.append(row)
    return out


def main() -> None:
    results: dict = {"cpu_count": os.cpu_count(), "load_average_at_start": os.getloadavg()}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if "--multistream" in sys.argv or "--multistream-only" in sys.argv:
            results["multistream"] = bench_multistream(tmp)
        if "--api-only" not in sys.argv and "--multistream-only" not in sys.argv:
            pages = _pages()
            results["cleaning"] = bench_cleaning(pages)
            results["splitting"] = bench_splitting(pages)
            results["residue"] = bench_residue()
            runs = [bench_dump("wiki", 1, tmp), bench_dump("wiki", 2, tmp), bench_dump("senter", 1, tmp)]
            results["dump"] = runs
            w1, w2, s1 = runs
            results["ratios"] = {
                "wiki_over_senter_pages_per_cpu_s": round(w1["pages_per_cpu_s"] / s1["pages_per_cpu_s"], 2),
                "wiki_over_senter_wall": round(s1["wall_s"] / w1["wall_s"], 2),
                "two_processes_over_one_wall": round(w1["wall_s"] / w2["wall_s"], 2),
                # what 2 free cores allow at most: the 1-process CPU time over the larger of the
                # parent's serial share (dump reading, writing) and half the workers' share
                "two_processes_bound_from_cpu_split": round(w1["cpu_s"] / max(w2["main_process_cpu_s"], w2["worker_cpu_s"] / 2, w2["cpu_s"] / 2), 2),
            }
        if "--api" in sys.argv or "--api-only" in sys.argv:
            results["api"] = bench_api(tmp)
        results["load_average_at_end"] = os.getloadavg()
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
