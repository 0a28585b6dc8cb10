"""Ray's known-benign C++ log lines (an E-level core_worker.cc note on every Ray Data actor pool)
are dropped from the console on runs that succeed; every other stderr line still passes."""

import subprocess
import sys
import textwrap

import pytest

CODE = textwrap.dedent("""
    import os, sys
    from biaskit.pool import _BenignRayLines
    f = _BenignRayLines().start()
    os.write(2, b"[2026-12-01 16:34:57,261 E 9695 9695] core_worker.cc:2465: Actor with class name: 'MapWorker(MapBatches(MetricActor))' "
                b"and ID: '6f4a' has constructor arguments in the object store and max_restarts > 0. If the arguments ...\\n")
    os.write(2, b"[2026-12-01 16:34:58,000 E 9695 9695] core_worker.cc:100: a real error\\n")
    os.write(2, b"2026-12-01 16:34:45,155\\tWARNING authentication_token_setup.py:85 -- Token authentication is enabled for this Ray cluster.\\n")
    os.write(2, b"progress 3/32\\r")
    f.stop()
    print("dropped", f.dropped)
""")


def test_benign_ray_lines_are_dropped_and_others_kept():
    r = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "dropped 2"
    assert "constructor arguments in the object store" not in r.stderr and "Token authentication" not in r.stderr
    assert "core_worker.cc:100: a real error" in r.stderr and "progress 3/32" in r.stderr


@pytest.mark.slow
def test_score_on_ray_prints_no_e_level_line(tmp_path):
    import pyarrow as pa

    from biaskit.io import write_table

    write_table(
        pa.table(
            {
                "prompt_id": [f"p{i}" for i in range(8)],
                "text": ["x"] * 8,
                "sample_index": [0] * 8,
                "model": ["m"] * 8,
                "kind": ["generate"] * 8,
                "continuation": ["a good day"] * 8,
            }
        ),
        tmp_path / "g.parquet",
        stage="generations",
    )
    import os

    exe = os.path.join(os.path.dirname(sys.executable), "biaskit")
    r = subprocess.run(
        [
            exe,
            "score",
            str(tmp_path / "g.parquet"),
            "--metrics",
            "vader",
            "--engine",
            "ray",
            "--ray-actors",
            "1",
            "--out",
            str(tmp_path / "s.parquet"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "scored 8 rows" in out
    assert not [ln for ln in out.splitlines() if " E " in ln and ".cc:" in ln], out
