"""Integration tests against a real MediaWiki server loaded with real Wikipedia pages (see conftest.py)."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from biaskit.errors import BiaskitError
from biaskit.scrape.api import MediaWikiClient
from biaskit.scrape.config import load_config
from biaskit.scrape.pipeline import scrape_api

pytestmark = pytest.mark.server

MARKUP = ("{{", "}}", "[[", "]]", "<ref", "|", "thumb", "File:")


class Sleeps(list):
    """Records the waits the client asks for instead of sleeping."""

    def __call__(self, s):
        self.append(round(s, 2))


def client(wiki, tmp_path=None, **kw):
    kw.setdefault("max_rps", None)
    kw.setdefault("sleep", Sleeps())
    return MediaWikiClient(wiki.endpoint, cache_dir=(tmp_path / "cache") if tmp_path else None, **kw)


def test_category_members_follow_continuation(fresh_wiki):
    c = client(fresh_wiki)
    # Category:Metaphysicians on the imported pages: Aristotle, Ayn Rand, Arthur Schopenhauer (sorted by sort key);
    # 1 member per request -> 3 requests, the 2nd and 3rd carrying the `continue` of the one before
    assert c.category_members("Category:Metaphysicians", per_request=1) == ["Aristotle", "Ayn Rand", "Arthur Schopenhauer"]
    assert c.stats["http_requests"] == 3
    assert c.category_members("Metaphysicians") == ["Aristotle", "Ayn Rand", "Arthur Schopenhauer"]


def test_links_of_seed_page_in_order_of_the_api(fresh_wiki):
    c = client(fresh_wiki)
    # the seed page links 4 articles; prop=links lists them by title (the missing one included, as MediaWiki does)
    got = c.links("List of biaskit test people", per_request=2)
    assert got == ["Alain Connes", "Aldous Huxley", "Andre Agassi", "Nobody Of This Name"]
    assert c.stats["http_requests"] == 2
    with pytest.raises(BiaskitError) as e:
        c.links("No such seed page")
    assert e.value.code == "E033" and "No such seed page" in str(e.value)


def test_pages_batches_redirects_and_missing(fresh_wiki):
    c = client(fresh_wiki)
    missing: list[str] = []
    pages = list(c.pages(["Astronomer", "AynRand", "Nobody Of This Name", "allah", "A|B"], batch=2, missing=missing))
    # AynRand redirects to Ayn Rand; "allah" is normalised to Allah; 4 titles in batches of 2 -> 2 requests
    assert [p.title for p in pages] == ["Astronomer", "Ayn Rand", "Allah"]
    assert pages[1].requested == ["AynRand"]
    assert missing == ["A|B", "Nobody Of This Name"]  # "|" is not allowed in titles: never sent
    assert c.stats["http_requests"] == 2
    for p in pages:
        assert p.page_id > 0 and p.revision_id > 0 and p.text.startswith(("{{", "'''", "An ", "[[")) or len(p.text) > 1000
        assert p.wiki == fresh_wiki.endpoint and p.retrieved_at.endswith("Z")
    assert "'''astronomer'''" in pages[0].text
    with pytest.raises(BiaskitError) as e:
        list(c.pages(["A"], batch=51))
    assert e.value.code == "E005"


def test_429_and_503_are_retried_honouring_retry_after(fresh_wiki):
    sleeps = Sleeps()
    c = client(fresh_wiki, sleep=sleeps, backoff=0.5)
    fresh_wiki.faults("429 2", "503")
    assert c.category_members("Metaphysicians") == ["Aristotle", "Ayn Rand", "Arthur Schopenhauer"]
    # 429 with Retry-After: 2 -> wait 2 s; 503 without Retry-After -> backoff 0.5 * 2**1 = 1.0 s (2nd attempt)
    assert sleeps == [2.0, 1.0]
    assert fresh_wiki.fault_log() == ["429", "2", "503"]
    assert c.stats["http_requests"] == 3 and c.stats["retries"] == 2


def test_maxlag_error_is_retried(fresh_wiki):
    sleeps = Sleeps()
    c = client(fresh_wiki, sleep=sleeps)
    fresh_wiki.lag(2)
    info = c.siteinfo()
    assert info["general"]["sitename"]
    # MediaWiki answers HTTP 200 + error.code maxlag + Retry-After: 5 twice, then the real reply
    assert sleeps == [5.0, 5.0]
    assert c.stats["maxlag_retries"] == 2 and c.stats["http_requests"] == 3


def test_request_rate_limit(fresh_wiki):
    sleeps = Sleeps()
    c = client(fresh_wiki, sleep=sleeps, max_rps=2)  # at most one request per 0.5 s
    for _ in range(3):
        c.siteinfo()  # no cache: 3 HTTP requests
    # the 2nd and 3rd requests come right after the one before (the recorder does not really sleep): each waits
    # what is left of its 0.5 s interval
    assert c.stats["http_requests"] == 3 and len(sleeps) == 2
    assert all(0 < s <= 0.5 for s in sleeps)


def test_gives_up_with_clear_errors(fresh_wiki, tmp_path):
    c = client(fresh_wiki, max_retries=1)
    fresh_wiki.faults("503", "503")
    with pytest.raises(BiaskitError) as e:
        c.siteinfo()
    assert e.value.code == "E031" and "HTTP 503 after 2 tries" in str(e.value)
    fresh_wiki.lag(5)
    with pytest.raises(BiaskitError) as e:
        c.siteinfo()
    assert e.value.code == "E030" and "stayed lagged (maxlag) after 2 tries" in str(e.value)
    fresh_wiki.lag(0)
    fresh_wiki.faults("html")
    with pytest.raises(BiaskitError) as e:
        c.siteinfo()
    assert e.value.code == "E031" and "text/html" in str(e.value)
    dead = MediaWikiClient("http://127.0.0.1:9/api.php", max_retries=1, sleep=Sleeps(), max_rps=None, timeout=2)
    with pytest.raises(BiaskitError) as e:
        dead.siteinfo()
    assert e.value.code == "E031" and "unreachable after 2 tries" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        c.get({"action": "query", "prop": "revisions", "titles": "Allah|Astronomer", "rvprop": "content", "rvlimit": 2, "rvslots": "main"})
    assert e.value.code == "E030" and "invalidparammix" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        c.get({"action": "nosuchaction"})
    assert e.value.code == "E030" and "badvalue" in str(e.value)


CONFIG = {
    "name": "server-test",
    "domains": {
        "gender": {
            "groups": {
                "people": {"seeds": [{"links": "List of biaskit test people"}]},
                "metaphysicians": {"seeds": [{"category": "Category:Metaphysicians"}]},
            }
        },
        "profession": {
            "term_case": "lower",
            "groups": {"scientific_occupations": {"pages": ["Astronomer", "Nobody Of This Name"], "terms": ["astronomer", "astronomers"]}},
        },
        "political_ideology": {"groups": {"anarchism": {"pages": ["Anarchism"], "terms": ["anarchism", "anarchist", "anarchists"]}}},
    },
}


def test_scrape_api_end_to_end_cached_and_resumed(fresh_wiki, tmp_path):
    cfg = load_config(CONFIG)
    c1 = client(fresh_wiki, tmp_path)
    res = scrape_api(fresh_wiki.endpoint, cfg, tmp_path / "p.parquet", client=c1)
    t = pq.read_table(tmp_path / "p.parquet").to_pylist()
    assert res.counts["prompts"] == len(t) > 50
    # pages: 4 links (1 missing) + 3 category members + Astronomer + the missing title + Anarchism = 8 found
    # the missing title is asked for once (titles are deduplicated before fetching)
    assert res.missing == ["Nobody Of This Name"]
    assert res.pages_per_group == {
        "gender/people": 4,
        "gender/metaphysicians": 3,
        "profession/scientific_occupations": 2,
        "political_ideology/anarchism": 1,
    }
    assert res.counts["pages_processed"] == 8
    for r in t:
        assert not any(m in r["reference"] for m in MARKUP), r["reference"]
        assert r["reference"].startswith(r["text"]) and r["text"].endswith(" ")
        assert r["wiki"] == fresh_wiki.endpoint and r["page_id"] > 0 and r["revision_id"] > 0 and r["license"] == "CC BY-SA 4.0"
    astro = [r for r in t if r["page_title"] == "Astronomer"]
    # the lead sentence of the real article: "An astronomer is a scientist in the field of astronomy who ..."
    assert astro[0]["text"] == "An astronomer is a scientist in " and astro[0]["term"] == "astronomer"
    assert {r["group"] for r in t if r["page_title"] == "Ayn Rand"} == {"metaphysicians"}
    # the wiki's own names came from its siteinfo (namespaces, namespacealiases, magicwords)
    import json

    man = json.loads((tmp_path / "p.parquet.manifest.json").read_text())
    assert man["site_names"]["source"] == "api" and {"File", "Image"} <= set(man["site_names"]["file"])
    # siteinfo + links of the seed page + category members + one prop=revisions request for the 9 titles (<= 50)
    assert c1.stats["http_requests"] == 4
    # a rerun with the same cache sends no request at all and writes the same table
    c2 = client(fresh_wiki, tmp_path)
    scrape_api(fresh_wiki.endpoint, cfg, tmp_path / "p2.parquet", client=c2)
    assert c2.stats["http_requests"] == 0 and c2.stats["cache_hits"] == 4
    assert pq.read_table(tmp_path / "p2.parquet").to_pylist() == t


SMALL_CONFIG = {
    "domains": {
        "gender": {"groups": {"people": {"seeds": [{"links": "List of biaskit test people"}]}}},
        "profession": {"groups": {"scientific_occupations": {"pages": ["Astronomer"], "terms": ["astronomer"]}}},
        "religious_ideology": {"groups": {"islam": {"pages": ["Allah"], "terms": ["Allah", "Islam", "Muslims"]}}},
    },
}


def test_killed_api_scrape_resumes_without_duplicates_or_losses(fresh_wiki, tmp_path):
    from biaskit.scrape.pipeline import pages_report_path

    cfg = load_config(SMALL_CONFIG)  # 5 pages: Alain Connes, Aldous Huxley, Andre Agassi, Astronomer, Allah
    scrape_api(fresh_wiki.endpoint, cfg, tmp_path / "full.parquet", client=client(fresh_wiki, tmp_path / "a"))
    # a second scrape (own cache) is killed after its 4th page: the source raises, as a dead endpoint would
    c = client(fresh_wiki, tmp_path / "b")
    real_pages = c.pages
    seen: list[str] = []

    def dying_pages(titles, **kw):
        for p in real_pages(titles, **kw):
            if len(seen) == 4:
                raise BiaskitError("E031", "simulated kill", value=fresh_wiki.endpoint)
            seen.append(p.title)
            yield p

    c.pages = dying_pages
    out = tmp_path / "resumed.parquet"
    with pytest.raises(BiaskitError, match="simulated kill"):
        scrape_api(fresh_wiki.endpoint, cfg, out, client=c, shard_pages=1)
    assert not out.exists()
    report_parts = pages_report_path(out).parent / (pages_report_path(out).name + ".parts")
    kept = [t for f in sorted(report_parts.glob("part-*.parquet")) for t in pq.read_table(f).column("page_title").to_pylist()]
    assert sorted(kept) == sorted(seen)  # finished pages kept
    c.pages = real_pages
    asked: list[str] = []

    def counting_pages(titles, **kw):
        asked.extend(titles)
        return real_pages(titles, **kw)

    c.pages = counting_pages
    scrape_api(fresh_wiki.endpoint, cfg, out, client=c)
    assert not set(asked) & set(seen)  # pages finished before the kill are not fetched again
    a = pq.read_table(tmp_path / "full.parquet").to_pylist()
    b = pq.read_table(out).to_pylist()
    assert len({r["prompt_id"] for r in b}) == len(b)  # no duplicates
    strip = lambda rows: sorted(({k: v for k, v in r.items() if k != "retrieved_at"} for r in rows), key=lambda r: r["prompt_id"])  # noqa: E731
    assert strip(b) == strip(a)  # and no losses
    assert not report_parts.exists()


def test_damaged_cache_entry_is_refetched(fresh_wiki, tmp_path):
    c = client(fresh_wiki, tmp_path)
    c.siteinfo()
    (entry,) = list((tmp_path / "cache").rglob("*.json"))
    entry.write_text("{truncated")
    c2 = client(fresh_wiki, tmp_path)
    assert c2.siteinfo()["general"]["sitename"]
    assert c2.stats["http_requests"] == 1 and c2.stats["cache_hits"] == 0


def test_cli_scrape_api(fresh_wiki, tmp_path):
    from typer.testing import CliRunner

    from biaskit.cli import app

    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(
        "domains:\n  profession:\n    groups:\n      scientific_occupations:\n        pages: [Astronomer]\n        terms: [astronomer, astronomers]\n"
    )
    args = [
        "--quiet",
        "scrape",
        "api",
        fresh_wiki.endpoint,
        "--config",
        str(cfg),
        "--out",
        str(tmp_path / "p.parquet"),
        "--cache-dir",
        str(tmp_path / "c"),
        "--max-rps",
        "100",
    ]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    n = pq.read_table(tmp_path / "p.parquet").num_rows
    # siteinfo + one prop=revisions request; the rerun is served from the cache
    assert f"({n} prompts from 1 pages" in r.output and "HTTP: http_requests 2, cache_hits 0" in r.output
    r = CliRunner().invoke(app, args)
    assert "HTTP: http_requests 0, cache_hits 2" in r.output


def test_api_scrape_on_two_processes_matches_one(fresh_wiki, tmp_path):
    cfg = load_config(
        {
            "domains": {
                "profession": {"groups": {"sci": {"pages": ["Astronomer"], "terms": ["astronomer", "astronomers"]}}},
                "religious_ideology": {"groups": {"islam": {"pages": ["Allah"], "terms": ["Allah", "Muslims"]}}},
            }
        }
    )
    a = scrape_api(fresh_wiki.endpoint, cfg, tmp_path / "a.parquet", client=client(fresh_wiki, tmp_path / "c1"), processes=1)
    b = scrape_api(fresh_wiki.endpoint, cfg, tmp_path / "b.parquet", client=client(fresh_wiki, tmp_path / "c2"), processes=2)
    strip = lambda p: [{k: v for k, v in r.items() if k != "retrieved_at"} for r in pq.read_table(p).to_pylist()]  # noqa: E731
    assert strip(tmp_path / "a.parquet") == strip(tmp_path / "b.parquet") and a.counts == b.counts
    assert a.counts["pages_processed"] == 2 and a.counts["prompts"] > 10
