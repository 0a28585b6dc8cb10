#!/usr/bin/env bash
# Fresh machine -> full test suite: sets up .venv, installs the services the integration tests use
# (scripts/services/*.sh: MediaWiki, Label Studio in its own venv, Chromium), then runs pytest.
# Extra arguments go to pytest (e.g. `bash scripts/test.sh tests/test_io.py -x`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
for s in scripts/services/*.sh; do
  [ -e "$s" ] || continue
  echo "== service set-up: $s"
  bash "$s"
done
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false MPLBACKEND=Agg
# every service is installed above, so a skipped test means a missing install step: fail it
export BIASKIT_STRICT_SKIPS=${BIASKIT_STRICT_SKIPS:-1}
# pytest exits 5 when it collects no tests: that is a failure here too.
exec .venv/bin/python -m pytest "$@"
