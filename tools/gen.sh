#!/usr/bin/env bash
# Regenerate every client under clients/ from protos/.
#
#   tools/gen.sh            regenerate in place (what `make gen` runs)
#   tools/gen.sh OUT_ROOT   write clients/ under OUT_ROOT instead (gen-check uses a temp copy)
#
# Python comes from grpc_tools.protoc (gen_python), with the bus contract module
# (tools/gen_contract.py); Go, TypeScript and Java from
# buf with the local plugins of buf.gen.yaml (gen_buf), installed by
# `tools/install-tools.sh codegen npm`.
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
  local files=() grpc_files=()
  mapfile -t files < <(proto_files)
  # The bus is NNG, not gRPC: its services declare envelope kinds (bus/v1/contract.proto),
  # so it gets no gRPC stubs; its contract module comes from gen_contract below.
  mapfile -t grpc_files < <(printf '%s\n' "${files[@]}" | grep -v '^taskyard/bus/')
  log "python: ${#files[@]} protos -> ${out#"$OUT_ROOT"/}"
  (cd "$PROTO_DIR" && "$PYTHON" -m grpc_tools.protoc \
    -I. -I"$wkt" \
    --python_out="$scratch" --pyi_out="$scratch" \
    --descriptor_set_out="$scratch/protos.binpb" --include_imports \
    "${files[@]}" &&
    "$PYTHON" -m grpc_tools.protoc -I. -I"$wkt" --grpc_python_out="$scratch" "${grpc_files[@]}") ||
    { rm -rf "$scratch"; die "protoc failed; committed stubs left as they were"; }
  # The bus contract (tools/gen_contract.py), from the same compiled protos.
  "$PYTHON" "$ROOT/tools/gen_contract.py" "$scratch/protos.binpb" "$scratch/taskyard/bus/v1/contract.py" ||
    { rm -rf "$scratch"; die "gen_contract failed; committed stubs left as they were"; }

  # Then swap: remove stubs of deleted protos, copy the new ones in.
  local dir
  while read -r dir; do
    mkdir -p "$out/$dir"
    find "$out/$dir" -maxdepth 1 -type f \
      \( -name '*_pb2.py' -o -name '*_pb2.pyi' -o -name '*_pb2_grpc.py' \) \
      -exec sh -c 'for f; do [ -e "$0/$(basename "$f")" ] || rm -f "$f"; done' "$scratch/$dir" {} +
    cp "$scratch/$dir"/*_pb2*.py* "$out/$dir/"
  done < <(proto_package_dirs)
  cp "$scratch/taskyard/bus/v1/contract.py" "$out/taskyard/bus/v1/contract.py"
  rm -rf "$scratch"
}

# --- Go, TypeScript, Java: buf generate with buf.gen.yaml ---------------------
# Each client's generated folder is wholly generated: it is replaced, so the stubs
# of a deleted proto go too. The TypeScript client also gets google.rpc's error
# details (BadRequest, ErrorInfo), which Go and Java take from their ecosystems'
# packages; their .proto comes from googleapis-common-protos (the Python deps).
GENERATED_DIRS=(clients/go/gen clients/typescript/src/gen clients/java/src/main/java/dev/taskyard/v1)

gen_buf() {
  local buf="$ROOT/node_modules/.bin/buf" tool
  [[ -x "$buf" ]] || die "buf not installed (tools/install-tools.sh npm)"
  for tool in protoc-gen-go protoc-gen-go-grpc protoc protoc-gen-grpc-java; do
    [[ -x "$ROOT/.tools/bin/$tool" ]] || die "$tool not in .tools/bin (tools/install-tools.sh codegen)"
  done
  local rpc
  rpc="$("$PYTHON" -c 'import google.rpc.error_details_pb2 as m, os; print(os.path.dirname(m.__file__))')"
  [[ -f "$rpc/error_details.proto" ]] || die "google/rpc/error_details.proto not found (pip install googleapis-common-protos)"

  local scratch
  scratch="$(mktemp -d)"
  mkdir -p "$scratch/rpc/google/rpc"
  cp "$rpc/error_details.proto" "$scratch/rpc/google/rpc/"
  log "go, typescript, java: buf generate -> ${GENERATED_DIRS[*]}"
  (
    cd "$ROOT"
    export PATH="$ROOT/.tools/bin:$ROOT/node_modules/.bin:$PATH"
    "$buf" generate -o "$scratch/out" &&
      "$buf" generate "$scratch/rpc" -o "$scratch/out" --template \
        '{"version":"v2","plugins":[{"local":"protoc-gen-es","out":"clients/typescript/src/gen","opt":["target=ts","import_extension=js"]}]}'
  ) || { rm -rf "$scratch"; die "buf generate failed; committed code left as it was"; }

  local dir
  for dir in "${GENERATED_DIRS[@]}"; do
    [[ -d "$scratch/out/$dir" ]] || { rm -rf "$scratch"; die "buf generated nothing into $dir"; }
    rm -rf "${OUT_ROOT:?}/$dir"
    mkdir -p "$(dirname "$OUT_ROOT/$dir")"
    cp -r "$scratch/out/$dir" "$OUT_ROOT/$dir"
  done
  rm -rf "$scratch"
}

main() {
  [[ -d "$PROTO_DIR" ]] || die "no protos/ in $ROOT"
  gen_python
  gen_buf
}

main
