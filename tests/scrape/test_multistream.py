"""Multistream dumps read in parallel: worker processes and Ray give the one-process output."""

from __future__ import annotations

import bz2
import shutil

import pyarrow.parquet as pq
import pytest

from .conftest import DUMP206


@pytest.fixture(scope="module")
def multistream(tmp_path_factory):
    from biaskit.scrape.multistream import write_multistream

    d = tmp_path_factory.mktemp("ms")
    return write_multistream(DUMP206, d / "enwiki-test-pages-articles-multistream.xml.bz2", pages_per_stream=20)


def _table(path):
    return pq.read_table(path).drop(["retrieved_at"])  # the time of the run


def _all_pages_cfg():
    from biaskit.scrape.config import load_config

    return load_config({"domains": {"x": {"groups": {"y": {"pages": ["X"]}}}}})


def test_multistream_layout(multistream):
    from biaskit.scrape.dump import iter_dump
    from biaskit.scrape.multistream import find_index, iter_stream_pages, read_index, read_stream, stream_spans

    dump, index = multistream
    assert find_index(dump) == index
    lines = bz2.open(index, "rt", encoding="utf-8").read().splitlines()
    assert len(lines) == 206  # one line per page, redirects included, as Wikimedia's index
    offsets = read_index(index)
    assert len(offsets) == 11  # ceil(206 / 20)
    # every stream parses alone, and together they are the pages of the original dump, in order
    pages = [p.title for span in stream_spans(dump, offsets) for p in iter_stream_pages(read_stream(dump, span))]
    assert pages == [p.title for p in iter_dump(DUMP206)] and len(pages) == 106
    # Python's bz2 reads the concatenated streams as one file: the one-process reader sees the same pages
    assert [p.title for p in iter_dump(dump)] == pages


@pytest.mark.parametrize("all_pages", [True, False])
def test_processes_2_equals_one_process(multistream, tmp_path, all_pages):
    import json

    from biaskit.scrape.config import load_config
    from biaskit.scrape.pipeline import scrape_dump

    dump, index = multistream
    cfg = _all_pages_cfg() if all_pages else load_config("demo")
    one = scrape_dump(dump, cfg, tmp_path / "one.parquet", all_pages=all_pages)  # no index used with one process
    two = scrape_dump(dump, cfg, tmp_path / "two.parquet", all_pages=all_pages, processes=2)  # the index next to the dump
    assert _table(tmp_path / "one.parquet").equals(_table(tmp_path / "two.parquet"))
    assert one.counts == two.counts and one.counts["prompts"] > 100
    m1 = json.loads((tmp_path / "one.parquet.manifest.json").read_text())
    m2 = json.loads((tmp_path / "two.parquet.manifest.json").read_text())
    assert "multistream" not in m1 and m2["multistream"]["streams"] == 11 and m2["multistream"]["index"] == str(index)
    assert m1["pages_per_group"] == m2["pages_per_group"] and m1["filter_counts"] == m2["filter_counts"]


def test_ray_engine_equals_one_process(multistream, tmp_path, ray_cluster):
    from biaskit.pool import engine_spec
    from biaskit.scrape.pipeline import scrape_dump

    dump, index = multistream
    cfg = _all_pages_cfg()
    scrape_dump(dump, cfg, tmp_path / "one.parquet", all_pages=True)
    res = scrape_dump(dump, cfg, tmp_path / "ray.parquet", all_pages=True, index=index, engine=engine_spec("ray", address=ray_cluster, actors=2))
    assert _table(tmp_path / "one.parquet").equals(_table(tmp_path / "ray.parquet"))
    assert res.counts["pages_processed"] == 106


def test_bad_index_and_ray_without_index(multistream, tmp_path):
    from biaskit.errors import BiaskitError
    from biaskit.pool import engine_spec
    from biaskit.scrape.pipeline import scrape_dump

    dump, _ = multistream
    bad = tmp_path / "bad-index.txt"
    bad.write_text("not an index line\n")
    with pytest.raises(BiaskitError) as e:
        scrape_dump(dump, _all_pages_cfg(), tmp_path / "o.parquet", all_pages=True, index=bad)
    assert e.value.code == "E233" and "line 1" in str(e.value)
    far = tmp_path / "far-index.txt"
    far.write_text("999999999:1:X\n")
    with pytest.raises(BiaskitError) as e:
        scrape_dump(dump, _all_pages_cfg(), tmp_path / "o.parquet", all_pages=True, index=far)
    assert e.value.code == "E233" and "past the end" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        scrape_dump(DUMP206, _all_pages_cfg(), tmp_path / "o.parquet", all_pages=True, engine=engine_spec("ray"))
    assert e.value.code == "E234"
    assert not (tmp_path / "o.parquet").exists()


