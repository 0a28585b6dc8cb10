"""Shipped names (`demo`, `bold`, `cs`) and local paths never shadow each other."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.errors import BiaskitError
from biaskit.registry import is_path_spec
from biaskit.scrape.config import load_config, shipped_config_path


def test_is_path_spec():
    assert not is_path_spec("demo") and not is_path_spec("bold") and not is_path_spec("cs")
    assert is_path_spec("./demo") and is_path_spec("runs/demo") and is_path_spec("demo.yaml") and is_path_spec("/abs/demo")


def test_a_local_folder_named_demo_does_not_shadow_the_shipped_config(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo").mkdir()
    (tmp_path / "bold").write_text("not: a config\n")  # a stray file named like the other shipped config
    assert load_config("demo").source == str(shipped_config_path("demo"))
    assert load_config("bold").source == str(shipped_config_path("bold"))
    with pytest.raises(BiaskitError) as e:  # the folder given as a path is a path: a clear error, not the shipped config
        load_config("./demo")
    assert e.value.code == "E021" and "folder" in str(e.value)


def test_demo_out_demo_runs_the_scrape_stage(tmp_path, monkeypatch):
    from biaskit.demo import run_demo

    monkeypatch.chdir(tmp_path)
    ctx = run_demo("demo", quick=True, stages=("scrape",))  # failed with E021 "domain config not found" before
    assert ctx.tables["prompts_bold"].is_file() and Path("demo").is_dir()


def test_scrape_config_file_is_always_a_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    own = tmp_path / "demo"  # a file literally named like the shipped config, without a suffix
    own.write_text(shipped_config_path("demo").read_text(encoding="utf-8"), encoding="utf-8")
    dump = Path(__file__).resolve().parents[2] / "src/biaskit/data/wiki"
    dumpfile = next(dump.glob("*.xml.bz2"))
    r = CliRunner().invoke(
        app, ["--quiet", "scrape", "dump", str(dumpfile), "--config-file", "demo", "--max-pages", "1", "--out", str(tmp_path / "p.parquet")]
    )
    assert r.exit_code == 0, r.output
    from biaskit.io import read_manifest

    assert str(own.resolve()) in str(read_manifest(tmp_path / "p.parquet"))


def test_shipped_template_language_not_shadowed_by_local_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cs").mkdir()
    r = CliRunner().invoke(app, ["templates", "show", "cs", "--id", "work-02"])
    assert r.exit_code == 0, r.output
    assert "work-02" in r.output
