"""`biaskit demo` end to end on bundled data (quick workload), through the CLI as a user runs it."""

import json

import pytest

from biaskit.demo import STAGES


@pytest.fixture(scope="module")
def demo_run(quick_demo):
    out, ctx = quick_demo
    return out, ctx.info["cli_output"]


def test_demo_writes_run_manifest_with_every_stage(demo_run):
    out, output = demo_run
    man = json.loads((out / "manifest.json").read_text())
    assert man["seed"] == 3 and man["command"] == "biaskit demo"
    assert list(dict.fromkeys(s for s, _ in man["summary"])) == list(STAGES)  # every stage reported, in order
    assert set(man["timings_s"]) == set(STAGES)
    for name, rel in man["tables"].items():
        assert (out / rel).exists(), name
    assert "demo run written to" in output


def test_demo_report_is_written(demo_run):
    out, _ = demo_run
    html = (out / "report" / "report.html").read_text()
    assert html.startswith("<!doctype html") or html.lower().startswith("<!doctype html")


def test_demo_likelihood_bias_has_testable_descriptor_pairs(demo_run):
    """The demo's HolisticBias subset is built so that Mann-Whitney can separate descriptors (3 per axis -> 3 pairs)."""
    import pandas as pd

    out, _ = demo_run
    by_axis = pd.read_csv(out / "report" / "tables" / "likelihood_bias_by_axis.csv")
    testable = by_axis[by_axis["axis"].isin(["age", "religion"])]
    assert sorted(testable["axis"]) == ["age", "religion"]
    assert list(testable["n_pairs"]) == [3, 3] and list(testable["n_untestable"]) == [0, 0]


def test_schema_help_example_checks_a_table_the_demo_writes(demo_run):
    """`biaskit schema --help` named runs/demo/prompts.parquet, which the demo never writes."""
    import re

    from typer.testing import CliRunner

    from biaskit.cli import app
    from biaskit.cli.core import schema

    out, _ = demo_run
    doc = schema.__doc__
    examples = re.findall(r"biaskit schema (\S+) --check runs/demo/(\S+)", doc)
    assert examples
    for stage, name in examples:
        r = CliRunner().invoke(app, ["schema", stage, "--check", str(out / name)])
        assert r.exit_code == 0, r.output


def test_demo_counterfactual_stage_feeds_the_report_section(demo_run):
    import pandas as pd

    out, _ = demo_run
    assert "counterfactual" in json.loads((out / "manifest.json").read_text())["info"]["report"]["sections"]
    summary = pd.read_csv(out / "report" / "tables" / "counterfactual_summary.csv")
    pairs = pd.read_parquet(out / "counterfactual_pairs.parquet")
    assert set(summary["metric"]) >= {"vader_diff", "vader_w1", "vader_share_diff", "rouge_l"}
    assert pairs["pair_id"].nunique() == 3 and set(pairs["variant"]) >= {"original"}
