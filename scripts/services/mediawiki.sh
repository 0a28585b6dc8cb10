#!/usr/bin/env bash
# Installs the Debian packages the scrape integration tests need for a real MediaWiki server
# (MediaWiki + PHP CLI + SQLite; no apache: php8.x-cgi + mini-httpd satisfy the web-server dependencies).
# Idempotent: a fast no-op when everything is present. Needs root (or sudo) and apt on a fresh machine.
set -euo pipefail
PKGS=(mediawiki php-cli php-sqlite3 php-intl php-mbstring php-xml mini-httpd)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# the CGI binary for the installed PHP version (php8.2-cgi on Debian 12)
if ! ls /usr/bin/php-cgi* >/dev/null 2>&1; then
  missing+=("php-cgi")
fi
if [ -f /usr/share/mediawiki/maintenance/install.php ] && [ ${#missing[@]} -eq 0 ]; then
  echo "mediawiki.sh: MediaWiki and PHP already installed"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "mediawiki.sh: apt-get not found; install ${missing[*]} by hand (the MediaWiki tests will be skipped)" >&2
  exit 0
fi
echo "mediawiki.sh: installing ${missing[*]}"
source "$(dirname "$0")/../lib/apt.sh"
rc=0
apt_install mediawiki.sh mediawiki php-cli php-sqlite3 php-intl php-mbstring php-xml php-cgi mini-httpd >/dev/null || rc=$?
# not root and no sudo: the MediaWiki tests are skipped (scripts/test.sh makes a skip fail under BIASKIT_STRICT_SKIPS)
if [ "$rc" = 3 ]; then exit 0; fi
[ "$rc" = 0 ] || exit "$rc"
echo "mediawiki.sh: done ($(dpkg-query -W -f='${Version}' mediawiki))"
