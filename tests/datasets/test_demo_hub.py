"""The demo's hub stage: the run's tables staged as a Hub-ready folder that loads back into the same tables."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from biaskit.datasets.card import parse_card
from biaskit.datasets.features import decode
from biaskit.datasets.stage import _no_null_types
from biaskit.datasets.validate import load_config
from biaskit.demo import DemoContext, stage_hub
from biaskit.io import read_table, write_table
from biaskit.manifest import new_manifest
from biaskit.schema import conform

TABLES = {
    "prompts_bold": (
        "prompts",
        pa.table(
            {
                "prompt_id": ["b1", "b2"],
                "text": ["An astronomer is a scientist in ", "A nurse is a "],
                "source": ["bold", "bold"],
                "language": ["en", "en"],
                "domain": ["profession"] * 2,
                "page_title": ["Astronomer", "Nurse"],
                "page_id": [1234, 555],
                "revision_id": [1161378234, 99],
            }
        ),
    ),
    "prompts_slavic": (
        "prompts",
        pa.table({"prompt_id": ["s1"], "text": ["Ten muž pracuje jako <mask>."], "source": ["templates"], "language": ["cs"], "masked": [True]}),
    ),
    "generations": (
        "generations",
        pa.table(
            {
                "prompt_id": ["b1", "b2"],
                "text": ["An astronomer is a scientist in ", "A nurse is a "],
                "sample_index": [0, 0],
                "model": ["tiny-gpt", "tiny-gpt"],
                "kind": ["generate", "generate"],
                "continuation": ["the field.", "nurse."],
                "generation_config": ['{"max_new_tokens": 20}'] * 2,
                "seed": [0, 0],
            }
        ),
    ),
    "scores": (
        "scores",
        pa.table(
            {
                "prompt_id": ["b1", "b2"],
                "continuation": ["the field.", "nurse."],
                "vader_compound": [0.0, 0.2],
                "vader_label": ["neutral", "positive"],
                "vader_error": [None, None],
            }
        ),
    ),
    "annotations": (
        "annotations",
        pa.table(
            {"sample_id": ["x1", "x1", "x2"], "round": ["r2", "r1", "r1"], "annotator": ["a", "b", "a"], "label": ["positive", "neutral", "negative"]}
        ),
    ),
    "agreement": ("agreement", pa.table({"round": ["r1"], "measure": ["fleiss_kappa"], "estimate": [0.61], "n_items": [2]})),
}


def _split_equal(folder: Path, name: str, original: pa.Table, split_by: str | None) -> None:
    dd = load_config(folder, name)
    if split_by is None:
        assert list(dd) == ["train"]
        assert decode(dd["train"]).equals(original), name
        return
    for value in original.column(split_by).unique().to_pylist():
        want = original.filter(pc.equal(original.column(split_by), value))
        assert decode(dd[value]).equals(want), (name, value)


def test_demo_stage_stages_run_tables_that_load_back_identically(tmp_path):
    ctx = DemoContext(run_dir=tmp_path, seed=3, quick=True)
    for name, (stage, table) in TABLES.items():
        p = tmp_path / f"{name}.parquet"
        write_table(table, p, stage=stage, manifest=new_manifest(f"demo {name}", stage=stage, seed=3))
        ctx.add(name, p)
    ctx.info["generate"] = {"model": "tiny-gpt", "max_new_tokens": 20}
    ctx.note("score", "regard skipped: classifier not available offline")
    stage_hub.run(ctx)
    folder = ctx.tables["hub_dir"]
    assert folder == tmp_path / "hub"
    for name, (stage, _) in TABLES.items():
        original = conform(read_table(tmp_path / f"{name}.parquet"), stage)
        _split_equal(folder, name, original, stage_hub.TABLES[name])
    card, body = parse_card((folder / "README.md").read_text(encoding="utf-8"))
    assert [c["config_name"] for c in card["configs"]] == list(TABLES)
    assert card["language"] == ["cs", "en"] and card["license"] == "cc-by-sa-4.0"
    assert "fill-mask" in card["task_categories"]
    assert card["pretty_name"] == "biaskit demo run (seed 3)"
    # run facts and stage notes from ctx, and the agreement figure, are in the body
    assert '"max_new_tokens": 20' in body and "regard skipped" in body
    assert "| r1 | fleiss_kappa |  | 0.61 | 2 |  |" in body
    assert ctx.info["hub"]["configs"]["annotations"] == {"r2": 1, "r1": 2}
    assert ctx.summary[-1][0] == "hub" and "staged 6 configs (11 rows" in ctx.summary[-1][1]


def test_demo_stage_without_tables_says_so(tmp_path):
    ctx = DemoContext(run_dir=tmp_path)
    stage_hub.run(ctx)
    assert ctx.summary == [("hub", "no tables to stage (earlier stages produced none)")]
    assert not (tmp_path / "hub").exists()


def _check_demo_run(tmp_path, stages):
    from biaskit.demo import run_demo

    _check_demo_ctx(run_demo(tmp_path / "run", quick=True, stages=stages))


def _check_demo_ctx(ctx):
    staged = [n for n in stage_hub.TABLES if n in ctx.tables and ctx.tables[n].exists() and read_table(ctx.tables[n]).num_rows]
    if not staged:  # earlier demo stages not built yet: the stage must say so and stage nothing
        assert ("hub", "no tables to stage (earlier stages produced none)") in ctx.summary
        return
    folder = ctx.tables["hub_dir"]
    card, _ = parse_card((folder / "README.md").read_text(encoding="utf-8"))
    assert [c["config_name"] for c in card["configs"]] == staged
    for name in staged:
        t = read_table(ctx.tables[name])
        stage = next(c for c in json.loads((folder / "biaskit_manifest.json").read_text())["configs"] if c["name"] == name)["stage"]
        # staged as the card says: a column of Arrow type null (all values missing) is staged as string nulls
        original = _no_null_types(conform(t, stage) if stage else t)
        split_by = stage_hub.TABLES[name] if stage_hub.TABLES[name] in t.column_names else None
        _split_equal(folder, name, original, split_by)


def test_quick_demo_prompt_stages_stage_and_load_back(tmp_path):
    # the demo's own scrape + templates stages (real bundled data), then the hub stage
    _check_demo_run(tmp_path, ("scrape", "templates", "hub"))


def test_full_quick_demo_run_folder_loads_back_into_the_same_tables(quick_demo):
    _, ctx = quick_demo
    assert {"prompts_bold", "prompts_holistic", "generations", "likelihoods", "scores", "samples", "hub_dir"} <= set(ctx.tables)
    _check_demo_ctx(ctx)
