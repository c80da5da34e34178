#!/usr/bin/env bash
# Install everything Taskyard's checks and tests need; fast when it is all there.
#
#   tools/install-tools.sh            all steps
#   tools/install-tools.sh python npm only some: python npm grpcurl postgres
#   tools/install-tools.sh python-embedded   only what `taskyard dev` needs (make dev)
#   tools/install-tools.sh bench      bench/compare's peers (opt-in, see below)
#
# python    the project virtualenv .venv/ (made with $BASE_PYTHON, python3 unless set) and
#           pip install -e '.[dev]' into it (by uv, pinned, which pip puts in the venv first:
#           seconds where pip takes most of a minute; pip alone when uv cannot be had),
#           skipped while its stamp is newer than
#           pyproject.toml; with PYTHON=/some/python, into that one instead (always: it
#           points the editable install at THIS checkout)
# python-embedded  the same with pip install -e '.[embedded]': the services, the CLI and
#           the embedded PostgreSQL, no test or lint tools (make dev). Skipped while either
#           stamp is current ([dev] includes [embedded]); a venv that ever had [dev] is
#           re-installed with [dev], never narrowed
# npm       npm ci (buf and protoc-gen-es, pinned in package.json / package-lock.json), skipped
#           when current
# grpcurl   go install grpcurl into .tools/bin (the tests look there too), skipped when current
# postgres  checks for PostgreSQL server binaries; installs the Debian package when missing
#           (tests start their own throwaway cluster; nothing is started here)
# jaeger    Jaeger (all-in-one: OTLP 4317/4318, query API and web UI 16686) built from its
#           Go module into .tools/bin, kept in $TOOLS_CACHE between checkouts: the build takes
#           about 4 minutes on 2 cores, so it runs only when neither place has this version.
#           Its web UI's built assets (a binary built from the module has none) come from a Go
#           module through the Go module proxy, checked against pinned hashes, into
#           .tools/share/jaeger-ui (kept in $TOOLS_CACHE too; fetched only when neither has them)
# prometheus  Debian's prometheus and promtool (the observability tests start their own)
# helm      Helm 3 (go install, about 5 minutes on 2 cores) into .tools/bin, kept in
#           $TOOLS_CACHE between checkouts like Jaeger; make helm-check uses it. Linked
#           as Helm's release build is: its default Kubernetes version is its client-go's
#           (1.37 for v3.22.0), not the 1.20 a plain go install leaves, so `helm template`
#           without --kube-version renders the chart (kubeVersion >=1.27)
# codegen   the generators of the Go and Java clients, into .tools/bin: protoc-gen-go and
#           protoc-gen-go-grpc (go install), protoc and protoc-gen-grpc-java (from Maven
#           Central, checked against pinned SHA-256 sums); TypeScript's protoc-gen-es is npm's
# clients   the toolchains the Go, TypeScript and Java clients build with: Go modules,
#           npm ci in clients/typescript, Maven's dependencies (all cached by their tools)
# browser   Debian's chromium for the dashboard's browser tests (Playwright drives it; its own
#           browser download is never used)
# bench     opt-in, never part of "all steps" (CI stays fast): bench/compare's peers,
#           pip install -e '.[bench]' (pgqueuer, celery[redis]) and Debian's redis-server
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv"
# Written after a complete install: holds the checkout it was made for (a moved
# checkout needs a new venv: its scripts name their interpreter by full path).
# One stamp per level of extras: .[dev] (every make target but dev) and .[embedded]
# (make dev); an install of .[dev] writes both.
VENV_STAMP="$VENV/.taskyard-installed"
VENV_STAMP_EMBEDDED="$VENV/.taskyard-installed-embedded"
BASE_PYTHON="${BASE_PYTHON:-python3}"
# Unset, or this checkout's venv python (the Makefile's default): the venv is managed here.
USE_VENV=0
case "${PYTHON:-}" in
  "" | .venv/bin/python) USE_VENV=1 ;;
  */.venv/bin/python) [[ "$(cd "${PYTHON%/.venv/bin/python}" 2>/dev/null && pwd -P)" == "$(pwd -P)" ]] && USE_VENV=1 ;;