def test_cli_reads_the_index_next_to_the_dump(multistream, tmp_path):
    import json

    from typer.testing import CliRunner

    from biaskit.cli import app

    dump, index = multistream
    cfg = tmp_path / "all.yaml"
    cfg.write_text("domains: {x: {groups: {y: {pages: [X]}}}}\n")
    r = CliRunner().invoke(
        app, ["--quiet", "scrape", "dump", str(dump), "--config", str(cfg), "--all-pages", "--processes", "2", "--out", str(tmp_path / "p.parquet")]
    )
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "p.parquet.manifest.json").read_text())["multistream"]["index"] == str(index)
    r = CliRunner().invoke(
        app,
        [
            "--quiet",
            "scrape",
            "dump",
            str(dump),
            "--config",
            str(cfg),
            "--all-pages",
            "--index",
            str(tmp_path / "nope.txt.bz2"),
            "--out",
            str(tmp_path / "q.parquet"),
        ],
    )
    assert r.exit_code == 1 and "E003" in r.output and "multistream index not found" in r.output


def _doctored(multistream, tmp_path, how: str):
    """A copy of the test multistream dump with its index doctored: ``drop-first`` leaves out the lines of the first
    page stream (its pages lie before the first offset the index names), ``drop-middle`` those of the third stream,
    ``head-pages`` puts the first page stream's pages into the head stream (the index points them at offset 0)."""
    dump, index = multistream
    lines = bz2.open(index, "rt", encoding="utf-8").read().splitlines()
    offsets = sorted({int(x.split(":", 1)[0]) for x in lines})
    d = tmp_path / how
    d.mkdir()
    new_dump = d / dump.name
    if how == "head-pages":
        raw = dump.read_bytes()
        head = bz2.decompress(raw[: offsets[0]])
        first = bz2.decompress(raw[offsets[0] : offsets[1]])
        merged = bz2.compress(head + first)
        shift = len(merged) - offsets[1]
        new_dump.write_bytes(merged + raw[offsets[1] :])
        fixed = []
        for x in lines:
            off, rest = x.split(":", 1)
            off = int(off)
            fixed.append(f"{0 if off == offsets[0] else off + shift}:{rest}")
        lines = fixed
    else:
        shutil.copyfile(dump, new_dump)
        gone = offsets[0] if how == "drop-first" else offsets[2]
        lines = [x for x in lines if int(x.split(":", 1)[0]) != gone]
    new_index = d / index.name
    with bz2.open(new_index, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return new_dump, new_index


@pytest.mark.parametrize("how", ["drop-first", "drop-middle", "head-pages"])
def test_index_cross_checked_against_the_streams(multistream, tmp_path, how, caplog):
    """Pages missing from the index, or in a head stream, are read (they used to be dropped silently, exit 0)."""
    from biaskit.scrape.dump import iter_dump
    from biaskit.scrape.multistream import iter_stream_pages, read_index, read_stream, stream_spans

    dump, index = _doctored(multistream, tmp_path, how)
    want = [p.title for p in iter_dump(DUMP206)]
    assert [p.title for p in iter_dump(dump)] == want  # the doctored dump holds every page
    with caplog.at_level("WARNING", logger="biaskit"):
        spans = stream_spans(dump, read_index(index))
    got = [p.title for span in spans for p in iter_stream_pages(read_stream(dump, span))]
    assert got == want and len(got) == 106
    if how == "drop-first":  # 20 pages (redirects included) lie before the first offset the index names
        assert "20 page(s) lie before the first stream the index names" in caplog.text
    elif how == "drop-middle":
        assert "lie before" not in caplog.text and len(spans) == 10  # one span covers two streams


def test_doctored_index_gives_every_prompt_with_processes(multistream, tmp_path):
    from biaskit.scrape.pipeline import scrape_dump

    dump, index = _doctored(multistream, tmp_path, "drop-first")
    cfg = _all_pages_cfg()
    one = scrape_dump(multistream[0], cfg, tmp_path / "one.parquet", all_pages=True)
    two = scrape_dump(dump, cfg, tmp_path / "two.parquet", all_pages=True, index=index, processes=2)
    assert one.counts == two.counts and one.counts["pages_processed"] == 106
    assert _table(tmp_path / "one.parquet").equals(_table(tmp_path / "two.parquet"))


def test_processes_above_the_cpu_count_is_refused(multistream, tmp_path):
    from typer.testing import CliRunner

    from biaskit.cli import app
    from biaskit.limits import cpu_count

    dump, _ = multistream
    r = CliRunner().invoke(
        app, ["--quiet", "scrape", "dump", str(dump), "--config", "demo", "--processes", "100000", "--out", str(tmp_path / "p.parquet")]
    )
    assert r.exit_code == 1 and "error[E383]" in r.output and f"CPUs ({cpu_count()})" in r.output and "100000" in r.output
    assert not (tmp_path / "p.parquet").exists()
    r = CliRunner().invoke(
        app, ["--quiet", "scrape", "dump", str(dump), "--config", "demo", "--processes", "0", "--out", str(tmp_path / "p.parquet")]
    )
    assert r.exit_code == 1 and "error[E005]" in r.output
