"""A metric of another package: one file plus a ``biaskit.metrics`` entry point (docs/architecture.md).

The plugin is a real installed distribution as far as ``importlib.metadata`` can tell: a module and a
``.dist-info`` folder (METADATA + entry_points.txt) in a folder put on ``sys.path`` (in this process) or
``PYTHONPATH`` (for the CLI). Its one file declares its labels once; scoring, annotation, the report and the
plots pick it up from there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PLUGIN = '''
"""Stance: a toy rule-based metric of a third-party package (the worked example of docs/architecture.md)."""

import pyarrow as pa

from biaskit.evaluate.metrics.base import LabelOutput, Metric


class StanceMetric(Metric):
    name = "stance"
    description = "agree / disagree / unrelated from the words yes and no"
    label_outputs = (LabelOutput("stance", "stance_label", ("agree", "disagree", "unrelated"), score="stance_score",
                                 higher_is_better=True, ordinal=("disagree", "unrelated", "agree"), task="stance",
                                 display="Stance", colours={"agree": "#2b9348", "disagree": "#d62828", "unrelated": "#adb5bd"},
                                 report_label="Stance", test_label="agree", noun="stance",
                                 question="Does the text agree with the claim?"),)

    def fields(self):
        return {"score": pa.float64(), "label": pa.string()}

    def _score_texts(self, texts, batch, rows):
        scores = [float(t.lower().split().count("yes") - t.lower().split().count("no")) for t in texts]
        labels = ["agree" if s > 0 else "disagree" if s < 0 else "unrelated" for s in scores]
        return {"score": scores, "label": labels}, [None] * len(texts)
'''


def make_plugin(root: Path, name: str = "stance", target: str = "biaskit_stance:StanceMetric") -> Path:
    """Write the plugin distribution into ``root`` (the folder to put on sys.path)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "biaskit_stance.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    info = root / "biaskit_stance-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: biaskit-stance\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[biaskit.metrics]\n{name} = {target}\n", encoding="utf-8")
    return root


@pytest.fixture
def clean_registry(monkeypatch):
    """The plugin's registration lasts for one test only (the built-ins are registered before the copy)."""
    import biaskit.evaluate.metrics.builtin  # noqa: F401
    from biaskit.registry import metrics as reg

    for attr in ("_entries", "_loaded", "_help"):
        monkeypatch.setattr(reg, attr, dict(getattr(reg, attr)))
    return reg


def test_a_plugin_metric_is_scored_annotated_and_coloured_from_its_one_file(tmp_path, monkeypatch, clean_registry):
    from biaskit.annotate.metriccols import resolve
    from biaskit.annotate.tasks import get_task_type
    from biaskit.evaluate.metrics import score_table
    from biaskit.evaluate.metrics.builtin import load_plugins
    from biaskit.evaluate.metrics.catalog import label_outputs
    from biaskit.evaluate.report.plots import label_colours

    monkeypatch.syspath_prepend(str(make_plugin(tmp_path / "site")))
    assert load_plugins() == ["stance"]
    assert load_plugins() == []  # loading twice adds nothing and is no error
    assert "stance" in clean_registry.names() and clean_registry.help("stance") == "plugin from biaskit-stance"
    assert list(label_outputs())[-1] == "stance"  # after the built-ins

    out = score_table({"continuation": ["yes yes no", "no", "maybe", None]}, "stance")
    assert out.column("stance_label").to_pylist() == ["agree", "disagree", "unrelated", None]
    assert out.column("stance_score").to_pylist() == [1.0, -1.0, 0.0, None]

    mc = resolve("stance", out.column_names, need_label=True, need_score=True)
    assert (mc.label, mc.score) == ("stance_label", "stance_score")
    task = get_task_type("stance")
    assert task.labels == ("agree", "disagree", "unrelated") and task.ordinal == ("disagree", "unrelated", "agree")
    assert task.default_metric == "stance" and task.question == "Does the text agree with the claim?"
    assert label_colours()["agree"] == "#2b9348"


def test_a_plugin_cannot_take_a_built_in_metric_name(tmp_path, monkeypatch, clean_registry):
    from biaskit.errors import BiaskitError
    from biaskit.evaluate.metrics.builtin import load_plugins

    monkeypatch.syspath_prepend(str(make_plugin(tmp_path / "site", name="vader")))
    with pytest.raises(BiaskitError) as e:
        load_plugins()
    assert e.value.code == "E240" and "biaskit-stance" in str(e.value) and "biaskit_stance:StanceMetric" in str(e.value)
    assert clean_registry.target("vader") == "biaskit.evaluate.metrics.vader:VaderMetric"


def test_the_cli_lists_scores_and_reports_a_plugin_metric(tmp_path):
    """A fresh process with the plugin on PYTHONPATH: `metrics list`, `score` and `report` know the metric."""
    site = make_plugin(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}
    cli = [sys.executable, "-c", "from biaskit.cli import main; main()"]
    listed = subprocess.run([*cli, "metrics", "list"], env=env, capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0, listed.stderr
    assert "stance" in listed.stdout

    import pandas as pd

    texts = ["yes", "yes", "no", "maybe"] * 2
    pd.DataFrame(
        {"prompt_id": [f"p{i}" for i in range(8)], "group": ["a"] * 4 + ["b"] * 4, "continuation": texts[:4] + ["no", "no", "yes", "maybe"]}
    ).to_parquet(tmp_path / "gens.parquet")
    run = tmp_path / "run"
    run.mkdir()
    r = subprocess.run(
        [*cli, "score", str(tmp_path / "gens.parquet"), "--metrics", "stance", "--out", str(run / "scores.parquet")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    r = subprocess.run(
        [*cli, "report", str(run), "--out", str(tmp_path / "rep"), "--n-boot", "10"], env=env, capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, r.stderr
    shares = pd.read_csv(tmp_path / "rep" / "tables" / "stance_proportions.csv")
    # group a: yes, yes, no, maybe -> agree 2/4, disagree 1/4, unrelated 1/4; group b: no, no, yes, maybe -> 1/4, 2/4, 1/4
    assert shares[["group", "prop_agree", "prop_disagree", "prop_unrelated"]].values.tolist() == [["a", 0.5, 0.25, 0.25], ["b", 0.25, 0.5, 0.25]]
    html = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    assert "<h2 id='stance'>Stance</h2>" in html
    json.loads((run / "scores.parquet.manifest.json").read_text(encoding="utf-8"))  # written like any score run