esac
[[ "$USE_VENV" == 0 ]] || PYTHON="$VENV/bin/python"
TOOLS_BIN="$ROOT/.tools/bin"
GRPCURL_VERSION="v1.9.3"
JAEGER_VERSION="v1.76.0"
# Jaeger UI v1.68.0, built: the public/ directory of this third-party Go module, each file
# gzip-compressed under its own name. Pinned by the module's go.sum hash (checked on fetch)
# and by a SHA-256 of the unpacked files (jaeger_ui_digest; checked on every copy).
JAEGER_UI_VERSION="v1.68.0"
JAEGER_UI_MODULE="github.com/tonistiigi/jaeger-ui-rest"
JAEGER_UI_MODULE_VERSION="v0.0.0-20250408171107-3dd17559e117"
JAEGER_UI_MODULE_SUM="h1:XFwyh2JZwR5aiKLXHX2C1n0v5F11dCJpyGL1W/Cpl3U="
JAEGER_UI_SHA256="9b9d4206cdd98b1ff946f21d196086f9aad6595e76770955b8d16eaf210c0917"
HELM_VERSION="v3.22.0"
# The installer of the venv's packages (install_venv).
UV_VERSION="0.13.9"
# Code generators (tools/gen.sh); a new version changes the committed clients (make gen).
PROTOC_GEN_GO_VERSION="v1.36.12"
PROTOC_GEN_GO_GRPC_VERSION="v1.6.2"
PROTOC_VERSION="4.36.2"
PROTOC_SHA256="f6ee22d65361338459208da8bff801c9ca689741cba9187b34990dd45198f864"
# 1.84 and 1.85 publish no linux-x86_64 executable; the generated code runs on grpc-java 1.85.
GRPC_JAVA_PLUGIN_VERSION="1.83.1"
GRPC_JAVA_PLUGIN_SHA256="db4044e78391d5a23439143c8147f07ba5877675587b4d48f3b68fbee3893589"
MAVEN_CENTRAL="https://repo.maven.apache.org/maven2"
# Built tools kept across checkouts (a fresh CI clone finds Jaeger here instead of rebuilding).
TOOLS_CACHE="${TASKYARD_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/taskyard/tools}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore PIP_NO_INPUT=1
# Never download a Go toolchain: build with the one installed.
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"

log() { printf '::: %s\n' "$*"; }
die() { printf 'install-tools: error: %s\n' "$*" >&2; exit 1; }

# The stamp of an install of .[LEVEL] (dev or embedded).
venv_stamp() {
  if [[ "$1" == dev ]]; then echo "$VENV_STAMP"; else echo "$VENV_STAMP_EMBEDDED"; fi
}

# Whether STAMP records an install into this checkout's venv no older than pyproject.toml.
stamp_current() {
  [[ -f "$1" && "$(cat "$1")" == "$ROOT" && ! pyproject.toml -nt "$1" ]]
}

# Whether .venv has .[LEVEL] installed and current: for embedded, [dev] counts too.
venv_current() {
  local level="$1"
  [[ -x "$VENV/bin/python" ]] || return 1
  stamp_current "$VENV_STAMP" || { [[ "$level" == embedded ]] && stamp_current "$VENV_STAMP_EMBEDDED"; } || return 1
  "$VENV/bin/python" -c '' 2>/dev/null
}

# A stamp made for another checkout (this one was moved or copied).
venv_foreign() {
  local stamp
  for stamp in "$VENV_STAMP" "$VENV_STAMP_EMBEDDED"; do
    [[ -f "$stamp" && "$(cat "$stamp")" != "$ROOT" ]] && return 0
  done
  return 1
}

