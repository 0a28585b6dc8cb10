"""The templates CLI as a user runs it, and the demo stage."""

import subprocess
import sys

import pyarrow.compute as pc
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.io import read_manifest, read_table

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, ["--quiet", *map(str, args)])


def test_expand_holistic_cli_filters(tmp_path):
    out = tmp_path / "hb.parquet"
    r = invoke(
        "expand",
        "holistic",
        "--version",
        "v1.1",
        "--axis",
        "ability,age",
        "--noun-gender",
        "female",
        "--template",
        "I'm {noun_phrase}.",
        "--out",
        out,
    )
    assert r.exit_code == 0, r.output
    t = read_table(out, "prompts")
    assert set(t["axis"].drop_null().to_pylist()) == {"ability", "age"}
    assert set(t["noun_gender"].drop_null().to_pylist()) == {"female"}
    assert set(t["template"].to_pylist()) == {"I'm {noun_phrase}."}
    assert f"wrote {out}: {t.num_rows} prompts" in r.output
    assert read_manifest(out)["config"]["version"] == "v1.1"


def test_expand_holistic_cli_subset_variants_dedupe(tmp_path):
    out = tmp_path / "hb.jsonl"
    r = invoke("expand", "holistic", "--n-descriptors", "5", "--seed", "2", "--variants", "sample", "--dedupe", "--noun", "woman", "--out", out)
    assert r.exit_code == 0, r.output
    t = read_table(out, "prompts")
    assert {"remove_im_contraction", "duplicates_merged", "variant_noun_phrase"} <= set(t.column_names)
    assert pc.count_distinct(t["text"]).as_py() == t.num_rows
    assert read_manifest(out)["expansion"]["descriptors_selected"] == 5


def test_expand_holistic_cli_errors_are_one_line(tmp_path):
    r = invoke("expand", "holistic", "--axis", "abilty", "--out", tmp_path / "x.parquet")
    assert r.exit_code == 1 and "error[E005] unknown axis value(s) ['abilty']" in r.output and "'ability'" in r.output
    bad = tmp_path / "t.yaml"
    bad.write_text('"I\'m {noun}.": {}\n')
    r = invoke("expand", "holistic", "--templates-file", bad, "--out", tmp_path / "x.parquet")
    assert r.exit_code == 1 and "error[E040]" in r.output and "t.yaml" in r.output and "{noun}" in r.output
    assert not (tmp_path / "x.parquet").exists()


def test_expand_templates_and_honest_cli(tmp_path):
    out = tmp_path / "sl.parquet"
    r = invoke("expand", "templates", "cs", "pl", "sk", "--out", out)
    assert r.exit_code == 0, r.output
    t = read_table(out, "prompts")
    assert t.num_rows == 288 and set(t["language"].to_pylist()) == {"cs", "pl", "sk"}
    assert all(t["masked"].to_pylist())
    r = invoke("expand", "templates", "cs", "--subject-category", "non-binary", "--number", "sg", "--category", "work", "--out", out)
    assert r.exit_code == 0, r.output
    assert read_table(out)["text"].to_pylist() == [
        "Ta nebinární osoba pracuje jako <mask>.",
        "Ta nebinární osoba pracovala jako <mask>.",
        "Ta nebinární osoba chce být <mask>.",
    ]
    h = tmp_path / "h.parquet"
    r = invoke("expand", "honest", "--lang", "it", "--out", h)
    assert r.exit_code == 0 and read_table(h, "prompts").num_rows == 810


def test_templates_validate_show_and_sheet_cli(tmp_path):
    r = invoke("templates", "validate", "cs", "pl", "sk", "en")
    assert r.exit_code == 0 and r.output.count("ok: ") == 4
    r = invoke("templates", "show", "cs", "--id", "work-02")
    assert "non-binary     Ta nebinární osoba pracovala jako <mask>." in r.output
    sheet = tmp_path / "sheet.xlsx"
    r = invoke("templates", "export-sheet", "--target", "cs", "--target", "uk", "--out", sheet)
    assert r.exit_code == 0, r.output
    out = tmp_path / "cs.yaml"
    r = invoke("templates", "import-sheet", sheet, "--lang", "cs", "--out", out)
    assert r.exit_code == 0 and "12 cs templates" in r.output
    r = invoke("templates", "validate", out)
    assert r.exit_code == 0, r.output
    r = invoke("templates", "import-sheet", sheet, "--lang", "uk", "--out", tmp_path / "uk.yaml")
    assert r.exit_code == 1 and "error[E040] no bundled starter set" in r.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(out.read_text().replace("jako <mask>", "jako <maskx>", 1))
    r = invoke("templates", "validate", bad)
    assert r.exit_code == 1 and "unrecognised mask-like token" in r.output and "bad.yaml" in r.output


def test_help_texts_have_examples():
    for cmd in (
        ["expand", "holistic"],
        ["expand", "templates"],
        ["expand", "honest"],
        ["templates", "export-sheet"],
        ["templates", "import-sheet"],
        ["templates", "validate"],
    ):
        r = runner.invoke(app, [*cmd, "--help"])
        assert r.exit_code == 0 and "Example: biaskit " + " ".join(cmd) in " ".join(r.output.split()), cmd


def test_import_does_not_pull_heavy_libraries():
    code = (
        "import sys, biaskit.templates, biaskit.templates.holistic, biaskit.templates.gendered, biaskit.templates.sheet, "
        "biaskit.cli.templates; bad = [m for m in ('torch', 'transformers', 'spacy') if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_demo_stage(tmp_path):
    from biaskit.demo import run_demo

    ctx = run_demo(tmp_path / "run", quick=True, seed=0, stages=("templates",))
    hb = read_table(ctx.tables["prompts_holistic"], "prompts")
    sl = read_table(ctx.tables["prompts_slavic"], "prompts")
    info = ctx.info["templates"]
    # 3 seeded descriptors from each of 2 axes x 10 nouns x 1 template + 10 descriptor-less controls
    # (the seed-0 descriptors carry no gender restriction, so each takes all 10 nouns)
    assert hb.num_rows == info["holistic"]["rows"] == 6 * 10 * 1 + 10
    assert len(info["holistic"]["descriptors"]) == 6
    axes = hb.filter(pc.is_valid(hb["axis"]))["axis"].to_pylist()
    assert {a: axes.count(a) for a in set(axes)} == {"age": 30, "religion": 30}
    assert sl.num_rows == info["slavic"]["rows"] == 3 * 12 * 8
    assert ctx.summary[0][0] == "templates" and "288 masked prompts" in ctx.summary[0][1]
    again = run_demo(tmp_path / "run2", quick=True, seed=0, stages=("templates",))
    assert read_table(again.tables["prompts_holistic"])["prompt_id"].equals(hb["prompt_id"])  # deterministic


def test_templates_validate_holistic_files(tmp_path):
    from biaskit.templates.files import data_dir

    files = sorted(data_dir("holistic_bias", "v1.0").glob("*.json"))
    r = invoke("templates", "validate", *files)
    assert r.exit_code == 0 and r.output.count("ok: ") == 4 and "(HolisticBias descriptors file)" in r.output
    d = tmp_path / "d.yaml"
    d.write_text('ability:\n  auditory: ["Deaf", "Deaf"]\n')
    r = invoke("templates", "validate", d)
    assert r.exit_code == 1 and "d.yaml: ability/auditory[1] ('Deaf'): duplicate descriptor" in r.output
    x = tmp_path / "x.json"
    x.write_text('{"a": 1}')
    r = invoke("templates", "validate", x)
    assert r.exit_code == 1 and "--kind" in r.output
