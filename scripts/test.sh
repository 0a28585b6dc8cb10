#!/usr/bin/env bash
# Fresh machine -> full test suite: sets up .venv and installs the services the integration tests use, all in
# parallel (scripts/services-setup.sh --with-venv: scripts/setup.sh beside scripts/services/*.sh: MediaWiki, Label
# Studio and lm-eval in their own venvs, llama-server, Chromium, Hunspell), then runs pytest.
# Extra arguments go to pytest (e.g. `bash scripts/test.sh tests/test_io.py -x`).
# `bash scripts/test.sh --fast [ARGS]`: the fast loop, `pytest -m "not slow and not server"` (no model training,
# no MediaWiki / Label Studio / Ray / Chromium), with no service set-up; CI runs everything.
set -euo pipefail
cd "$(dirname "$0")/.."
# Python's own bytecode cache (__pycache__, git-ignored), even where the environment turns it off: without it every
# pytest start rewrites and compiles all test files again (~7 CPU s) and every `biaskit` subprocess compiles biaskit
unset PYTHONDONTWRITEBYTECODE
if [ "${1:-}" = "--fast" ]; then
  shift
  [ -x .venv/bin/python ] || bash scripts/setup.sh
  export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false MPLBACKEND=Agg
  exec .venv/bin/python -m pytest -m "not slow and not server" -q "$@"
fi
# .venv (scripts/setup.sh) and scripts/services/*.sh, the independent ones in parallel, the slowest first
bash scripts/services-setup.sh --with-venv
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false MPLBACKEND=Agg
# every service is installed above, so a skipped test means a missing install step: fail it
export BIASKIT_STRICT_SKIPS=${BIASKIT_STRICT_SKIPS:-1}
# pytest exits 5 when it collects no tests: that is a failure here too.
exec .venv/bin/python -m pytest "$@"
