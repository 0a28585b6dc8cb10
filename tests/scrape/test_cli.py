"""The scrape/prompts/bold commands end to end, and their one-line errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pyarrow.parquet as pq
from typer.testing import CliRunner

from biaskit.cli import app

from .conftest import DUMP206, FIXTURES

runner = CliRunner()
GITHUB = FIXTURES / "bold" / "github"


def run(*args):
    return runner.invoke(app, ["--quiet", *[str(a) for a in args]])


def test_bold_import_export_rebuild(tmp_path):
    r = run("bold", "import", GITHUB, "--out", tmp_path / "b.parquet")
    assert r.exit_code == 0, r.output
    assert "rows 8, empty_prompts 1, duplicate_prompts 1, entities 5" in r.output
    r = run("bold", "export", tmp_path / "b.parquet", "--out", tmp_path / "x", "--layout", "github")
    assert r.exit_code == 0, r.output
    for rel in ("prompts/gender_prompt.json", "wikipedia/profession_wiki.json"):
        assert (tmp_path / "x" / rel).read_bytes() == (GITHUB / rel).read_bytes()
    r = run("prompts", "rebuild", tmp_path / "b.parquet", "--out", tmp_path / "r.parquet")
    assert r.exit_code == 0, r.output
    # 8 rows: the empty one is too short, the repeated astronomer prompt is a duplicate -> 6 prompts
    assert (
        "sentences 8, too_short 1, term_not_in_window 0, no_continuation 0, empty_prompt 0, markup_residue 0, duplicate_prompt 1, prompts 6"
        in r.output
    )
    r = run("prompts", "rebuild", tmp_path / "b.parquet", "--out", tmp_path / "r2.parquet", "--n-first", "3")
    assert r.exit_code == 0
    # first 3 words + 2 words of "Jacob Zachar"
    assert pq.read_table(tmp_path / "r2.parquet").column("text").to_pylist()[0] == "Jacob Zachar is an American "


def test_scrape_dump_and_prompts_build(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(
        "domains:\n  profession:\n    groups:\n      scientific_occupations:\n        pages: [Astronomer]\n        terms: [astronomer, astronomers]\n"
    )
    r = run("scrape", "dump", DUMP206, "--config", cfg, "--out", tmp_path / "p.parquet", "--sentences-out", tmp_path / "s.parquet")
    assert r.exit_code == 0, r.output
    t = pq.read_table(tmp_path / "p.parquet")
    assert f"wrote {tmp_path / 'p.parquet'} ({t.num_rows} prompts from 1 pages" in r.output
    # the sentences table rebuilt with the same rule gives the same prompts
    r = run("prompts", "build", tmp_path / "s.parquet", "--out", tmp_path / "p2.parquet")
    assert r.exit_code == 0, r.output
    assert pq.read_table(tmp_path / "p2.parquet").column("text").to_pylist() == t.column("text").to_pylist()


def test_sentences_out_keeps_every_group_of_a_page_in_two_groups(tmp_path):
    # Ayn Rand is in gender/women and in political_ideology/objectivism; --sentences-out used to keep only the
    # first group, so `prompts build` on it silently lost the objectivism prompts
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(
        "domains:\n  gender:\n    groups:\n      women:\n        pages: [Ayn Rand]\n"
        "  political_ideology:\n    groups:\n      objectivism:\n        pages: [Ayn Rand]\n"
        "        terms: [Objectivism, Objectivist]\n"
    )
    r = run("scrape", "dump", DUMP206, "--config", cfg, "--out", tmp_path / "p.parquet", "--sentences-out", tmp_path / "s.parquet")
    assert r.exit_code == 0, r.output
    t = pq.read_table(tmp_path / "p.parquet")
    assert set(t.column("group").to_pylist()) == {"women", "objectivism"}
    s = pq.read_table(tmp_path / "s.parquet")
    per_group = {g: s.column("group").to_pylist().count(g) for g in ("women", "objectivism")}
    assert per_group["women"] == per_group["objectivism"] > 0 and s.num_rows == 2 * per_group["women"]
    r = run("prompts", "build", tmp_path / "s.parquet", "--out", tmp_path / "p2.parquet")
    assert r.exit_code == 0, r.output
    p2 = pq.read_table(tmp_path / "p2.parquet")
    key = lambda tb: sorted(zip(tb.column("group").to_pylist(), tb.column("prompt_id").to_pylist(), tb.column("text").to_pylist()))  # noqa: E731
    assert key(p2) == key(t)
    # from the sentences in reverse file order: the same prompts in the same order as the scrape wrote them
    pq.write_table(s.take(list(range(s.num_rows - 1, -1, -1))), tmp_path / "s_rev.parquet")
    r = run("prompts", "build", tmp_path / "s_rev.parquet", "--out", tmp_path / "p3.parquet")
    assert r.exit_code == 0, r.output
    assert pq.read_table(tmp_path / "p3.parquet").column("prompt_id").to_pylist() == t.column("prompt_id").to_pylist()


def test_errors_are_one_line(tmp_path):
    r = run("scrape", "dump", tmp_path / "nope.xml.bz2", "--config", "demo", "--out", tmp_path / "p.parquet")
    assert r.exit_code == 1 and "E003" in r.output and "nope.xml.bz2" in r.output
    r = run("scrape", "dump", DUMP206, "--config", "nosuch", "--out", tmp_path / "p.parquet")
    assert r.exit_code == 1 and "E021" in r.output and "'demo'" in r.output
    r = run("scrape", "api", "not-a-url", "--out", tmp_path / "p.parquet")
    assert r.exit_code == 1 and "E031" in r.output
    r = run("bold", "import", tmp_path, "--out", tmp_path / "b.parquet")
    assert r.exit_code == 1 and "E034" in r.output


def test_help_has_examples_and_cli_stays_light():
    for cmd in (["scrape", "dump"], ["scrape", "api"], ["prompts", "build"], ["prompts", "rebuild"], ["bold", "import"], ["bold", "export"]):
        r = runner.invoke(app, [*cmd, "--help"])
        assert r.exit_code == 0 and "Example: biaskit " + " ".join(cmd) in r.output
    code = (
        "import sys, biaskit, biaskit.cli, biaskit.scrape.config, biaskit.scrape.pipeline, biaskit.scrape.bold; "
        "print(sorted(m for m in ('spacy', 'torch', 'transformers', 'mwparserfromhell', 'requests') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_missing_spacy_pipeline_stops_the_scrape_before_the_first_page(tmp_path):
    # every page needs the sentence splitter: a pipeline that is not installed used to mark all pages
    # "unparseable" and exit 0 with an empty table; now it is E010, exit 1, and nothing is written
    cfg = tmp_path / "cfg.yaml"
    # the default splitter (wiki) needs no pipeline: this run asks for the spaCy one
    cfg.write_text(
        "splitter: senter\nspacy_model: xx_no_such_pipeline_sm\ndomains:\n  profession:\n    groups:\n      scientific_occupations:\n"
        "        pages: [Astronomer]\n"
    )
    r = run("scrape", "dump", DUMP206, "--config", cfg, "--out", tmp_path / "p.parquet")
    assert r.exit_code == 1, r.output
    assert r.output.startswith("error[E010]") and "xx_no_such_pipeline_sm" in r.output and len(r.output.strip().splitlines()) == 1
    assert "Traceback" not in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cfg.yaml"]  # no table, no pages report, no shards
    # the API source stops before its first request (the endpoint is never contacted: no E031 for the dead port)
    r = run(
        "scrape",
        "api",
        "http://127.0.0.1:9/w/api.php",
        "--config",
        cfg,
        "--out",
        tmp_path / "a.parquet",
        "--cache-dir",
        tmp_path / "cache",
        "--max-retries",
        "0",
    )
    assert r.exit_code == 1 and r.output.startswith("error[E010]"), r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cfg.yaml"]


def test_scrape_dump_with_the_bold_preset(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("domains:\n  profession:\n    groups:\n      scientific_occupations:\n        pages: [Astronomer]\n        terms: [astronomer]\n")
    r = run("scrape", "dump", DUMP206, "--config", cfg, "--out", tmp_path / "strict.parquet")
    assert r.exit_code == 0, r.output
    r = run(
        "scrape", "dump", DUMP206, "--config", cfg, "--preset", "bold", "--out", tmp_path / "bold.parquet", "--sentences-out", tmp_path / "s.parquet"
    )
    assert r.exit_code == 0, r.output
    strict = pq.read_table(tmp_path / "strict.parquet").to_pylist()
    bold = pq.read_table(tmp_path / "bold.parquet").to_pylist()
    # BOLD's rule also takes "astronomers" (the term inside a longer word), which the strict rule does not
    plural = [p for p in bold if "astronomers" in p["text"].lower() and not re.search(r"(?i)\bastronomer\b", p["text"])]
    assert plural and not [p for p in strict if p["reference"] in {q["reference"] for q in plural}]
    assert all(p["text"].lower().count("astronomer") for p in bold if len(p["reference"].split(" ")) > len(p["text"].split(" ")))
    manifest = json.loads((tmp_path / "bold.parquet.manifest.json").read_text())
    assert manifest["config"]["rule"]["preset"] == "bold" and manifest["config"]["rule"]["match"] == "substring"
    # the sentences table rebuilt with the same preset gives the same prompts
    r = run("prompts", "build", tmp_path / "s.parquet", "--out", tmp_path / "b2.parquet", "--preset", "bold")
    assert r.exit_code == 0, r.output
    assert pq.read_table(tmp_path / "b2.parquet").column("text").to_pylist() == [p["text"] for p in bold]
    r = run("prompts", "rebuild", tmp_path / "bold.parquet", "--out", tmp_path / "b3.parquet", "--preset", "boldest")
    assert r.exit_code == 1 and r.output.startswith("error[E021]") and "'boldest'" in r.output
