# Sourced by scripts/setup.sh and scripts/services/{label-studio,lm-eval}.sh: one way to install Python packages
# into a virtual environment, with uv (PyPI's `uv`, pinned below) where it can be had and pip where it cannot.
# uv resolves and downloads in parallel, skips pip's bytecode compilation (Python writes __pycache__ on first import)
# and installs every wheel from one content-addressed cache by hard link, so the torch that .venv unpacked is linked,
# not unpacked again, into .venv-lmeval. uv reads no pip configuration: pip_index_args passes pip's own
# (find-links, index URLs, constraints: here the CPU torch wheel on local disk) to uv, and --index-strategy
# unsafe-best-match makes uv pick the best version over all of them as pip does.
#
#   BIASKIT_UV=/path/to/uv     use this uv (no install); BIASKIT_UV=pip uses pip throughout
#   uv itself goes to <cache>/uv-<version>/bin/uv, <cache> = $BIASKIT_SERVICE_CACHE or ${XDG_CACHE_HOME:-~/.cache}/biaskit
#   uv's wheel cache is uv's own: $UV_CACHE_DIR or ${XDG_CACHE_HOME:-~/.cache}/uv

BIASKIT_UV_VERSION=0.13.9

biaskit_cache_dir() { echo "${BIASKIT_SERVICE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/biaskit}"; }

# The uv to use on stdout; status 1 (and pip is used) when there is none and it cannot be installed.
# Safe to run from several scripts at once: the others wait on a lock (flock, where there is one) while the first
# installs, and without flock each installs into its own folder and the first to finish keeps its copy.
ensure_uv() {
  if [ "${BIASKIT_UV:-}" = pip ]; then return 1; fi
  if [ -n "${BIASKIT_UV:-}" ]; then echo "$BIASKIT_UV" && return 0; fi
  local dir tmp out py=${PYTHON:-python3}
  dir="$(biaskit_cache_dir)/uv-$BIASKIT_UV_VERSION"
  if [ ! -x "$dir/bin/uv" ]; then
    mkdir -p "$(dirname "$dir")"
    if command -v flock >/dev/null 2>&1 && [ -z "${BIASKIT_UV_LOCKED:-}" ]; then
      BIASKIT_UV_LOCKED=1 flock "$dir.lock" bash -c "source '${BASH_SOURCE[0]}' && ensure_uv"
      return
    fi
    tmp=$(mktemp -d "$dir.tmp.XXXXXX")
    if ! out=$("$py" -m pip --disable-pip-version-check -q install --no-deps --target "$tmp" "uv==$BIASKIT_UV_VERSION" 2>&1) ||
      [ ! -x "$tmp/bin/uv" ]; then
      rm -rf "$tmp"
      echo "pyinstall: could not install uv $BIASKIT_UV_VERSION ($(echo "$out" | grep -v 'is ignored' | tail -n 1)); using pip" >&2
      return 1
    fi
    mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"  # another script won the race: its copy is the same
  fi
  echo "$dir/bin/uv"
}

# Decide once per script (a later ensure_uv then answers at once): BIASKIT_UV = the uv to use, or "pip".
# pip's sources are read here once too (pip_index_args starts pip: about a CPU second).
choose_installer() {
  BIASKIT_UV=$(ensure_uv) || BIASKIT_UV=pip
  export BIASKIT_UV
  [ "$BIASKIT_UV" = pip ] || mapfile -t UV_INDEX_ARGS < <(pip_index_args)
}

# pip's configured package sources and constraints (pip.conf, PIP_* variables) as uv arguments, one per line.
pip_index_args() {
  local py=${PYTHON:-python3} key value
  "$py" -m pip config list 2>/dev/null | while IFS='=' read -r key value; do
    value=${value#\'}
    value=${value%\'}
    case "${key#*.}" in
      find-links) for v in $value; do printf -- '--find-links\n%s\n' "$v"; done ;;
      extra-index-url) for v in $value; do printf -- '--extra-index-url\n%s\n' "$v"; done ;;
      index-url) printf -- '--index-url\n%s\n' "$value" ;;
      constraint) for v in $value; do printf -- '--constraint\n%s\n' "$v"; done ;;
    esac
  done | awk 'NR % 2 { k = $0; next } !seen[k SUBSEP $0]++ { print k; print }'
}

# pyinstall VENV_PYTHON ARGS...: `pip install ARGS` into that environment, through uv where there is one.
pyinstall() {
  local py=$1 uv
  shift
  if uv=$(ensure_uv); then
    [ -n "${UV_INDEX_ARGS+set}" ] || mapfile -t UV_INDEX_ARGS < <(pip_index_args)
    "$uv" pip install -q --python "$py" --index-strategy unsafe-best-match "${UV_INDEX_ARGS[@]}" "$@"
  else
    "$py" -m pip --disable-pip-version-check -q install "$@"
  fi
}
