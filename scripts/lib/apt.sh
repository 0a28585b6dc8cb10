# Sourced by the scripts in scripts/services that install Debian packages: one apt-get install for a script's missing
# packages, as root or through sudo, noninteractive, without recommends, waiting for dpkg's lock (the set-up runs
# several installers at once) and without dpkg's fsync per file (a fresh machine: MediaWiki alone is 23,000 files).
# `apt-get update` runs once per set-up: scripts/services-setup.sh names a file in BIASKIT_APT_UPDATED that the first
# update creates, and a script run alone updates every time.

# apt_install WHO PKG...: status 3 (with a line on stderr) when not root and no sudo, else apt-get's own status
apt_install() {
  local who=$1 sudo=""
  shift
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
      echo "$who: missing $* and not root; install these Debian packages by hand" >&2
      return 3
    fi
  fi
  local apt=($sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 -q)
  if [ -z "${BIASKIT_APT_UPDATED:-}" ] || [ ! -e "$BIASKIT_APT_UPDATED" ]; then
    "${apt[@]}" update || return
    [ -z "${BIASKIT_APT_UPDATED:-}" ] || touch "$BIASKIT_APT_UPDATED"
  fi
  "${apt[@]}" install -y --no-install-recommends -o Dpkg::Options::=--force-unsafe-io "$@"
}
