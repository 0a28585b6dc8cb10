#!/usr/bin/env bash
# Install every service the integration tests use (scripts/services/*.sh), the independent ones at the same time:
# the scripts that call apt-get run one after another in one chain (they share dpkg's lock), and each pip or build
# script (Label Studio, lm-eval, llama-server) runs beside that chain, the slowest (the llama-server compile) started
# first. `--with-venv` also runs scripts/setup.sh (the project's .venv) beside them: nothing here needs .venv, so
# scripts/test.sh and .ci/run set up everything in one parallel step. One line when each starts and ends (its wall
# time since the start and its CPU seconds), and a line every 10 s (SERVICES_TICK) while any still runs (also when
# stdout is not a terminal). A failure prints that service's log and fails the set-up. Each script is idempotent,
# so on a machine that has everything this takes seconds.
# Called by scripts/test.sh; `bash scripts/services-setup.sh` alone installs the services without testing.
set -euo pipefail
cd "$(dirname "$0")/.."
APT=(chromium hunspell mediawiki)  # these call apt-get: in sequence
FIRST=(llama-server lm-eval label-studio)  # the longest first: on 2 cores the compile is the critical path
WITH_VENV=0
for a in "$@"; do
  case "$a" in
    --with-venv) WITH_VENV=1 ;;
    *) echo "services-setup.sh: unknown argument '$a' (the only one is --with-venv)" >&2; exit 2 ;;
  esac
done
logs=$(mktemp -d "${TMPDIR:-/tmp}/biaskit-services.XXXXXX")
trap 'rm -rf "$logs"' EXIT
export BIASKIT_APT_UPDATED="$logs/apt-updated"  # scripts/lib/apt.sh: one `apt-get update` for the whole set-up
t0=$(date +%s)
el() { printf '%dm%02ds' $((($(date +%s) - t0) / 60)) $((($(date +%s) - t0) % 60)); }
apt_chain() {
  for n in "${APT[@]}"; do
    [ -e "scripts/services/$n.sh" ] || continue
    echo "== $n"
    bash "scripts/services/$n.sh" || return 1
  done
}
declare -A pid_of=()
# each job in a subshell that writes its CPU seconds (`times`: the subshell's children) when it ends
launch() {
  local name=$1
  shift
  ( set +e; "$@"; rc=$?; times >"$logs/$name.cpu"; exit $rc ) >"$logs/$name.log" 2>&1 &
  pid_of[$name]=$!
  echo "services: $name started"
}
# user + system seconds of the children, from the second line of `times` ("1m2.5s 0m3.1s")
cpu_of() {
  awk 'NR == 2 { t = 0; for (i = 1; i <= NF; i++) { split($i, p, "m"); t += p[1] * 60 + p[2] } printf "%.0f", t }' "$logs/$1.cpu" 2>/dev/null
}
order=()
for n in "${FIRST[@]}"; do [ -e "scripts/services/$n.sh" ] && order+=("scripts/services/$n.sh"); done
for s in scripts/services/*.sh; do
  [[ " ${FIRST[*]} " == *" $(basename "$s" .sh) "* ]] || order+=("$s")
done
for s in "${order[@]}"; do
  n=$(basename "$s" .sh)
  [[ " ${APT[*]} " == *" $n "* ]] && continue
  launch "$n" bash "$s"
done
[ "$WITH_VENV" = 0 ] || launch "venv" bash scripts/setup.sh
launch "apt (${APT[*]})" apt_chain
failed=0
last=$(date +%s)
while [ ${#pid_of[@]} -gt 0 ]; do
  for name in "${!pid_of[@]}"; do
    pid=${pid_of[$name]}
    kill -0 "$pid" 2>/dev/null && continue
    if wait "$pid"; then
      echo "services: $name done ($(el), $(cpu_of "$name") CPU s)"
    else
      echo "services: $name FAILED ($(el), $(cpu_of "$name") CPU s); its log:" >&2
      grep -v "is neither a file nor a directory" "$logs/$name.log" | tail -n 80 >&2 || true
      failed=1
    fi
    unset "pid_of[$name]"
  done
  [ ${#pid_of[@]} -gt 0 ] || break
  sleep 1
  if [ $(($(date +%s) - last)) -ge "${SERVICES_TICK:-10}" ]; then
    echo "services: still running after $(el): ${!pid_of[*]}"
    last=$(date +%s)
  fi
done
[ "$failed" = 0 ] || exit 1
echo "services: all ready ($(el))"