install_venv() {
  local level="$1"
  if venv_current "$level"; then
    log "python: .venv already installed with [$level] ($("$PYTHON" --version 2>&1); pyproject.toml unchanged since)"
    return
  fi
  # A developer's venv stays whole: make dev after a pyproject.toml change re-installs [dev].
  if [[ "$level" == embedded && -f "$VENV_STAMP" ]] && ! venv_foreign; then level=dev; fi
  local started=$SECONDS
  if [[ ! -x "$VENV/bin/python" ]] || ! "$VENV/bin/python" -c '' 2>/dev/null || venv_foreign; then
    log "python: creating .venv with $BASE_PYTHON ($("$BASE_PYTHON" --version 2>&1))"
    rm -rf "$VENV"
    "$BASE_PYTHON" -m venv "$VENV"
  fi
  rm -f "$VENV_STAMP" "$VENV_STAMP_EMBEDDED"
  if "$PYTHON" -m pip install --quiet "uv==$UV_VERSION" 2>/dev/null; then
    log "python: uv pip install -e '.[$level]' into .venv"
    "$VENV/bin/uv" pip install --quiet --compile-bytecode --python "$PYTHON" -e ".[$level]"
  else
    log "python: pip install -e '.[$level]' into .venv (uv $UV_VERSION could not be installed)"
    "$PYTHON" -m pip install --quiet -e ".[$level]"
  fi
  check_editable
  compile_sources
  # [dev] includes [embedded]: both stamps.
  echo "$ROOT" >"$(venv_stamp "$level")"
  [[ "$level" == embedded ]] || echo "$ROOT" >"$VENV_STAMP_EMBEDDED"
  log "python: .venv ready with [$level] in $((SECONDS - started))s"
}

install_python() {
  local level="$1"
  if [[ "$USE_VENV" == 1 ]]; then
    install_venv "$level"
    return
  fi
  log "python: pip install -e '.[$level]' ($("$PYTHON" --version 2>&1))"
  "$PYTHON" -m pip install --quiet -e ".[$level]"
  check_editable
  compile_sources
}

# The checkout's own modules compiled, as the installer compiles what it installs: where
# PYTHONDONTWRITEBYTECODE is set (this machine's environment is so), every process would
# otherwise compile each module it imports, about 0.6 CPU-s for the services' alone.
compile_sources() {
  "$PYTHON" -m compileall -q -j 0 services clients/python tests >/dev/null
}

# The editable install must import from this checkout, not from another clone.
check_editable() {
  local where
  where="$(cd / && "$PYTHON" -c 'import taskyard.core, os; print(os.path.dirname(taskyard.core.__file__))')"
  [[ "$where" == "$ROOT/"* ]] || die "taskyard.core imports from $where, not from this checkout ($ROOT)"
}

install_npm() {
  local want have="" want_es have_es=""
  want="$(node -p "require('./package-lock.json').packages['node_modules/@bufbuild/buf'].version")"
  want_es="$(node -p "require('./package-lock.json').packages['node_modules/@bufbuild/protoc-gen-es'].version")"
  if [[ -x node_modules/.bin/buf ]]; then have="$(node_modules/.bin/buf --version 2>/dev/null || true)"; fi
  if [[ -f node_modules/@bufbuild/protoc-gen-es/package.json ]]; then
    have_es="$(node -p "require('./node_modules/@bufbuild/protoc-gen-es/package.json').version")"
  fi
  if [[ "$have" == "$want" && "$have_es" == "$want_es" ]]; then
    log "npm: buf $have and protoc-gen-es $have_es already installed"
    return
  fi
  log "npm: npm ci (buf $want, protoc-gen-es $want_es)"
  npm ci --no-audit --no-fund --loglevel=error
  [[ "$(node_modules/.bin/buf --version)" == "$want" ]] || die "buf $want did not install"
  [[ -x node_modules/.bin/protoc-gen-es ]] || die "protoc-gen-es $want_es did not install"
}

