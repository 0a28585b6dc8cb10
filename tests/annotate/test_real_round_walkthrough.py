"""docs/annotate.md's "A real round on your own Label Studio, step by step" runs as written.

Each bash block of that section runs in order, in its own bash process that picks up the variables the block
before it exported (as one shell would), in a folder holding the doc's inputs: `.venv-ls` (the server venv of
scripts/services/label-studio.sh) and a scored table `scores.parquet`. The test starts nothing itself: block 1
starts the server, block 2 creates the annotators, and the test then annotates through the API as the two
annotators would in the browser (step 4), before the pull/agreement/validate/ppi block and the stop block.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import requests
from statsmodels.stats.inter_rater import fleiss_kappa

from biaskit.annotate.labelstudio import LabelStudio, record_annotation
from biaskit.annotate.tasks import get_task_type
from biaskit.io import read_table, write_table

from .conftest import VENV, make_scores

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## A real round on your own Label Studio, step by step"
_FENCE = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)

pytestmark = pytest.mark.server


def walkthrough_blocks() -> list[str]:
    text = (ROOT / "docs" / "annotate.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.index("\n## ", start + len(SECTION))
    return [m.group(1) for m in _FENCE.finditer(text[start:end])]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_block(block: str, cwd: Path, env: dict[str, str]) -> str:
    """One block in a fresh bash that first sources what the earlier blocks exported, and exports its own."""
    script = f"set -euo pipefail\n[ -f state.sh ] && source state.sh\n{block}\nexport -p > state.sh\n"
    r = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"block failed ({r.returncode}):\n{block}\n--- stdout\n{r.stdout[-3000:]}\n--- stderr\n{r.stderr[-3000:]}"
    return r.stdout


def _exported(cwd: Path, name: str) -> str:
    m = re.search(rf'^declare -x {name}="(.*)"$', (cwd / "state.sh").read_text(), re.M)
    assert m, name
    return m.group(1)


def _logs_in(url: str, email: str, password: str) -> bool:
    s = requests.Session()
    s.get(f"{url}/user/login/", timeout=30)
    r = s.post(
        f"{url}/user/login/",
        data={"email": email, "password": password, "csrfmiddlewaretoken": s.cookies.get("csrftoken")},
        headers={"Referer": f"{url}/user/login/"},
        allow_redirects=False,
        timeout=30,
    )
    return r.status_code == 302  # a failed login answers 200 with the form and "don't match"


def test_real_round_walkthrough_runs_from_server_start_to_ppi(tmp_path):
    if not (VENV / "bin" / "label-studio").exists():
        pytest.skip("Label Studio venv missing: run bash scripts/services/label-studio.sh")
    blocks = walkthrough_blocks()
    assert len(blocks) == 5, "start, annotators, sample+push, pull..ppi, stop"
    (tmp_path / ".venv-ls").symlink_to(VENV)
    write_table(make_scores(), tmp_path / "scores.parquet")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LABEL_STUDIO", "DJANGO"))}
    env.update(
        {
            "PATH": f"{ROOT / '.venv' / 'bin'}:{env.get('PATH', '')}",
            "LS_PORT": str(_free_port()),
            "BIASKIT_CACHE": str(tmp_path / "cache"),
            "HOME": str(tmp_path),
        }
    )
    pid_file = tmp_path / "ls-data" / "server.pid"
    try:
        _run_block(blocks[0], tmp_path, env)
        url, token = _exported(tmp_path, "LABEL_STUDIO_URL"), _exported(tmp_path, "LABEL_STUDIO_API_KEY")
        assert requests.get(f"{url}/health", timeout=10).json()["status"] == "UP"

        out = _run_block(blocks[1], tmp_path, env)
        creds = dict(re.findall(r"^(\S+@example\.com): log in at \S+ with the password (\S+)$", out, re.M))
        assert sorted(creds) == ["ann1@example.com", "ann2@example.com"]
        assert all(_logs_in(url, e, pw) for e, pw in creds.items())  # the passwords the doc prints work
        assert not _logs_in(url, "ann1@example.com", "not-the-password")

        out = _run_block(blocks[2], tmp_path, env)
        assert "imported 24 task(s)" in out

        # step 4, by API: ann1 gives the metric's label, ann2 too except on every 4th item ("neutral")
        client = LabelStudio(url, token)
        users = client.ensure_annotators(sorted(creds))
        tasks = client.existing_sample_ids(client.get_project("biaskit r1 (sentiment)").id)
        samples = read_table(tmp_path / "r1" / "samples.parquet").to_pylist()
        given: dict[str, list[str]] = {}
        for i, row in enumerate(samples):
            labels = [row["vader_label"], row["vader_label"] if i % 4 else "neutral"]
            for email, label in zip(sorted(creds), labels, strict=True):
                record_annotation(client, tasks[row["sample_id"]], users[email], label, get_task_type("sentiment"))
            given[row["sample_id"]] = labels

        _run_block(blocks[3], tmp_path, env)
        ann = read_table(tmp_path / "r1" / "annotations.parquet").to_pandas()
        assert len(ann) == 48 and sorted(ann.annotator.unique()) == sorted(creds)
        # Fleiss' kappa of the pulled round = statsmodels' on the labels the test gave (items x category counts)
        cats = ["negative", "neutral", "positive"]
        counts = np.array([[Counter(labels)[c] for c in cats] for labels in given.values()])
        agreement = read_table(tmp_path / "r1" / "agreement.parquet").to_pandas()
        kappa = agreement.loc[agreement.measure == "fleiss_kappa", "estimate"].item()
        assert kappa == pytest.approx(fleiss_kappa(counts, method="fleiss"), abs=1e-12)
        assert (tmp_path / "r1" / "validation.parquet").exists()
        ppi = pd.read_csv(tmp_path / "r1" / "ppi.csv")
        assert sorted(ppi.loc[ppi.measure == "share_ppi", "group"]) == ["g0", "g1", "g2"]
        for f in (tmp_path / "r1").rglob("*"):
            if f.is_file():
                assert token not in f.read_text(errors="replace"), f  # the token never reaches a written byte

        pid = int(pid_file.read_text())
        _run_block(blocks[4], tmp_path, env)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        with pytest.raises(requests.ConnectionError):
            for _ in range(30):  # SIGTERM stops it in a few seconds
                requests.get(f"{url}/health", timeout=2)
                time.sleep(1)
    finally:
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass
