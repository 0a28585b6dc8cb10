#!/usr/bin/env bash
# Headless Chromium for the HTML report test (tests/evaluate/report/test_html_chromium.py).
# Idempotent: a fast no-op when /usr/bin/chromium (or `chromium` on PATH) already runs; otherwise installs
# Debian's `chromium` package (needs root or sudo, as on CI's fresh machine).
set -euo pipefail
if command -v chromium >/dev/null 2>&1 && chromium --version >/dev/null 2>&1; then
  echo "chromium: present ($(chromium --version 2>/dev/null | head -n1))"
  exit 0
fi
source "$(dirname "$0")/../lib/apt.sh"
apt_install chromium chromium
chromium --version
