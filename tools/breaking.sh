#!/usr/bin/env bash
# buf breaking (FILE rules) of protos/ against an earlier version of them.
#
# Baseline, first match wins:
#   $BREAKING_AGAINST            any git ref (e.g. origin/main, v0.3.0, HEAD)
#   main, when not on main       what this branch would change on main
#   HEAD~1, when on main         the previous commit (CI runs on a clone of main)
# When the baseline does not exist or has no protos/ (the first commit, a
# shallow clone), there is nothing to break: say so and pass.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUF="${BUF:-$ROOT/node_modules/.bin/buf}"
cd "$ROOT"

[[ -x "$BUF" ]] || { echo "breaking: $BUF not found; run 'npm ci'" >&2; exit 1; }

if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "breaking: SKIPPED: not a git checkout, no baseline to compare against"
  exit 0
fi

branch="$(git rev-parse --abbrev-ref HEAD 2>/dev/null || echo HEAD)"
if [[ -n "${BREAKING_AGAINST:-}" ]]; then
  against="$BREAKING_AGAINST"
elif [[ "$branch" != "main" ]] && git rev-parse --verify --quiet main^{commit} >/dev/null; then
  against="main"
else
  against="HEAD~1"
fi

if ! commit="$(git rev-parse --verify --quiet "${against}^{commit}")"; then
  echo "breaking: SKIPPED: baseline '$against' does not exist (first commit or shallow clone)"
  exit 0
fi
if ! git cat-file -e "${commit}:protos" 2>/dev/null; then
  echo "breaking: SKIPPED: baseline '$against' (${commit:0:12}) has no protos/"
  exit 0
fi

echo "breaking: buf breaking (FILE; the bus package by PACKAGE) against '$against' (${commit:0:12})"
"$BUF" breaking --against ".git#ref=${commit},subdir=protos"
echo "breaking: no breaking changes"
