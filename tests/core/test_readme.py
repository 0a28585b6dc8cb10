"""The README's walkthrough commands run as written (against a quick demo run in a temp folder)."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def walkthrough_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- readme-walkthrough -->\s*```bash\n(.*?)```", text, re.S)
    assert block, "README lost its walkthrough block"
    return [ln for ln in block.group(1).splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def test_readme_names_the_two_setup_commands_and_ci_runs_the_test_one():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "bash scripts/demo.sh" in text and "bash scripts/test.sh" in text
    ci = (ROOT / ".ci" / "run").read_text()
    assert "bash scripts/test.sh" in ci


def test_readme_walkthrough_runs(quick_demo, tmp_path):
    run_dir, _ = quick_demo
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "demo").symlink_to(run_dir)
    for name in ("src", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", HF_HUB_OFFLINE="1")
    env.pop("HF_TOKEN", None)
    cmds = walkthrough_commands()
    assert len(cmds) >= 15
    for cmd in cmds:
        r = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"README command failed: {cmd}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    # the commands produced what they say
    assert (tmp_path / "work" / "holistic_v1.0.parquet").exists()
    import pyarrow.parquet as pq

    assert pq.read_metadata(tmp_path / "work" / "holistic_v1.0.parquet").num_rows == 472_991
    assert (tmp_path / "work" / "report" / "report.html").exists()
    assert pq.read_metadata(tmp_path / "work" / "gens.parquet").num_rows == 4


def test_readme_says_the_cpu_torch_build_only_with_torch_index_url():
    # demo.sh installs torch as pip finds it; the CPU build only with TORCH_INDEX_URL
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    two = text.split("## The two commands", 1)[1].split("```", 1)[0]
    assert "the CPU build of torch first" not in two and "TORCH_INDEX_URL" in two
    assert "${TORCH_INDEX_URL:+--index-url" in (ROOT / "scripts" / "setup.sh").read_text()


def test_readme_quotes_the_measured_figures_of_docs_measurements():
    # the demo's and the test loops' figures are written by bench/first_hour.py into docs/measurements.md;
    # the README quotes each row (figure, date, machine) as it stands there, never a typed-in number
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from first_hour import read_rows
    finally:
        sys.path.pop(0)
    rows = read_rows(ROOT / "docs" / "measurements.md")
    assert {"demo", "fast test loop"} <= set(rows), rows  # and "whole suite" where it was measured
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    for what, (figure, date, machine) in rows.items():
        assert figure in readme and date in readme and machine in readme, (what, figure, date, machine)
