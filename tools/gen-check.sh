#!/usr/bin/env bash
# Fail when the generated code under clients/ is not what protos/ produce.
# Regenerates into a temporary copy of the generated folders (the work tree is not
# touched) and compares the two; hand-written code beside them is not compared.
set -euo pipefail
export LC_ALL=C

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/taskyard-gen-check.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

# Python's stubs are every package under clients/python/taskyard but the hand-written
# client; the others are wholly generated folders (tools/gen.sh GENERATED_DIRS).
GENERATED=(clients/python/taskyard clients/go/gen clients/typescript/src/gen clients/java/src/main/java/dev/taskyard/v1)
EXCLUDE=(-x __pycache__ -x client -x py.typed)

# A copy, so stale files (a generated file whose proto was removed) show up too.
(cd "$ROOT" && tar --exclude='__pycache__' --exclude='clients/python/taskyard/client' -cf - "${GENERATED[@]}") \
  | tar -xf - -C "$TMP"
"$ROOT/tools/gen.sh" "$TMP"

stale=0
for dir in "${GENERATED[@]}"; do
  diff -r -q "${EXCLUDE[@]}" "$ROOT/$dir" "$TMP/$dir" >>"$TMP/summary" || stale=1
done
if [[ "$stale" == 0 ]]; then
  echo "gen-check: generated code is up to date"
  exit 0
fi
echo "gen-check: FAILED: generated code under clients/ differs from what protos/ produce:" >&2
sed -e "s|$TMP/|<regenerated>/|g" -e "s|$ROOT/||g" "$TMP/summary" >&2
echo "--- first lines of the diff (committed -> regenerated):" >&2
for dir in "${GENERATED[@]}"; do
  diff -r -u "${EXCLUDE[@]}" "$ROOT/$dir" "$TMP/$dir" || true
done | sed -e "s|$TMP/|<regenerated>/|g" -e "s|$ROOT/||g" | head -n 60 >&2
echo "gen-check: run 'make gen' and commit the result (the generators are pinned: tools/install-tools.sh codegen)." >&2
exit 1
