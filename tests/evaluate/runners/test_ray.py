"""The Ray engine gives the local engine's table: same rows, ids, order and values (a real local Ray cluster)."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest

from biaskit.evaluate.runners import fill_mask, generate, likelihood
from biaskit.pool import EngineSpec

pytestmark = pytest.mark.slow

#: columns whose values legitimately differ between two runs of the same settings
VOLATILE = {"generation_config"}


def _ray(address: str, actors: int = 2, batch_size: int = 3) -> EngineSpec:
    return EngineSpec(name="ray", address=address, actors=actors, batch_size=batch_size)


def assert_same_table(a: pa.Table, b: pa.Table, tol: float = 1e-6) -> None:
    assert a.column_names == b.column_names
    assert a.schema == b.schema
    assert a.num_rows == b.num_rows
    for c in a.column_names:
        x, y = a.column(c).to_pylist(), b.column(c).to_pylist()
        if pa.types.is_floating(a.schema.field(c).type):
            for i, (u, v) in enumerate(zip(x, y)):
                assert (u is None) == (v is None), (c, i)
                if u is not None:
                    assert math.isclose(u, v, rel_tol=tol, abs_tol=tol), (c, i, u, v)
        else:
            assert x == y, c


def _manifest(path) -> dict:
    from biaskit.io import read_manifest

    return read_manifest(path)


def test_generate_greedy_on_ray_equals_local(tiny_causal, gen_prompts, ray_cluster, tmp_path):
    local = generate(gen_prompts, model=tiny_causal, max_new_tokens=6, out=tmp_path / "local.parquet")
    ray_t = generate(gen_prompts, model=tiny_causal, max_new_tokens=6, out=tmp_path / "ray.parquet", engine=_ray(ray_cluster))
    assert_same_table(local, ray_t)
    assert ray_t.column("prompt_id").to_pylist() == gen_prompts.column("prompt_id").to_pylist()
    assert all(c for c in ray_t.column("continuation").to_pylist())


def test_sampled_generation_on_ray_equals_local(tiny_causal, gen_prompts, ray_cluster):
    kw = dict(model=tiny_causal, max_new_tokens=5, do_sample=True, top_k=20, num_return_sequences=2, seed=7)
    local = generate(gen_prompts, **kw)
    ray_t = generate(gen_prompts, **kw, engine=_ray(ray_cluster, actors=2, batch_size=4))
    assert_same_table(local, ray_t)
    assert ray_t.num_rows == 2 * gen_prompts.num_rows


def test_likelihood_on_ray_equals_local(tiny_causal, make_prompts, ray_cluster, tmp_path):
    texts = [
        "The woman worked as a teacher.",
        "The man worked as a carpenter.",
        "",
        "Is this the right way?",
        "An astronomer is a scientist.",
        "She loves music.",
    ]
    p = make_prompts(texts, prefix="l")
    local = likelihood(p, model=tiny_causal, add_bos=True, out=tmp_path / "l.parquet")
    ray_t = likelihood(p, model=tiny_causal, add_bos=True, out=tmp_path / "r.parquet", engine=_ray(ray_cluster, actors=1))
    assert_same_table(local, ray_t)
    assert ray_t.column("error").to_pylist()[2] == "empty prompt text"
    # the manifest has the local fields plus the engine facts
    ml, mr = _manifest(tmp_path / "l.parquet"), _manifest(tmp_path / "r.parquet")
    assert set(ml) == set(mr)
    assert ml["engine"] == {"engine": "local"}
    eng = mr["engine"]
    assert eng["engine"] == "ray" and eng["actors"] == 1 and eng["cluster_cpus"] == 2.0 and eng["num_gpus_per_actor"] == 0.0
    assert eng["address"] == ray_cluster
    assert mr["config"] == ml["config"]
    assert mr["model"] == ml["model"]


def test_fill_mask_on_ray_equals_local(tiny_masked, make_prompts, ray_cluster):
    p = make_prompts(["The woman worked as a [MASK].", "He is an old [MASK].", "No mask here."], prefix="m")
    local = fill_mask(p, model=tiny_masked, top_k=4)
    ray_t = fill_mask(p, model=tiny_masked, top_k=4, engine=_ray(ray_cluster, actors=1, batch_size=2))
    assert_same_table(local, ray_t)


def test_ray_engine_rejects_bad_settings(tiny_causal, gen_prompts):
    from biaskit.errors import BiaskitError

    with pytest.raises(BiaskitError, match="E160"):
        generate(gen_prompts, model=tiny_causal, engine=EngineSpec(name="ray", actors=0))
    with pytest.raises(BiaskitError, match="E160"):
        generate(gen_prompts, model=tiny_causal, engine="spark")


def test_killed_ray_run_resumes_exactly(tiny_causal, make_prompts, ray_cluster, tmp_path):
    """SIGKILL `biaskit generate --engine ray` once a shard is written; the rerun finishes with the local table."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from biaskit.io import read_table, write_table

    words = ["teacher", "nurse", "engineer", "farmer", "pilot", "baker", "judge", "poet"]
    p = make_prompts([f"The {w} number {i} said that " for i in range(15) for w in words], prefix="k")  # 120 prompts
    src = tmp_path / "prompts.parquet"
    write_table(p, src)
    out = tmp_path / "gens.parquet"
    cmd = [
        str(Path(sys.executable).with_name("biaskit")),
        "generate",
        str(src),
        "--model",
        tiny_causal,
        "--out",
        str(out),
        "--max-new-tokens",
        "12",
        "--batch-size",
        "2",
        "--engine",
        "ray",
        "--ray-address",
        ray_cluster,
        "--ray-actors",
        "1",
        "--ray-batch-size",
        "2",
    ]
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    parts = Path(str(out) + ".parts")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.time() + 150
    while not (parts.is_dir() and any(parts.glob("*.parquet"))):
        assert proc.poll() is None, proc.stdout.read().decode()[-2000:]
        assert time.time() < deadline, "no shard written in time"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not out.exists(), "the run finished before it was killed: make it longer"
    n_shards = len(list(parts.glob("*.parquet")))
    assert n_shards >= 1
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=150)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    import re

    # the rerun skipped what the killed run had written (each shard holds one Ray batch of 2 rows)
    m = re.search(r"resuming: (\d+) of 120 units already done", r.stdout + r.stderr)
    assert m and 2 <= int(m.group(1)) < 120, (r.stdout + r.stderr)[-2000:]
    final = read_table(out)
    local = generate(p, model=tiny_causal, max_new_tokens=12, batch_size=2)
    assert_same_table(local, final)
    keys = list(zip(final.column("prompt_id").to_pylist(), final.column("sample_index").to_pylist()))
    assert len(keys) == len(set(keys)) == 120


def test_error_on_an_actor_is_the_local_biaskit_error(make_prompts, ray_cluster, tmp_path):
    from biaskit.errors import BiaskitError

    p = make_prompts(["Hello there."], prefix="e")
    with pytest.raises(BiaskitError) as local_err:
        likelihood(p, model=str(tmp_path / "no-such-model"))
    with pytest.raises(BiaskitError) as ray_err:
        likelihood(p, model=str(tmp_path / "no-such-model"), engine=_ray(ray_cluster, actors=1))
    assert ray_err.value.code == local_err.value.code
    assert "Traceback" not in str(ray_err.value)
