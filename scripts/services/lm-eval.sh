#!/usr/bin/env bash
# Install EleutherAI's lm-evaluation-harness (the `lm_eval` CLI) into its own virtual environment,
# .venv-lmeval in the repo root. biaskit never imports lm_eval: `biaskit export lm-eval` writes task folders
# and `biaskit import lm-eval` reads its --log_samples output, so the harness is an external tool, kept
# out of the toolkit's .venv (its own pins on datasets/transformers/evaluate would move with its releases).
# torch is pinned to the toolkit's version and found where pip finds it (here: the CPU wheel on local disk; set
# TORCH_INDEX_URL as for scripts/setup.sh elsewhere: PyPI's Linux wheel is the multi-GB CUDA build); transformers,
# datasets and accelerate are pinned to the versions the toolkit's .venv uses, so both sides load the same model
# the same way (tests/interop/test_lmeval.py compares their outputs). No gguf: the round trip hands lm_eval an HF
# model folder (safetensors), never a GGUF file.
# Idempotent: a fast no-op when the right versions are there. Used by scripts/test.sh (CI, fresh machine)
# and by tests/interop/conftest.py when the venv is missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/pyinstall.sh  # pyinstall: uv where it can be had (its cache shares .venv's torch), else pip
LM_EVAL=0.4.13
VENV=${BIASKIT_LMEVAL_VENV:-.venv-lmeval}
PINS=(torch==2.13.0 "lm-eval==$LM_EVAL" transformers==5.24.0 datasets==5.2.0 accelerate==1.15.0 "numpy<2.3")
PY=${PYTHON:-python3}
# Unless BIASKIT_LMEVAL_VENV names a folder, the venv lives in a cache outside the clone, keyed by version and Python, and
# $VENV is a link to it: a fresh clone on the same machine (CI) reuses it instead of installing it again.
if [ -z "${BIASKIT_LMEVAL_VENV:-}" ] && [ ! -e "$VENV" ]; then
  pyv=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  real=${BIASKIT_SERVICE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/biaskit}/venv-lm-eval-$LM_EVAL-py$pyv
  [ -x "$real/bin/python" ] || { mkdir -p "$(dirname "$real")" && "$PY" -m venv "$real"; }
  ln -sfn "$real" "$VENV"
fi
# the stamp is keyed by the pins: changed pins install again (into the same venv, so only what changed)
stamp="$VENV/.biaskit-lm-eval-$(printf '%s\n' "${PINS[@]}" | sha256sum | cut -c1-12)"
# its entry point runs the venv's python by the venv's real path: a venv installed through a clone's link named
# that link, and broke when that clone went (the cached venv outlives the clone): such a venv is made again
real=$(readlink -f "$VENV")
if [ -f "$stamp" ] && [ -x "$VENV/bin/lm_eval" ]; then
  [ "$(head -n1 "$VENV/bin/lm_eval")" = "#!$real/bin/python" ] && exit 0
  echo "lm_eval: $VENV/bin/lm_eval runs $(head -n1 "$VENV/bin/lm_eval" | cut -c3-), not $real/bin/python: installing it again"
  rm -rf "$real"
fi
[ -x "$real/bin/python" ] || "$PY" -m venv "$real"
choose_installer
log=$(mktemp)
if ! pyinstall "$real/bin/python" "${PINS[@]}" ${TORCH_INDEX_URL:+--extra-index-url "$TORCH_INDEX_URL"} >"$log" 2>&1; then
  grep -v "is neither a file nor a directory" "$log" >&2 || true
  rm -f "$log"; echo "lm-eval $LM_EVAL install failed (see above)" >&2; exit 1
fi
rm -f "$log"
touch "$stamp"
echo "lm-evaluation-harness $LM_EVAL installed in $VENV"
