#!/usr/bin/env bash
# Headless Chromium for the HTML report test (tests/evaluate/report/test_html_chromium.py).
# Idempotent: a fast no-op when /usr/bin/chromium (or `chromium` on PATH) already runs; otherwise installs
# Debian's `chromium` package (needs root or sudo, as on CI's fresh machine).
set -euo pipefail
if command -v chromium >/dev/null 2>&1 && chromium --version >/dev/null 2>&1; then
  echo "chromium: present ($(chromium --version 2>/dev/null | head -n1))"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "chromium: not installed and not root; install Debian's 'chromium' package by hand" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get -o DPkg::Lock::Timeout=900 update -q
$SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends chromium
chromium --version
