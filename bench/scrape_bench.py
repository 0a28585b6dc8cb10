"""Benchmark of the scrape stage (not a test): run `python bench/scrape_bench.py`.

1. Dump throughput: every article of the bundled 206-page enwiki dump (106 articles) through the cleaner,
   spaCy sentence splitting (en_core_web_sm senter) and BOLD's rule, on 1 and 2 processes: pages/s and
   sentences/s (wall clock, including the redirect pass over the dump and the spaCy load in each worker).
2. HTTP requests of a category scrape against a real local MediaWiki (started like the tests do), cold
   cache vs the same scrape again with the cache (expected: 0 requests). Skipped when MediaWiki is not
   installed (bash scripts/services/mediawiki.sh).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DUMP = ROOT / "src" / "biaskit" / "data" / "wiki" / "enwiki-pages-articles-206pages.xml.bz2"
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def bench_dump(processes: int, tmp: Path) -> dict:
    from biaskit.scrape.config import load_config
    from biaskit.scrape.pipeline import scrape_dump

    cfg = load_config({"domains": {"all": {"groups": {"all": ["unused"]}}}})
    t0 = time.perf_counter()
    res = scrape_dump(DUMP, cfg, tmp / f"all_{processes}.parquet", processes=processes, all_pages=True)
    dt = time.perf_counter() - t0
    c = res.counts
    return {"processes": processes, "pages": c["pages_processed"], "sentences": c["sentences"], "prompts": c["prompts"],
            "seconds": round(dt, 2), "pages_per_s": round(c["pages_processed"] / dt, 2), "sentences_per_s": round(c["sentences"] / dt, 1)}


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
            out[run] = {"http_requests": c.stats["http_requests"], "cache_hits": c.stats["cache_hits"], "pages": res.counts["pages_processed"],
                        "prompts": res.counts["prompts"], "seconds": round(time.perf_counter() - t0, 2)}
        return out


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        only_api = "--api-only" in sys.argv
        results = {"cpu_count": os.cpu_count(), "dump": [] if only_api else [bench_dump(1, tmp), bench_dump(2, tmp)], "api": bench_api(tmp)}
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
