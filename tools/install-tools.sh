#!/usr/bin/env bash
# Install everything Taskyard's checks and tests need; fast when it is all there.
#
#   tools/install-tools.sh            all steps
#   tools/install-tools.sh python npm only some: python npm grpcurl postgres
#   tools/install-tools.sh bench      bench/compare's peers (opt-in, see below)
#
# python    pip install -e '.[dev]' (always: points the editable install at THIS checkout)
# npm       npm ci (buf, pinned in package.json / package-lock.json), skipped when current
# grpcurl   go install grpcurl into GOBIN (tests look for it on PATH), skipped when current
# postgres  checks for PostgreSQL server binaries; installs the Debian package when missing
#           (tests start their own throwaway cluster; nothing is started here)
# bench     opt-in, never part of "all steps" (CI stays fast): bench/compare's peers,
#           pip install -e '.[bench]' (pgqueuer, celery[redis]) and Debian's redis-server
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
GRPCURL_VERSION="v1.9.3"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore PIP_NO_INPUT=1
# Never download a Go toolchain: build with the one installed.
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"

log() { printf '::: %s\n' "$*"; }
die() { printf 'install-tools: error: %s\n' "$*" >&2; exit 1; }

install_python() {
  log "python: pip install -e '.[dev]' ($("$PYTHON" --version 2>&1))"
  "$PYTHON" -m pip install --quiet -e '.[dev]'
  local where
  where="$(cd / && "$PYTHON" -c 'import taskyard.core, os; print(os.path.dirname(taskyard.core.__file__))')"
  [[ "$where" == "$ROOT/"* ]] || die "taskyard.core imports from $where, not from this checkout ($ROOT)"
}

install_npm() {
  local want have=""
  want="$(node -p "require('./package-lock.json').packages['node_modules/@bufbuild/buf'].version")"
  if [[ -x node_modules/.bin/buf ]]; then have="$(node_modules/.bin/buf --version 2>/dev/null || true)"; fi
  if [[ "$have" == "$want" ]]; then
    log "npm: buf $have already installed"
    return
  fi
  log "npm: npm ci (buf $want)"
  npm ci --no-audit --no-fund --loglevel=error
  [[ "$(node_modules/.bin/buf --version)" == "$want" ]] || die "buf $want did not install"
}

gobin() {
  local dir
  dir="${GOBIN:-$(go env GOBIN)}"
  echo "${dir:-$(go env GOPATH)/bin}"
}

install_grpcurl() {
  command -v go >/dev/null || die "go is not installed (needed for grpcurl)"
  local bin
  bin="$(gobin)"
  if [[ -x "$bin/grpcurl" ]] && go version -m "$bin/grpcurl" 2>/dev/null \
      | grep -Eq "^[[:space:]]+mod[[:space:]]+github.com/fullstorydev/grpcurl[[:space:]]+${GRPCURL_VERSION}([[:space:]]|$)"; then
    log "grpcurl: $GRPCURL_VERSION already in $bin"
  else
    log "grpcurl: go install github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION -> $bin"
    GOBIN="$bin" go install "github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION"
  fi
  case ":$PATH:" in
    *":$bin:"*) ;;
    *) log "grpcurl: add $bin to PATH (export PATH=\"$bin:\$PATH\")" ;;
  esac
}

pg_bindir() {
  local dir
  if command -v pg_config >/dev/null; then
    dir="$(pg_config --bindir 2>/dev/null || true)"
    if [[ -n "$dir" && -x "$dir/initdb" && -x "$dir/postgres" && -x "$dir/pg_ctl" ]]; then
      echo "$dir"
      return
    fi
  fi
  # Debian's server package without pg_config (libpq-dev): the newest major version.
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n -r); do
    if [[ -x "$dir/initdb" && -x "$dir/postgres" && -x "$dir/pg_ctl" ]]; then
      echo "$dir"
      return
    fi
  done
  return 1
}

install_postgres() {
  local dir
  if dir="$(pg_bindir)"; then
    log "postgres: server binaries in $dir ($("$dir/postgres" --version))"
    return
  fi
  [[ "$(id -u)" == 0 ]] || die "PostgreSQL server binaries not found; install them (apt-get install postgresql) as root"
  log "postgres: not found; apt-get install postgresql"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends postgresql postgresql-contrib libpq-dev >/dev/null
  dir="$(pg_bindir)" || die "PostgreSQL installed but no server binaries found"
  log "postgres: server binaries in $dir"
}

install_bench() {
  log "bench: pip install -e '.[bench]' (pgqueuer, celery[redis])"
  "$PYTHON" -m pip install --quiet -e '.[bench]'
  if command -v redis-server >/dev/null; then
    log "bench: $(redis-server --version | cut -d' ' -f1-3) already installed"
    return
  fi
  [[ "$(id -u)" == 0 ]] || die "redis-server not found; install it (apt-get install redis-server) as root"
  log "bench: redis-server not found; apt-get install redis-server (bench/compare starts its own)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends redis-server >/dev/null
  command -v redis-server >/dev/null || die "redis-server installed but not on PATH"
}

steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(python npm grpcurl postgres)
for step in "${steps[@]}"; do
  case "$step" in
    python) install_python ;;
    npm) install_npm ;;
    grpcurl) install_grpcurl ;;
    postgres) install_postgres ;;
    bench) install_bench ;;
    *) die "unknown step '$step' (python, npm, grpcurl, postgres, bench)" ;;
  esac
done