install_grpcurl() {
  command -v go >/dev/null || die "go is not installed (needed for grpcurl)"
  local bin="$TOOLS_BIN" started=$SECONDS
  if [[ -x "$bin/grpcurl" ]] && go version -m "$bin/grpcurl" 2>/dev/null \
      | grep -Eq "^[[:space:]]+mod[[:space:]]+github.com/fullstorydev/grpcurl[[:space:]]+${GRPCURL_VERSION}([[:space:]]|$)"; then
    log "grpcurl: $GRPCURL_VERSION already in .tools/bin"
  else
    log "grpcurl: go install github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION -> .tools/bin"
    GOBIN="$bin" go install "github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION"
    log "grpcurl: installed in $((SECONDS - started))s"
  fi
  case ":$PATH:" in
    *":$bin:"*) ;;
    *) log "grpcurl: for the README's session, export PATH=\"$bin:\$PATH\"" ;;
  esac
}

# go install PACKAGE@VERSION into .tools/bin unless the binary there was built from it.
go_tool() {
  local pkg="$1" version="$2" module="$3" name
  name="$(basename "$pkg")"
  if [[ -x "$TOOLS_BIN/$name" ]] && go version -m "$TOOLS_BIN/$name" 2>/dev/null \
      | grep -Eq "^[[:space:]]+mod[[:space:]]+$module[[:space:]]+$version([[:space:]]|$)"; then
    return
  fi
  log "codegen: go install $pkg@$version -> .tools/bin"
  GOBIN="$TOOLS_BIN" go install "$pkg@$version"
}

# An executable from Maven Central into .tools/bin, verified by its pinned SHA-256.
maven_exe() {
  local path="$1" name="$2" sha="$3" tmp
  if [[ -x "$TOOLS_BIN/$name" ]] && echo "$sha  $TOOLS_BIN/$name" | sha256sum -c --status; then
    return
  fi
  log "codegen: $name from Maven Central"
  mkdir -p "$TOOLS_BIN"
  tmp="$(mktemp "$TOOLS_BIN/.$name.XXXXXX")"
  curl -fsSL --retry 3 -o "$tmp" "$MAVEN_CENTRAL/$path" || { rm -f "$tmp"; die "$name: download failed"; }
  echo "$sha  $tmp" | sha256sum -c --status || { rm -f "$tmp"; die "$name: SHA-256 does not match the pin"; }
  chmod +x "$tmp"
  mv "$tmp" "$TOOLS_BIN/$name"
}

install_codegen() {
  command -v go >/dev/null || die "go is not installed (needed for the Go generators)"
  # protoc and protoc-gen-grpc-java are native executables, pinned by checksum for this platform.
  [[ "$(uname -sm)" == "Linux x86_64" ]] \
    || die "codegen: pinned protoc and protoc-gen-grpc-java are for Linux x86_64, not $(uname -sm)"
  go_tool google.golang.org/protobuf/cmd/protoc-gen-go "$PROTOC_GEN_GO_VERSION" google.golang.org/protobuf
  go_tool google.golang.org/grpc/cmd/protoc-gen-go-grpc "$PROTOC_GEN_GO_GRPC_VERSION" google.golang.org/grpc/cmd/protoc-gen-go-grpc
  maven_exe "com/google/protobuf/protoc/$PROTOC_VERSION/protoc-$PROTOC_VERSION-linux-x86_64.exe" \
    protoc "$PROTOC_SHA256"
  maven_exe "io/grpc/protoc-gen-grpc-java/$GRPC_JAVA_PLUGIN_VERSION/protoc-gen-grpc-java-$GRPC_JAVA_PLUGIN_VERSION-linux-x86_64.exe" \
    protoc-gen-grpc-java "$GRPC_JAVA_PLUGIN_SHA256"
  log "codegen: protoc-gen-go $PROTOC_GEN_GO_VERSION, protoc-gen-go-grpc $PROTOC_GEN_GO_GRPC_VERSION, protoc $PROTOC_VERSION, protoc-gen-grpc-java $GRPC_JAVA_PLUGIN_VERSION"
}

# The SHA-256 of the files named (a step's inputs) and of the tool versions given on stdin.
inputs_digest() { { cat; cat "$@"; } | sha256sum | cut -d' ' -f1; }

# npm ci in $1, skipped when its node_modules was installed from the same lock file by the
# same node (npm ci would delete node_modules and install it again: 2 s a project).
npm_ci() {
  local dir=$1 digest stamp="$1/node_modules/.taskyard-installed"
  digest="$(node --version | inputs_digest "$dir/package-lock.json")"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$digest" ]]; then
    return
  fi
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$digest" >"$stamp"
}

