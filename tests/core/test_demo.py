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
