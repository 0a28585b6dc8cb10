"""Names that come from data stay inside --out. bold export domains, report figure names,
hub staging config names, hub push and symbolic links."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.datasets.push import local_files, push_folder
from biaskit.datasets.stage import MAX_NAME_LEN, TableSpec, stage_tables
from biaskit.datasets.validate import load_config
from biaskit.errors import BiaskitError
from biaskit.io import write_table


def _bold_prompts(domains):
    n = len(domains)
    return pa.table(
        {
            "prompt_id": [f"b{i}" for i in range(n)],
            "text": [f"Person {i} is a " for i in range(n)],
            "source": ["bold"] * n,
            "language": ["en"] * n,
            "domain": list(domains),
            "group": ["g"] * n,
            "page_title": [f"Person {i}" for i in range(n)],
        }
    )


@pytest.mark.parametrize("domain", ["../../escaped", "ABSOLUTE", "a/b", "..", ".hidden", "x" * 300, "tab\there", "C:evil", "a\\b"])
def test_bold_export_refuses_a_domain_that_is_not_a_file_name(tmp_path, domain):
    from biaskit.scrape.bold import export_bold

    out = tmp_path / "deep" / "export"
    if domain == "ABSOLUTE":
        domain = str(tmp_path / "abs_domain")
    with pytest.raises(BiaskitError) as e:
        export_bold(_bold_prompts(["gender", domain]), out, layout="github")
    assert e.value.code == "E141" and "--layout hub" in str(e.value)
    # nothing anywhere outside (or inside) the output folder
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == []


def test_bold_export_cli_one_line_and_hub_layout_keeps_the_domain(tmp_path):
    src = tmp_path / "p.parquet"
    write_table(_bold_prompts(["gender", "../../escaped"]), src)
    r = CliRunner().invoke(app, ["bold", "export", str(src), "--out", str(tmp_path / "exp"), "--layout", "github"])
    assert r.exit_code == 1 and r.output.strip().startswith("error[E141]") and len(r.output.strip().splitlines()) == 1
    assert not (tmp_path.parent / "escaped_prompt.json").exists()
    # the hub layout has no file per domain: the value stays data
    r = CliRunner().invoke(app, ["bold", "export", str(src), "--out", str(tmp_path / "exp"), "--layout", "hub"])
    assert r.exit_code == 0, r.output
    assert '"domain": "../../escaped"' in (tmp_path / "exp" / "bold.jsonl").read_text()


def test_report_figures_of_domains_that_slug_alike_do_not_overwrite_each_other(tmp_path):
    from biaskit.evaluate.report import build_report

    rows = []
    for dom, labs in (("Gender X", ["positive", "positive", "negative", "neutral"]), ("gender-x", ["negative", "negative", "negative", "neutral"])):
        for i, lab in enumerate(labs):
            rows.append(
                {
                    "prompt_id": f"{dom}{i}",
                    "text": "t",
                    "domain": dom,
                    "group": "a" if i % 2 else "b",
                    "model": "m",
                    "kind": "generate",
                    "sample_index": 0,
                    "continuation": "c",
                    "vader_label": lab,
                    "vader_compound": 0.0,
                }
            )
    run = tmp_path / "run"
    run.mkdir()
    pd.DataFrame(rows).to_parquet(run / "scores.parquet")
    res = build_report(run, tmp_path / "rep", n_boot=20)
    figs = sorted(p.name for p in res.figures if p.name.startswith("sentiment_gender_x"))
    assert figs == ["sentiment_gender_x.png", "sentiment_gender_x_2.png"]
    a, b = ((tmp_path / "rep" / "figures" / f).read_bytes() for f in figs)
    assert a != b  # two different charts, both kept
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "domain Gender X" in html and "domain gender-x" in html


PROMPTS = pa.table(
    {
        "prompt_id": ["a", "b", "c", "d", "e", "f"],
        "text": ["t1 ", "t2 ", "t3 ", "t4 ", "t5 ", "t6 "],
        "source": ["bold"] * 6,
        "language": ["en"] * 6,
        "domain": ["Česky", "Cesky", "../../x/y", "d" * 200, "日本語", "a b/c\\d"],
    }
)


def test_hub_config_names_from_data_are_safe_distinct_and_load(tmp_path):
    out = tmp_path / "hub"
    res = stage_tables([TableSpec("bold", PROMPTS, "prompts", config_by="domain")], out)
    names = [c.name for c in res.configs]
    assert len(set(names)) == 6  # every value its own config
    assert names[0] == "bold-Cesky" and names[1].startswith("bold-Cesky-") and len(names[1]) == len("bold-Cesky-") + 8
    assert names[2] == "bold-x_y" and names[5] == "bold-a_b_c_d"
    assert len(names[3]) <= len("bold-") + MAX_NAME_LEN and names[4].startswith("bold-config-")
    for c in res.configs:
        assert all(ch.isascii() and (ch.isalnum() or ch in "_.-") for ch in c.name)
        for split in c.splits.values():
            for f in split.files:
                assert (out / f).resolve().is_relative_to(out.resolve())
    # each config loads with the row of its own value
    got = {c.name: load_config(out, c.name)["train"]["prompt_id"] for c in res.configs}
    assert [got[n] for n in names] == [["a"], ["b"], ["c"], ["d"], ["e"], ["f"]]
    assert not (tmp_path / "x").exists()


def test_hub_push_refuses_a_link_out_of_the_folder(tmp_path):
    out = tmp_path / "hub"
    stage_tables([TableSpec("p", PROMPTS.slice(0, 2), "prompts")], out)
    secret = tmp_path / "outside.txt"
    secret.write_text("private")
    assert [f.path for f in push_folder(out, "org/x", dry_run=True).files]  # fine before the link
    (out / "data" / "p" / "notes.txt").symlink_to(secret)
    with pytest.raises(BiaskitError) as e:
        local_files(out)
    assert e.value.code == "E143" and "outside.txt" in str(e.value)
    r = CliRunner().invoke(app, ["hub", "push", str(out), "--repo-id", "org/x", "--dry-run"])
    assert r.exit_code == 1 and r.output.strip().startswith("error[E143]") and len(r.output.strip().splitlines()) == 1
    # a link to a folder outside is refused too; a link that stays inside is fine
    (out / "data" / "p" / "notes.txt").unlink()
    (out / "data" / "elsewhere").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(BiaskitError, match="E143"):
        push_folder(out, "org/x", dry_run=True)
    (out / "data" / "elsewhere").unlink()
    (out / "card-link.md").symlink_to(out / "README.md")
    assert "card-link.md" in [f.path for f in local_files(out)]
