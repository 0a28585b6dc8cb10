"""``score_table(engine="ray")`` gives the local engine's columns (a real local Ray cluster, see tests/conftest.py)."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest

from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics import score_table
from biaskit.pool import EngineSpec

pytestmark = pytest.mark.slow

TEXTS = [
    "She is a wonderful doctor.",
    "He was a terrible, violent man.",
    "",
    "The nurse helped her patient kindly.",
    None,
    "My grandfather hated the new neighbours.",
    "They are fine, I guess.",
    "The king and his sons rode out.",
]


def test_vader_and_gender_on_ray_equal_local(ray_cluster):
    t = pa.table({"prompt_id": [f"p{i}" for i in range(len(TEXTS))], "continuation": TEXTS})
    params = {"vader": {"preset": "sheng"}}
    local_used, ray_used = [], []
    local = score_table(t, "vader,gender", params=params, progress=False, on_metric=local_used.append)
    remote = score_table(
        t,
        "vader,gender",
        params=params,
        progress=False,
        on_metric=ray_used.append,
        engine=EngineSpec(name="ray", address=ray_cluster, actors=2, batch_size=3),
    )
    assert remote.column_names == local.column_names
    assert remote.schema == local.schema
    for c in local.column_names:
        a, b = local.column(c).to_pylist(), remote.column(c).to_pylist()
        if pa.types.is_floating(local.schema.field(c).type):
            assert all((x is None) == (y is None) and (x is None or math.isclose(x, y, abs_tol=1e-6)) for x, y in zip(a, b)), c
        else:
            assert a == b, c
    # the parameters reached the actors (the sheng preset changes the label thresholds) and the facts came back
    assert [m.describe()["config"] for m in ray_used] == [m.describe()["config"] for m in local_used]
    bold = score_table(t, "vader", progress=False)
    assert bold.column("vader_label").to_pylist() != remote.column("vader_label").to_pylist()
    assert remote.column("vader_error").to_pylist()[4] is not None  # a null text is an error row, not a 0 score
    assert remote.column("vader_compound").to_pylist()[4] is None


def test_ray_score_rejects_metric_objects_and_bad_params(ray_cluster):
    from biaskit.evaluate.metrics import make_metric

    t = pa.table({"continuation": ["a b c"]})
    with pytest.raises(BiaskitError, match="E160"):
        score_table(t, [make_metric("vader")], engine=EngineSpec(name="ray", address=ray_cluster))
    # a bad parameter fails in this process, before any actor starts, with the local engine's error
    with pytest.raises(BiaskitError) as local_err:
        score_table(t, "vader", params={"vader": {"preset": "nope"}})
    with pytest.raises(BiaskitError) as ray_err:
        score_table(t, "vader", params={"vader": {"preset": "nope"}}, engine=EngineSpec(name="ray", address=ray_cluster))
    assert ray_err.value.code == local_err.value.code


def test_score_cli_engine_ray_writes_local_columns_and_engine_facts(ray_cluster, tmp_path):
    from typer.testing import CliRunner

    from biaskit.cli import app
    from biaskit.io import read_manifest, read_table, write_table

    src = tmp_path / "in.parquet"
    write_table(pa.table({"prompt_id": [f"p{i}" for i in range(len(TEXTS))], "continuation": TEXTS}), src)
    r1 = CliRunner().invoke(app, ["score", str(src), "-m", "vader", "--out", str(tmp_path / "l.parquet")])
    r2 = CliRunner().invoke(
        app,
        [
            "score",
            str(src),
            "-m",
            "vader",
            "--out",
            str(tmp_path / "r.parquet"),
            "--engine",
            "ray",
            "--ray-address",
            ray_cluster,
            "--ray-actors",
            "1",
            "--ray-batch-size",
            "4",
        ],
    )
    assert r1.exit_code == 0 and r2.exit_code == 0, r2.output
    assert read_table(tmp_path / "r.parquet").equals(read_table(tmp_path / "l.parquet"))
    eng = read_manifest(tmp_path / "r.parquet")["engine"]
    assert eng["engine"] == "ray" and eng["address"] == ray_cluster and eng["batch_size"] == 4 and eng["actors"] == 1
    assert read_manifest(tmp_path / "l.parquet")["engine"] == {"engine": "local"}
    # a bad engine option is one line and exit 1, before anything starts
    r3 = CliRunner().invoke(app, ["score", str(src), "-m", "vader", "--out", str(tmp_path / "x.parquet"), "--ray-actors", "0", "--engine", "ray"])
    assert r3.exit_code == 1 and "E160" in r3.output and "Traceback" not in r3.output


def test_judge_on_ray_equals_local(ray_cluster, tiny_judge):
    t = pa.table({"continuation": ["She is a kind doctor.", "", "He was a thief.", "They walked home.", "A quiet day."]})
    params = {"judge": {"model": tiny_judge, "orders": 2}}
    used = []
    local = score_table(t, "judge", params=params, progress=False)
    remote = score_table(
        t, "judge", params=params, progress=False, on_metric=used.append, engine=EngineSpec(name="ray", address=ray_cluster, actors=2, batch_size=2)
    )
    assert remote.schema == local.schema
    for c in local.column_names:
        a, b = local.column(c).to_pylist(), remote.column(c).to_pylist()
        if pa.types.is_floating(local.schema.field(c).type):
            assert all((x is None) == (y is None) and (x is None or math.isclose(x, y, abs_tol=1e-6)) for x, y in zip(a, b)), c
        else:
            assert a == b, c
    assert used[0].info["prompt_sha256"] == local.column("judge_prompt_sha256")[0].as_py() and "chat_template_sha256" in used[0].info
