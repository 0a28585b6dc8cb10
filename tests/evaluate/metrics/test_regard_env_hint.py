"""The demo's hint `set BIASKIT_REGARD_MODEL to a local sasha/regardv3 folder` works for
`biaskit score` too (the regard model parameter left at its default takes the variable)."""

import json

import pyarrow as pa
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.evaluate.metrics import make_metric
from biaskit.io import read_table, write_table

from .conftest import SENTENCES


def test_biaskit_score_honours_biaskit_regard_model(regard_model, tmp_path, monkeypatch):
    t = tmp_path / "gens.parquet"
    write_table(pa.table({"prompt_id": [f"p{i}" for i in range(len(SENTENCES))], "text": SENTENCES, "continuation": SENTENCES}), t)
    monkeypatch.setenv("BIASKIT_REGARD_MODEL", regard_model)
    out = tmp_path / "scores.parquet"
    r = CliRunner().invoke(app, ["score", str(t), "-m", "regard", "--out", str(out)])
    assert r.exit_code == 0, r.output
    got = read_table(out)
    # the same labels as the metric run with the folder passed explicitly
    ref = make_metric("regard", "continuation", {"model": regard_model})
    ref.setup()
    want = ref.score({"continuation": SENTENCES})
    assert got.column("regard_label").to_pylist() == want["regard_label"]
    assert all(e is None for e in got.column("regard_error").to_pylist())
    man = json.loads(out.with_name(out.name + ".manifest.json").read_text())
    desc = next(m for m in man["metrics"] if m["name"] == "regard")
    assert desc["config"]["model"] == regard_model and desc["info"]["model_from"] == "BIASKIT_REGARD_MODEL"
    # an explicit parameter still wins over the variable
    assert make_metric("regard", "continuation", {"model": "sasha/regardv3"}).config["model"] == "sasha/regardv3"
