"""scripts/lib/apt.sh (the Debian installs of scripts/services) on a stand-in apt-get: one `apt-get update` per
set-up when scripts/services-setup.sh names its marker file, one per call otherwise, and installs without
recommends, waiting for dpkg's lock, without dpkg's fsync per file."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _installs(tmp_path: Path, calls: list[str], **env: str) -> list[str]:
    """Run apt_install once per entry of calls (as separate scripts, as the apt chain does); apt-get's argument lists."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "apt-get"
    fake.write_text(f'#!/usr/bin/env bash\necho "$*" >> {tmp_path}/apt-calls\n')
    fake.chmod(0o755)
    full = {k: v for k, v in os.environ.items() if k != "BIASKIT_APT_UPDATED"}
    full.update(PATH=f"{bin_dir}:{os.environ['PATH']}", **env)
    for pkgs in calls:
        script = f"source {ROOT}/scripts/lib/apt.sh; apt_install test {pkgs}"
        r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=full, timeout=30)
        assert r.returncode == 0, r.stdout + r.stderr
    return (tmp_path / "apt-calls").read_text().splitlines()


def test_one_update_for_the_whole_setup_when_the_marker_file_is_named(tmp_path):
    marker = tmp_path / "logs" / "apt-updated"
    marker.parent.mkdir()
    got = _installs(tmp_path, ["chromium", "hunspell-cs hunspell-pl"], BIASKIT_APT_UPDATED=str(marker))
    opts = "-o DPkg::Lock::Timeout=900 -q"
    assert got == [
        f"{opts} update",
        f"{opts} install -y --no-install-recommends -o Dpkg::Options::=--force-unsafe-io chromium",
        f"{opts} install -y --no-install-recommends -o Dpkg::Options::=--force-unsafe-io hunspell-cs hunspell-pl",
    ]
    assert marker.is_file()


def test_a_script_run_alone_updates_every_time(tmp_path):
    got = _installs(tmp_path, ["chromium", "mediawiki"])
    assert [c.split()[-1] for c in got] == ["update", "chromium", "update", "mediawiki"]
