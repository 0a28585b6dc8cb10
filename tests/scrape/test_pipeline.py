"""The dump pipeline: exact prompts for a small config, parallel == serial, resume after a kill."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from biaskit.errors import BiaskitError
from biaskit.io import read_manifest
from biaskit.scrape.config import load_config
from biaskit.scrape.pipeline import pages_report_path, scrape_dump

from .conftest import DUMP206

SMALL = {
    "name": "small",
    "domains": {
        "profession": {
            "groups": {
                "scientific_occupations": {
                    "pages": ["Astronomers and Astrophysicists"],  # a redirect -> Astronomer
                    "terms": ["astronomer", "astronomers"],
                }
            }
        },
        "religious_ideology": {"groups": {"islam": {"pages": ["Allah", "No Such Page"], "terms": ["Allah", "Islam", "Muslims", "Muslim"]}}},
        "gender": {"groups": {"men": {"pages": ["Allan_Dwan"]}}},  # underscores normalised; term from the title
    },
}


def test_small_config_exact(tmp_path):
    out = tmp_path / "p.parquet"
    res = scrape_dump(DUMP206, load_config(SMALL), out, sentences_out=tmp_path / "s.parquet")
    t = pq.read_table(out).to_pylist()
    assert res.missing == ["No Such Page"]
    assert res.pages_per_group == {"profession/scientific_occupations": 1, "religious_ideology/islam": 2, "gender/men": 1}
    assert res.counts["pages_processed"] == 3 and res.counts["pages_missing"] == 1 and res.counts["pages_not_in_config"] == 103
    astro = [r for r in t if r["page_title"] == "Astronomer"]
    # the Astronomer article's sentences whose first 8 words hold "astronomer(s)"; first: its lead sentence
    assert astro[0]["text"] == "An astronomer is a scientist in "
    assert astro[0]["reference"] == (
        "An astronomer is a scientist in the field of astronomy who concentrates their studies on a "
        "specific question or field outside of the scope of Earth."
    )
    assert (astro[0]["domain"], astro[0]["group"], astro[0]["term"], astro[0]["sentence_index"]) == (
        "profession",
        "scientific_occupations",
        "astronomer",
        0,
    )
    assert astro[0]["wiki"] == "enwiki:enwiki-pages-articles-206pages.xml.bz2" and astro[0]["license"] == "CC BY-SA 4.0"
    assert astro[0]["page_id"] > 0 and astro[0]["revision_id"] > 0 and astro[0]["retrieved_at"].endswith("Z")
    dwan = [r for r in t if r["page_title"] == "Allan Dwan"]
    # wikitext lead: '''Allan Dwan''' (3 April 1885 – 28 December 1981) was a pioneering Canadian-born American ...
    # "Allan Dwan" = 2 words -> first 5 + 2 = 7 words: Allan | Dwan | (3 | April | 1885 | – | 28
    assert dwan[0]["text"] == "Allan Dwan (3 April 1885 – 28 " and dwan[0]["term"] == "Allan Dwan"
    # every prompt is a prefix of its reference, 6-9 words split at single spaces, leaving >= 1 word
    for r in t:
        n = len(r["text"].split(" ")) - 1
        assert r["reference"].startswith(r["text"]) and 6 <= n <= 9 and n < len(r["reference"].split(" "))
    # counts add up: per (sentence, group) each sentence is kept or dropped by exactly one filter
    c = res.counts
    sents = pq.read_table(tmp_path / "s.parquet")
    # a sentence a dropped template broke is counted (template_dropped) and kept out of the sentences table
    assert sents.num_rows == c["sentences"] - c["template_dropped"]
    assert (
        c["sentences"]
        == c["template_dropped"]
        + c["too_short"]
        + c["term_not_in_window"]
        + c["no_continuation"]
        + c["empty_prompt"]
        + c["markup_residue"]
        + c["duplicate_prompt"]
        + c["prompts"]
    )
    m = read_manifest(out)
    assert m["filter_counts"] == {k: v for k, v in c.items() if k != "pages_missing"}
    assert m["output"]["rows"] == len(t) == c["prompts"]
    rep = pq.read_table(pages_report_path(out)).to_pylist()
    assert [r["page_title"] for r in rep] == ["Allah", "Allan Dwan", "Astronomer"] and all(r["error"] is None for r in rep)


def test_two_processes_give_the_same_table(tmp_path):
    cfg = load_config(SMALL)
    scrape_dump(DUMP206, cfg, tmp_path / "a.parquet", processes=1)
    scrape_dump(DUMP206, cfg, tmp_path / "b.parquet", processes=2)
    strip = lambda p: [{k: v for k, v in r.items() if k != "retrieved_at"} for r in pq.read_table(p).to_pylist()]  # noqa: E731
    assert strip(tmp_path / "a.parquet") == strip(tmp_path / "b.parquet")


def test_killed_dump_scrape_resumes(tmp_path, monkeypatch):
    import biaskit.scrape.pipeline as pl  # patched where build_from_pages looks process_page up (imported from scrape.extract)

    cfg = load_config(SMALL)
    scrape_dump(DUMP206, cfg, tmp_path / "full.parquet")
    real = pl.process_page
    done: list[str] = []

    def dying(task):
        if len(done) == 2:
            raise KeyboardInterrupt  # killed while working on the 3rd page
        done.append(task[0].title)
        return real(task)

    monkeypatch.setattr(pl, "process_page", dying)
    out = tmp_path / "p.parquet"
    with pytest.raises(KeyboardInterrupt):
        scrape_dump(DUMP206, cfg, out, shard_pages=1)
    assert not out.exists() and done == ["Allan Dwan", "Astronomer"]  # dump order
    monkeypatch.setattr(pl, "process_page", real)
    again: list[str] = []

    def counting(task):
        again.append(task[0].title)
        return real(task)

    monkeypatch.setattr(pl, "process_page", counting)
    res = scrape_dump(DUMP206, cfg, out)
    assert again == ["Allah"] and res.counts["pages_resumed"] == 2
    strip = lambda p: [{k: v for k, v in r.items() if k != "retrieved_at"} for r in pq.read_table(p).to_pylist()]  # noqa: E731
    assert strip(out) == strip(tmp_path / "full.parquet")
    assert res.counts["sentences"] == sum(pq.read_table(pages_report_path(out)).column("sentences").to_pylist())


def test_unparseable_page_is_a_counted_named_skip(tmp_path, monkeypatch):
    import biaskit.scrape.clean as cl

    real = cl.clean_wikitext

    def broken(text, *, title="", **kw):
        if title == "Allah":
            raise BiaskitError("E032", f"could not parse the wikitext of page {title!r}", value=title)
        return real(text, title=title, **kw)

    monkeypatch.setattr(cl, "clean_wikitext", broken)
    res = scrape_dump(DUMP206, load_config(SMALL), tmp_path / "p.parquet")
    assert res.failed == ["Allah"] and res.counts["pages_failed"] == 1 and res.counts["pages_processed"] == 3
    rep = {r["page_title"]: r for r in pq.read_table(res.pages_report).to_pylist()}
    assert "could not parse the wikitext of page 'Allah'" in rep["Allah"]["error"]
    assert {r["page_title"] for r in pq.read_table(tmp_path / "p.parquet").to_pylist()} == {"Astronomer", "Allan Dwan"}


def test_all_pages_mode_and_bad_arguments(tmp_path):
    with pytest.raises(BiaskitError) as e:
        scrape_dump(DUMP206, load_config(SMALL), tmp_path / "p.parquet", processes=0)
    assert e.value.code == "E005" and "processes" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        scrape_dump(DUMP206, load_config(SMALL), tmp_path / "p.parquet", redirects="follow")
    assert e.value.code == "E005"
    with pytest.raises(BiaskitError) as e:
        scrape_dump(DUMP206, load_config({"domains": {"d": {"groups": {"g": {"seeds": [{"links": "No Such List"}]}}}}}), tmp_path / "q.parquet")
    assert e.value.code == "E033" and "No Such List" in str(e.value)


def test_dump_resolves_link_and_category_seeds(tmp_path, monkeypatch):
    import biaskit.scrape.pipeline as pl  # patched where build_from_pages looks process_page up (imported from scrape.extract)

    # page processing is stubbed out: this test is about which pages the seeds select from the dump itself
    monkeypatch.setattr(
        pl,
        "process_page",
        lambda task: (
            [],
            {
                "wiki": task[0].wiki,
                "page_title": task[0].title,
                "page_id": task[0].page_id,
                "revision_id": task[0].revision_id,
                "groups": ",".join(f"{a.domain}/{a.group}" for a in task[1]),
                "sentences": 0,
                "too_short": 0,
                "term_not_in_window": 0,
                "no_continuation": 0,
                "empty_prompt": 0,
                "markup_residue": 0,
                "prompts": 0,
                "error": None,
            },
            [],
        ),
    )
    cfg = load_config(
        {
            "domains": {
                "gender": {
                    "groups": {
                        # [[Category:Metaphysicians]] is on Aristotle, Ayn Rand and Arthur Schopenhauer in this dump
                        "metaphysicians": {"seeds": [{"category": "Category:Metaphysicians"}]},
                        # "List of anthropologists" is in the dump; keep only its links to names starting with "Franz" or "Margaret"
                        "anthropologists": {"seeds": [{"links": "List of anthropologists", "match": "^(Franz|Margaret) "}]},
                    }
                }
            }
        }
    )
    res = scrape_dump(DUMP206, cfg, tmp_path / "p.parquet")
    assert res.pages_per_group["gender/metaphysicians"] == 3
    rep = {r["page_title"]: r["groups"] for r in pq.read_table(res.pages_report).to_pylist()}
    assert rep == {"Aristotle": "gender/metaphysicians", "Arthur Schopenhauer": "gender/metaphysicians", "Ayn Rand": "gender/metaphysicians"}
    # the anthropologists are linked but not articles of this 206-page dump: counted as missing, by name
    # (the list page links 226 articles; two match the regex)
    assert res.pages_per_group["gender/anthropologists"] == 2 and res.missing == ["Franz Boas", "Margaret Mead"]


def test_resume_with_other_settings_is_refused(tmp_path, monkeypatch):
    import biaskit.scrape.pipeline as pl  # patched where build_from_pages looks process_page up (imported from scrape.extract)

    real = pl.process_page

    def dying(task):
        raise KeyboardInterrupt

    monkeypatch.setattr(pl, "process_page", dying)
    with pytest.raises(KeyboardInterrupt):
        scrape_dump(DUMP206, load_config(SMALL), tmp_path / "p.parquet")
    monkeypatch.setattr(pl, "process_page", real)
    other = load_config(SMALL, rule_overrides={"window": 10})
    with pytest.raises(BiaskitError) as e:
        scrape_dump(DUMP206, other, tmp_path / "p.parquet")
    assert e.value.code == "E006" and "unfinished earlier run with other settings" in str(e.value) and "p.parquet.parts" in str(e.value)
