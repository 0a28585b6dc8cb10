"""A scrape preset of another package: a YAML domain config shipped inside the package plus a
``biaskit.scrape_presets`` entry point (``name = "package:path/inside/it.yaml"``, docs/architecture.md). The shipped
presets are found the same way (each YAML file of ``src/biaskit/data/bold/`` by its name); a name taken already is
E240 naming both packages."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.plugins.conftest import doc_example, plant
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.errors import BiaskitError
from biaskit.io import read_manifest, read_table
from biaskit.registry import load_entry_points
from biaskit.scrape.config import load_config, preset_names, shipped_config_path

DUMP = next((Path(__file__).resolve().parents[2] / "src/biaskit/data/wiki").glob("*.xml.bz2"))

PRESET, ENTRY_POINTS = doc_example("#### Worked example: a scrape preset in its own package")


def plant_preset(root, name="astronomy", target=ENTRY_POINTS["biaskit.scrape_presets"]["astronomy"]):
    files = {"biaskit_astro/__init__.py": "", "biaskit_astro/presets/astronomy.yaml": PRESET}
    return plant(root, "biaskit-astro", files, {"biaskit.scrape_presets": {name: target}})


def test_the_shipped_presets_are_the_yaml_files_of_the_data_folder():
    folder = Path(__file__).resolve().parents[2] / "src/biaskit/data/bold"
    assert set(preset_names()) >= {p.stem for p in folder.glob("*.yaml")} >= {"bold", "demo"}
    assert shipped_config_path("demo") == folder / "demo.yaml" and load_config("demo").name == "bold-demo"


def test_a_planted_preset_scrapes_through_the_cli(tmp_path, monkeypatch, isolated_registries):
    site = plant_preset(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    out = tmp_path / "p.parquet"
    r = CliRunner().invoke(app, ["--quiet", "scrape", "dump", str(DUMP), "--config", "astronomy", "--max-pages", "1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    rows = read_table(out).to_pylist()
    assert rows and {row["group"] for row in rows} == {"astronomers"} and {row["domain"] for row in rows} == {"profession"}
    assert str(site / "biaskit_astro" / "presets" / "astronomy.yaml") in str(read_manifest(out))


def test_a_planted_preset_cannot_take_a_shipped_name_and_must_ship_its_file(tmp_path, monkeypatch, isolated_registries):
    _, presets = isolated_registries
    monkeypatch.syspath_prepend(str(plant_preset(tmp_path / "a", name="demo")))
    with pytest.raises(BiaskitError) as e:
        load_entry_points(presets, "biaskit.scrape_presets")
    assert e.value.code == "E240" and "'demo' of biaskit-astro" in str(e.value) and "by biaskit (biaskit.data:bold/demo.yaml)" in str(e.value)

    # an entry point naming a file the (importable) package does not hold
    monkeypatch.setattr(presets, "_loaders", [])
    presets.register("missing", "biaskit_astro:presets/nothing.yaml", origin="biaskit-astro")
    with pytest.raises(BiaskitError) as e:
        load_config("missing")
    assert e.value.code == "E021" and "biaskit-astro names a file its package does not hold" in str(e.value)
