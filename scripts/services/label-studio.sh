#!/usr/bin/env bash
# Install the Label Studio SERVER (1.23.2) into its own virtual environment, .venv-ls in the repo root.
# It must never share the toolkit's .venv: its pins (Django 5.2, pyarrow<25, openai<2, pytz<2023) would
# clash. The toolkit itself only needs label-studio-sdk (the `annotate` extra).
# Idempotent: a fast no-op when the right version is already there. Used by scripts/test.sh (CI, fresh
# machine) and by tests/annotate/conftest.py when the venv is missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/pyinstall.sh  # pyinstall: uv where it can be had, else pip
VERSION=1.23.2
VENV=${BIASKIT_LS_VENV:-.venv-ls}
PY=${PYTHON:-python3}
# Unless BIASKIT_LS_VENV names a folder, the venv lives in a cache outside the clone, keyed by version and Python, and
# $VENV is a link to it: a fresh clone on the same machine (CI) reuses it instead of installing it again.
if [ -z "${BIASKIT_LS_VENV:-}" ] && [ ! -e "$VENV" ]; then
  pyv=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  real=${BIASKIT_SERVICE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/biaskit}/venv-label-studio-$VERSION-py$pyv
  [ -x "$real/bin/python" ] || { mkdir -p "$(dirname "$real")" && "$PY" -m venv "$real"; }
  ln -sfn "$real" "$VENV"
fi
stamp="$VENV/.biaskit-label-studio-$VERSION"
# its entry point runs the venv's python by the venv's real path: a venv installed through a clone's link named
# that link, and broke when that clone went (the cached venv outlives the clone): such a venv is made again
real=$(readlink -f "$VENV")
if [ -f "$stamp" ] && [ -x "$VENV/bin/label-studio" ]; then
  [ "$(head -n1 "$VENV/bin/label-studio")" = "#!$real/bin/python" ] && exit 0
  echo "label-studio: $VENV/bin/label-studio runs $(head -n1 "$VENV/bin/label-studio" | cut -c3-), not $real/bin/python: installing it again"
  rm -rf "$real"
fi
[ -x "$real/bin/python" ] || "$PY" -m venv "$real"
choose_installer
log=$(mktemp)
if ! { { [ "$BIASKIT_UV" != pip ] || pyinstall "$real/bin/python" --upgrade pip; } &&
       pyinstall "$real/bin/python" "label-studio==$VERSION"; } >"$log" 2>&1; then
  grep -v "is neither a file nor a directory" "$log" >&2 || true
  rm -f "$log"; echo "label-studio $VERSION install failed (see above)" >&2; exit 1
fi
rm -f "$log"
touch "$stamp"
echo "Label Studio $VERSION installed in $VENV"
