"""A report section of another package: one function plus a ``biaskit.report_sections`` entry point
(docs/architecture.md). ``biaskit report`` adds it after the shipped sections; a label a shipped section (or another
plugin) has already is E240 naming both packages."""

from __future__ import annotations

import pandas as pd
import pytest
from tests.plugins.conftest import doc_example, plant
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.errors import BiaskitError
from biaskit.evaluate.report import model

SECTION, ENTRY_POINTS = doc_example("#### Worked example: a report section in its own package")


def plant_section(root, label="Word count"):
    (target,) = ENTRY_POINTS["biaskit.report_sections"].values()
    return plant(root, "biaskit-wordcount", {"biaskit_wordcount.py": SECTION}, {"biaskit.report_sections": {label: target}})


def test_a_planted_section_is_added_to_the_report_through_the_cli(tmp_path, monkeypatch, isolated_registries):
    monkeypatch.syspath_prepend(str(plant_section(tmp_path / "site")))
    run = tmp_path / "run"
    run.mkdir()
    pd.DataFrame(
        {"prompt_id": ["p0", "p1", "p2", "p3"], "group": ["a", "a", "b", "b"], "continuation": ["one two", "one two three", "x", "x y"]}
    ).to_parquet(run / "scores.parquet")
    assert list(ENTRY_POINTS["biaskit.report_sections"]) == ["Word count"]
    r = CliRunner().invoke(app, ["report", str(run), "--out", str(tmp_path / "rep"), "--n-boot", "10"])
    assert r.exit_code == 0, r.output
    assert model.SECTIONS[-1][0] == "Word count" and model.SECTION_ORIGIN["Word count"] == "biaskit-wordcount"  # after the shipped ones
    table = pd.read_csv(tmp_path / "rep" / "tables" / "word_count.csv")
    # a: 2 and 3 words -> 2.5; b: 1 and 2 words -> 1.5
    assert table.values.tolist() == [["a", 2, 2.5], ["b", 2, 1.5]]
    html = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    assert "<h2 id='word_count'>Word count</h2>" in html


def test_a_planted_section_cannot_take_a_shipped_sections_label(tmp_path, monkeypatch, isolated_registries):
    monkeypatch.syspath_prepend(str(plant_section(tmp_path / "site", label="BBQ")))
    with pytest.raises(BiaskitError) as e:
        model.load_section_plugins()
    msg = str(e.value)
    assert e.value.code == "E240" and "'BBQ' (biaskit-wordcount) is registered already by biaskit" in msg
    assert 'biaskit-wordcount\'s [project.entry-points."biaskit.report_sections"]' in msg
    assert [lab for lab, _ in model.SECTIONS].count("BBQ") == 1


def test_a_planted_section_that_cannot_be_imported_is_e241_naming_its_package(tmp_path, monkeypatch, isolated_registries):
    monkeypatch.syspath_prepend(
        str(
            plant(
                tmp_path / "site",
                "biaskit-broken",
                {"biaskit_broken.py": "X = 1\n"},
                {"biaskit.report_sections": {"Broken": "biaskit_broken:missing"}},
            )
        )
    )
    with pytest.raises(BiaskitError) as e:
        model.load_section_plugins()
    assert e.value.code == "E241" and "'Broken' of biaskit-broken cannot be imported" in str(e.value)
    assert "Broken" not in [lab for lab, _ in model.SECTIONS]
