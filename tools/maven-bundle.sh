#!/usr/bin/env bash
# The Java client's bundle for the Maven Central Portal, from clients/java:
#
#   tools/maven-bundle.sh OUT.zip          signed with gpg's default key
#   SIGN=0 tools/maven-bundle.sh OUT.zip   unsigned: to look at it (the Portal refuses it)
#
# Builds with the pom's release profile (the jar, its sources and javadoc jars), deploys
# them to a staging directory in Maven's repository layout (with the .md5 and .sha1 files
# Maven writes), signs each file with gpg (.asc; GPG_PASSPHRASE for a key with one, as in
# CI) and zips the version's directory: the layout the Portal's upload API takes.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ $# -eq 1 ]] || { echo "usage: tools/maven-bundle.sh OUT.zip" >&2; exit 2; }
out="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$ROOT/clients/java"
staging="$PWD/target/central-staging"
rm -rf "$staging"
mvn -B -q -Prelease -Dmaven.test.skip=true deploy -DaltDeploymentRepository="staging::file://$staging"
version="$(sed -n '/<artifactId>taskyard-client<\/artifactId>/{n;s/.*<version>\(.*\)<\/version>.*/\1/p;q}' pom.xml)"
dir="dev/taskyard/taskyard-client/$version"
[[ -f "$staging/$dir/taskyard-client-$version.jar" ]] || { echo "maven-bundle: nothing deployed in $staging/$dir" >&2; exit 1; }
for kind in "" -sources -javadoc; do
  [[ -f "$staging/$dir/taskyard-client-$version$kind.jar" ]] \
    || { echo "maven-bundle: taskyard-client-$version$kind.jar missing (the release profile makes it)" >&2; exit 1; }
done
if [[ "${SIGN:-1}" != 0 ]]; then
  passphrase=()
  [[ -z "${GPG_PASSPHRASE:-}" ]] || passphrase=(--pinentry-mode loopback --passphrase "$GPG_PASSPHRASE")
  for file in "$staging/$dir"/*.jar "$staging/$dir"/*.pom; do
    gpg --batch --yes "${passphrase[@]}" --armor --detach-sign "$file"
  done
fi
rm -f "$out"
# Only the version's directory, in the repository layout: the artifact-level
# maven-metadata.xml is the Portal's to write.
python3 - "$staging" "$dir" "$out" <<'PY'
import sys, zipfile
from pathlib import Path
staging, version_dir, out = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bundle:
    for file in sorted((staging / version_dir).iterdir()):
        bundle.write(file, f"{version_dir}/{file.name}")
PY
echo "maven-bundle: $out ($version)"
