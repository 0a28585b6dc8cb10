"""The streaming dump reader on real enwiki dumps, and its errors on broken ones."""

from __future__ import annotations

import bz2

import pytest

from biaskit.errors import BiaskitError
from biaskit.scrape.dump import SiteInfo, iter_dump, normalize_title, read_redirects, resolve_title

from .conftest import DUMP206, PEAR, TABLES5


def test_206_page_dump():
    site = SiteInfo()
    pages = list(iter_dump(DUMP206, site=site))
    assert (site.dbname, site.sitename) == ("enwiki", "Wikipedia")
    # 206 pages - 100 redirects = 106 articles in namespace 0
    assert len(pages) == 106
    assert pages[0].title == "Anarchism" and pages[0].page_id == 12 and pages[0].ns == 0
    astro = next(p for p in pages if p.title == "Astronomer")
    assert astro.revision_id > 0 and astro.timestamp.endswith("Z") and "'''astronomer'''" in astro.text
    everything = list(iter_dump(DUMP206, include_redirects=True, namespaces=None))
    assert len(everything) == 206 and sum(1 for p in everything if p.redirect) == 100


def test_redirects():
    r = read_redirects(DUMP206)
    assert r["AccessibleComputing"] == "Computer accessibility"
    assert r["AynRand"] == "Ayn Rand"
    assert len(r) == 99  # one of the 100 redirects is outside namespace 0
    assert resolve_title("AynRand", r) == "Ayn Rand"
    assert resolve_title("X", {"X": "Y", "Y": "X"}) == "Y"  # a loop stops
    assert normalize_title("ayn_Rand") == "Ayn Rand"


def test_plain_xml_and_other_dump():
    (pear,) = list(iter_dump(PEAR))
    assert (pear.title, pear.ns) == ("Pear", 0) and pear.page_id > 0
    assert len(list(iter_dump(TABLES5))) == 5


def test_truncated_dump_yields_pages_before_the_error(tmp_path):
    raw = bz2.open(DUMP206).read()
    cut = raw[: raw.index(b"<title>Autism</title>") + 200]  # inside the Autism page (3rd article)
    bad = tmp_path / "cut.xml"
    bad.write_bytes(cut)
    got = []
    with pytest.raises(BiaskitError) as e:
        for p in iter_dump(bad):
            got.append(p.title)
    assert got == ["Anarchism"]  # AccessibleComputing is a redirect; Anarchism was complete
    # the message names the file and the last complete page (a redirect, the one before Autism)
    assert e.value.code == "E032" and "after page 'AmoeboidTaxa'" in str(e.value) and "cut.xml" in str(e.value)
    assert "writes nothing" in str(e.value)  # and that is true: a scrape of the cut dump leaves no output
    from biaskit.demo.stage_scrape import demo_config
    from biaskit.scrape.pipeline import scrape_dump

    with pytest.raises(BiaskitError) as e2:
        scrape_dump(bad, demo_config(False), tmp_path / "out" / "prompts.parquet")
    assert e2.value.code == "E032" and not (tmp_path / "out").exists()
    bz = tmp_path / "cut.xml.bz2"
    bz.write_bytes(bz2.compress(raw)[:300000])
    with pytest.raises(BiaskitError) as e:
        list(iter_dump(bz))
    assert e.value.code == "E032"


def test_not_a_dump(tmp_path):
    p = tmp_path / "x.xml"
    p.write_text("<html><body>hi</body></html>")
    with pytest.raises(BiaskitError) as e:
        list(iter_dump(p))
    assert e.value.code == "E032" and "root element <html>" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        list(iter_dump(tmp_path / "missing.xml.bz2"))
    assert e.value.code == "E003"
