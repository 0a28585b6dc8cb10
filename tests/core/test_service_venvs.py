"""scripts/services/label-studio.sh and lm-eval.sh keep their venv in a cache outside the clone (the clone holds a
link): an entry point whose first line names another path (a venv installed through a clone's link, which broke when
that clone went) is installed again, into the venv's real path; a sound one is a no-op. Run on a stand-in python
and a stand-in uv (no install)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FAKE_PYTHON = """#!/usr/bin/env bash
# a stand-in python: `-m venv DIR` makes DIR/bin/python (this script); `-m pip config list` lists nothing
if [ "$1 $2" = "-m venv" ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python"; fi
exit 0
"""
FAKE_UV = """#!/usr/bin/env bash
# a stand-in `uv pip install ... --python PY ...`: writes the entry point as an installer would, naming PY
echo "uv $*" >> "$CALLS"
while [ $# -gt 0 ]; do case "$1" in --python) py=$2; shift ;; esac; shift; done
printf '#!%s\\n' "$py" > "$(dirname "$py")/$ENTRY"
chmod +x "$(dirname "$py")/$ENTRY"
"""


@pytest.mark.parametrize(("script", "link", "entry"), [("label-studio", ".venv-ls", "label-studio"), ("lm-eval", ".venv-lmeval", "lm_eval")])
def test_an_entry_point_naming_a_gone_clone_is_installed_again_into_the_real_path(tmp_path, script, link, entry):
    tree = tmp_path / "clone"
    (tree / "scripts" / "services").mkdir(parents=True)
    shutil.copytree(ROOT / "scripts" / "lib", tree / "scripts" / "lib")
    shutil.copy(ROOT / "scripts" / "services" / f"{script}.sh", tree / "scripts" / "services")
    fakes = {"python": FAKE_PYTHON, "uv": FAKE_UV}
    for name, text in fakes.items():
        (tmp_path / name).write_text(text)
        (tmp_path / name).chmod(0o755)
    # the cached venv as an earlier clone left it: installed through that clone's link, stamped
    real = tmp_path / "cache" / "venv"
    subprocess.run([str(tmp_path / "python"), "-m", "venv", str(real)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("BIASKIT_LS_VENV", "BIASKIT_LMEVAL_VENV")}
    env.update(PYTHON=str(tmp_path / "python"), BIASKIT_UV=str(tmp_path / "uv"), CALLS=str(tmp_path / "calls"), ENTRY=entry)
    (tree / link).symlink_to(real)
    run = lambda: subprocess.run(["bash", str(tree / "scripts" / "services" / f"{script}.sh")], capture_output=True, text=True, env=env, timeout=60)
    first = run()
    assert first.returncode == 0, first.stdout + first.stderr
    stamps = [p.name for p in real.iterdir() if p.name.startswith(".biaskit-")]
    assert len(stamps) == 1
    (real / "bin" / entry).write_text("#!/tmp/gone-clone/.venv/bin/python\n")  # what the earlier clone's install wrote
    second = run()
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"runs /tmp/gone-clone/.venv/bin/python, not {real}/bin/python: installing it again" in second.stdout
    assert (real / "bin" / entry).read_text().splitlines()[0] == f"#!{real}/bin/python"
    assert f"--python {real}/bin/python" in (tmp_path / "calls").read_text().splitlines()[-1]
    calls = len((tmp_path / "calls").read_text().splitlines())
    third = run()  # sound now: a no-op
    assert third.returncode == 0 and len((tmp_path / "calls").read_text().splitlines()) == calls
