#!/usr/bin/env bash
# Regenerate every client under clients/ from protos/.
#
#   tools/gen.sh            regenerate in place (what `make gen` runs)
#   tools/gen.sh OUT_ROOT   write clients/ under OUT_ROOT instead (gen-check uses a temp copy)
#
# One function per language; `main` runs them in order. Adding Go, TypeScript
# or Java later is one more `gen_<lang>` function and one more line in `main`.
# Output is deterministic: the same protos and the same pinned generator
# versions give byte-identical files, so the committed code can be checked.
set -euo pipefail
export LC_ALL=C

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT_ROOT="${1:-$ROOT}"
PROTO_DIR="$ROOT/protos"
PYTHON="${PYTHON:-python3}"

log() { printf 'gen: %s\n' "$*" >&2; }
die() { printf 'gen: error: %s\n' "$*" >&2; exit 1; }

# Every .proto under protos/, relative to it, in a stable order.
proto_files() {
  (cd "$PROTO_DIR" && find . -name '*.proto' -type f | sed 's|^\./||' | sort)
}

# Every proto package folder (taskyard/v1, taskyard/bus/v1, ...), relative to protos/.
proto_package_dirs() {
  proto_files | xargs -n1 dirname | sort -u
}

# --- Python: messages (.py), typing stubs (.pyi), gRPC stubs (_grpc.py) ------
# buf has no built-in gRPC-Python plugin, so Python comes from grpc_tools.protoc.
# Stubs refuse to import with a grpcio older than the grpcio-tools that made
# them, so the two must be the same version (pinned together in pyproject.toml).
gen_python() {
  local out="$OUT_ROOT/clients/python"
  "$PYTHON" - <<'PY' || die "grpcio and grpcio-tools must be installed at the same version (pip install -e '.[dev]')"
import sys
import grpc
import grpc_tools
from importlib.metadata import version
tools, runtime = version("grpcio-tools"), grpc.__version__
if tools != runtime:
    sys.exit(f"gen: grpcio-tools {tools} != grpcio {runtime}")
PY
  local wkt
  wkt="$("$PYTHON" -c 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')"
  [[ -f "$wkt/google/protobuf/struct.proto" ]] || die "well-known types not found in $wkt"

  # Generate into a scratch folder first: a proto that does not compile leaves
  # the committed stubs untouched (others may be importing them right now).
  local scratch
  scratch="$(mktemp -d)"
  local files=()
  mapfile -t files < <(proto_files)
  log "python: ${#files[@]} protos -> ${out#"$OUT_ROOT"/}"
  (cd "$PROTO_DIR" && "$PYTHON" -m grpc_tools.protoc \
    -I. -I"$wkt" \
    --python_out="$scratch" --pyi_out="$scratch" --grpc_python_out="$scratch" \
    "${files[@]}") || { rm -rf "$scratch"; die "protoc failed; committed stubs left as they were"; }

  # Then swap: remove stubs of deleted protos, copy the new ones in.
  local dir
  while read -r dir; do
    mkdir -p "$out/$dir"
    find "$out/$dir" -maxdepth 1 -type f \
      \( -name '*_pb2.py' -o -name '*_pb2.pyi' -o -name '*_pb2_grpc.py' \) \
      -exec sh -c 'for f; do [ -e "$0/$(basename "$f")" ] || rm -f "$f"; done' "$scratch/$dir" {} +
    cp "$scratch/$dir"/*_pb2*.py* "$out/$dir/"
  done < <(proto_package_dirs)
  rm -rf "$scratch"
}

main() {
  [[ -d "$PROTO_DIR" ]] || die "no protos/ in $ROOT"
  gen_python
  # Later: gen_go, gen_typescript, gen_java (buf generate with buf.gen.yaml).
}

main
