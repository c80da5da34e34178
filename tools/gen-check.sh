#!/usr/bin/env bash
# Fail when the generated code under clients/ is not what protos/ produce.
# Regenerates into a temporary copy of clients/ (the work tree is not touched)
# and compares the two.
set -euo pipefail
export LC_ALL=C

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/taskyard-gen-check.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

# A copy, so stale files (a generated file whose proto was removed) show up too.
mkdir -p "$TMP/clients"
(cd "$ROOT" && tar --exclude='__pycache__' --exclude='node_modules' -cf - clients) | tar -xf - -C "$TMP"
"$ROOT/tools/gen.sh" "$TMP"

if diff -r -q -x '__pycache__' -x 'node_modules' "$ROOT/clients" "$TMP/clients" >"$TMP/summary"; then
  echo "gen-check: generated code is up to date"
  exit 0
fi
echo "gen-check: FAILED: generated code under clients/ differs from what protos/ produce:" >&2
sed -e "s|$TMP/clients|<regenerated>|g" -e "s|$ROOT/||g" "$TMP/summary" >&2
echo "--- first lines of the diff (committed -> regenerated):" >&2
diff -r -u -x '__pycache__' -x 'node_modules' "$ROOT/clients" "$TMP/clients" \
  | sed -e "s|$TMP/clients|<regenerated>|g" -e "s|$ROOT/||g" | head -n 60 >&2 || true
echo "gen-check: run 'make gen' and commit the result (grpcio-tools must be the pinned version)." >&2
exit 1
