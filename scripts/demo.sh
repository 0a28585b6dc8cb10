#!/usr/bin/env bash
# Fresh machine -> demo run: sets up .venv (torch first, as pip finds it: the CPU wheel with TORCH_INDEX_URL, then biaskit with all extras and the
# offline assets) and runs `biaskit demo`. Extra arguments go to `biaskit demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec .venv/bin/biaskit demo --out "${BIASKIT_DEMO_OUT:-runs/demo}" "$@"