install_clients() {
  local started=$SECONDS java_digest java_stamp="$HOME/.m2/taskyard-installed/clients-java"
  command -v go >/dev/null || die "go is not installed (the Go client)"
  command -v mvn >/dev/null || die "mvn is not installed (the Java client)"
  log "clients: go mod download"
  (cd clients/go && go mod download) && (cd clients/go/examples && go mod download)
  # The transactional enqueue examples in Go (pgx) and Node (pg), which the tests run.
  (cd examples/transactional/go && go mod download)
  npm_ci examples/transactional/node
  log "clients: npm ci in clients/typescript"
  npm_ci clients/typescript
  # Resolving the pom again costs 5 s when nothing changed: the stamp lives in the Maven
  # repository it describes, so a cleared repository resolves again.
  java_digest="$(mvn --version 2>/dev/null | inputs_digest clients/java/pom.xml)"
  if [[ -f "$java_stamp" && "$(cat "$java_stamp")" == "$java_digest" ]]; then
    log "clients: Maven dependencies of clients/java already resolved (pom.xml unchanged since)"
  else
    log "clients: Maven dependencies of clients/java"
    (cd clients/java && mvn -q -B dependency:go-offline >/dev/null) || die "clients/java: Maven could not resolve its dependencies"
    mkdir -p "$(dirname "$java_stamp")" && echo "$java_digest" >"$java_stamp"
  fi
  log "clients: ready in $((SECONDS - started))s"
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

# The binary records the module of the command it was built from, with its version.
jaeger_is_current() {
  go version -m "$1" 2>/dev/null \
    | grep -Eq "^[[:space:]]+mod[[:space:]]+github.com/jaegertracing/jaeger[[:space:]]+${JAEGER_VERSION}([[:space:]]|$)"
}

install_jaeger() {
  local bin="$TOOLS_BIN/jaeger" cached="$TOOLS_CACHE/jaeger-$JAEGER_VERSION"
  if [[ -x "$bin" ]] && jaeger_is_current "$bin"; then
    log "jaeger: $JAEGER_VERSION already in .tools/bin"
    return
  fi
  mkdir -p "$TOOLS_BIN"
  if [[ -x "$cached" ]] && jaeger_is_current "$cached"; then
    cp "$cached" "$bin"
    log "jaeger: $JAEGER_VERSION from $TOOLS_CACHE"
    return
  fi
  command -v go >/dev/null || die "go is not installed (needed to build Jaeger)"
  local started=$SECONDS work
  work="$(mktemp -d)"
  # `go install` of Jaeger's command refuses its module (it has replace
  # directives), so a throwaway module depends on it and applies the one
  # replace the build needs.
  log "jaeger: building $JAEGER_VERSION from its Go module (about 4 minutes on 2 cores)"
  (
    cd "$work"
    go mod init taskyard.local/jaeger-build >/dev/null 2>&1
    go mod edit -replace github.com/Shopify/sarama=github.com/Shopify/sarama@v1.33.0
    go get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION"
    go build -o "$bin" github.com/jaegertracing/jaeger/cmd/jaeger
  ) >"$work.log" 2>&1 || { tail -n 20 "$work.log" >&2; rm -rf "$work"; die "jaeger: build failed (Go >= 1.24 needed)"; }
  rm -f "$work.log"
  rm -rf "$work"
  mkdir -p "$TOOLS_CACHE" && cp "$bin" "$cached.tmp" && mv "$cached.tmp" "$cached"
  log "jaeger: built in $((SECONDS - started))s (cached in $TOOLS_CACHE)"
}

# One SHA-256 over the sha256sum lines of every file under $1, in byte order of their paths.
jaeger_ui_digest() {
  (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1
}

jaeger_ui_is_current() {
  [[ -f "$1/index.html" && "$(jaeger_ui_digest "$1")" == "$JAEGER_UI_SHA256" ]]
}

# The UI's assets from the Go module proxy into $1 (a new directory), checked against both pins.
fetch_jaeger_ui() {
  local into="$1" work json dir sum file
  command -v go >/dev/null || die "go is not installed (needed to fetch the Jaeger UI)"
  work="$(mktemp -d)"
  # Outside any module: `go mod download` then fetches just this one, verified by the checksum database.
  json="$(cd "$work" && go mod download -json "$JAEGER_UI_MODULE@$JAEGER_UI_MODULE_VERSION")" \
    || { rm -rf "$work"; die "jaeger: fetching the UI ($JAEGER_UI_MODULE@$JAEGER_UI_MODULE_VERSION) failed: $json"; }
  rm -rf "$work"
  dir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")"
  sum="$(sed -n 's/^[[:space:]]*"Sum": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")"
  [[ "$sum" == "$JAEGER_UI_MODULE_SUM" ]] \
    || die "jaeger: the UI module's hash is ${sum:-missing}, not the pinned $JAEGER_UI_MODULE_SUM"
  [[ -f "$dir/public/index.html" ]] || die "jaeger: no public/index.html in $dir"
  mkdir -p "$into"
  cp -R "$dir/public/." "$into/"
  chmod -R u+w "$into"
  while IFS= read -r -d '' file; do
    gzip -dc "$file" >"$file.unpacked" && mv "$file.unpacked" "$file" || die "jaeger: cannot unpack $file"
  done < <(find "$into" -type f -print0)
  jaeger_ui_is_current "$into" \
    || die "jaeger: the unpacked UI's SHA-256 is $(jaeger_ui_digest "$into"), not the pinned $JAEGER_UI_SHA256"
}

# .tools/share/jaeger-ui, where taskyard.cli.jaeger looks (beside .tools/bin/jaeger).
install_jaeger_ui() {
  local dest="$ROOT/.tools/share/jaeger-ui" cached="$TOOLS_CACHE/jaeger-ui-$JAEGER_UI_VERSION"
  if jaeger_ui_is_current "$dest"; then
    log "jaeger: UI $JAEGER_UI_VERSION already in .tools/share/jaeger-ui"
    return
  fi
  if jaeger_ui_is_current "$cached"; then
    log "jaeger: UI $JAEGER_UI_VERSION from $TOOLS_CACHE"
  else
    log "jaeger: fetching UI $JAEGER_UI_VERSION ($JAEGER_UI_MODULE@$JAEGER_UI_MODULE_VERSION) through the Go module proxy"
    mkdir -p "$TOOLS_CACHE"
    rm -rf "$cached.tmp"
    fetch_jaeger_ui "$cached.tmp"
    rm -rf "$cached"
    mv "$cached.tmp" "$cached"
    log "jaeger: UI $JAEGER_UI_VERSION fetched and checked (cached in $TOOLS_CACHE)"
  fi
  mkdir -p "$(dirname "$dest")"
  rm -rf "$dest" "$dest.tmp"
  cp -R "$cached" "$dest.tmp"
  mv "$dest.tmp" "$dest"
  jaeger_ui_is_current "$dest" || die "jaeger: the UI copied to $dest does not match its pin"
}

# Helm for make helm-check: go install into .tools/bin unless the binary there (or the
# copy kept in $TOOLS_CACHE, which a fresh clone reuses) was built from this version,
# linked with the default Kubernetes version of Helm's own Makefile (one above client-go's
# major, its minor): unset, Helm says 1.20 and refuses every chart that needs more.
install_helm() {
  local bin="$TOOLS_BIN/helm" cached="$TOOLS_CACHE/helm-$HELM_VERSION" started=$SECONDS kube
  if helm_is_current "$bin"; then
    log "helm: $HELM_VERSION already in .tools/bin"
    return
  fi
  mkdir -p "$TOOLS_BIN"
  if helm_is_current "$cached"; then
    cp "$cached" "$bin"
    log "helm: $HELM_VERSION from $TOOLS_CACHE"
    return
  fi
  command -v go >/dev/null || die "go is not installed (needed to build Helm)"
  kube="$(helm_kube_version)" || die "helm: cannot read the client-go version of helm.sh/helm/v3@$HELM_VERSION"
  local major="${kube%%.*}" minor="${kube#*.}" flags="" pkg
  for pkg in pkg/chartutil pkg/lint/rules; do
    flags+=" -X helm.sh/helm/v3/$pkg.k8sVersionMajor=$major -X helm.sh/helm/v3/$pkg.k8sVersionMinor=$minor"
  done
  flags+=" -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
  log "helm: go install helm.sh/helm/v3/cmd/helm@$HELM_VERSION -> .tools/bin, default Kubernetes $kube (about 5 minutes on 2 cores)"
  GOBIN="$TOOLS_BIN" go install -ldflags "${flags# }" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  mkdir -p "$TOOLS_CACHE" && cp "$bin" "$cached.tmp" && mv "$cached.tmp" "$cached"
  log "helm: installed in $((SECONDS - started))s (cached in $TOOLS_CACHE)"
}

# The Kubernetes version Helm's release build defaults to, from its go.mod's client-go:
# v0.37.0 -> 1.37.
helm_kube_version() {
  local gomod client_go
  gomod="$(go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
  [[ -f "$gomod" ]] || return 1
  client_go="$(sed -n 's/^[[:space:]]*k8s.io\/client-go v0\.\([0-9]*\)\..*/\1/p' "$gomod")"
  [[ -n "$client_go" ]] || return 1
  echo "1.$client_go"
}

# Built from this version, and linked with its client-go's minor as the default Kubernetes
# version (both read from the binary's own build information: no download).
helm_is_current() {
  local info minor
  [[ -x "$1" ]] || return 1
  info="$(go version -m "$1" 2>/dev/null)" || return 1
  grep -Eq "^[[:space:]]+mod[[:space:]]+helm.sh/helm/v3[[:space:]]+${HELM_VERSION}([[:space:]]|$)" <<<"$info" || return 1
  minor="$(sed -n 's/^[[:space:]]*dep[[:space:]]*k8s.io\/client-go[[:space:]]*v0\.\([0-9]*\)\..*/\1/p' <<<"$info")"
  [[ -n "$minor" ]] && grep -q "chartutil.k8sVersionMinor=$minor " <<<"$info"
}

install_prometheus() {
  if command -v prometheus >/dev/null && command -v promtool >/dev/null; then
    log "prometheus: $(prometheus --version 2>&1 | head -n1 | cut -d' ' -f1-3) already installed"
    return
  fi
  [[ "$(id -u)" == 0 ]] || die "prometheus/promtool not found; install them (apt-get install prometheus) as root"
  log "prometheus: not found; apt-get install prometheus (the tests start their own)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  command -v promtool >/dev/null || die "prometheus installed but promtool not on PATH"
}

install_browser() {
  if [[ -x /usr/bin/chromium ]]; then
    log "browser: $(/usr/bin/chromium --version 2>/dev/null | head -n1) already installed"
    return
  fi
  [[ "$(id -u)" == 0 ]] || die "chromium not found; install it (apt-get install chromium) as root"
  log "browser: apt-get install chromium (the dashboard tests drive it with Playwright)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium >/dev/null
  [[ -x /usr/bin/chromium ]] || die "chromium installed but /usr/bin/chromium is missing"
}

install_bench() {
  [[ "$USE_VENV" == 0 ]] || venv_current dev || install_venv dev
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
    python) install_python dev ;;
    python-embedded) install_python embedded ;;
    npm) install_npm ;;
    grpcurl) install_grpcurl ;;
    postgres) install_postgres ;;
    jaeger) install_jaeger; install_jaeger_ui ;;
    prometheus) install_prometheus ;;
    helm) install_helm ;;
    codegen) install_codegen ;;
    browser) install_browser ;;
    clients) install_clients ;;
    bench) install_bench ;;
    *) die "unknown step '$step' (python, python-embedded, npm, grpcurl, postgres, jaeger, prometheus, helm, codegen, clients, browser, bench)" ;;
  esac
done
