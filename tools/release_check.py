#!/usr/bin/env python3
"""Check that every package a release publishes carries the release's version.

    python3 tools/release_check.py 0.2.0      (or v0.2.0, the tag)

The suite (pyproject.toml), the Python client (clients/python/pyproject.toml), the
TypeScript client (clients/typescript/package.json) and the Java client
(clients/java/pom.xml) must all say it; the Go client's version is its tag alone
(clients/go/vX.Y.Z). Exit 1 naming each one that differs, so a release tag on a tree
that was not bumped publishes nothing.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEMVER = re.compile(r"^v?(?P<version>\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)$")


def pom_version(pom: str) -> str:
    """The project's own <version> (the first after its artifactId), not a dependency's."""
    found = re.search(r"<artifactId>taskyard-client</artifactId>\s*<version>([^<]+)</version>", pom)
    return found[1] if found else "(none)"


def versions(root: Path) -> dict[str, str]:
    return {
        "pyproject.toml": tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"],
        "clients/python/pyproject.toml": tomllib.loads((root / "clients/python/pyproject.toml").read_text())[
            "project"
        ]["version"],
        "clients/typescript/package.json": json.loads((root / "clients/typescript/package.json").read_text())[
            "version"
        ],
        "clients/java/pom.xml": pom_version((root / "clients/java/pom.xml").read_text()),
    }


def main(argv: list[str]) -> int:
    match = SEMVER.match(argv[1]) if len(argv) == 2 else None
    if match is None:
        print("usage: tools/release_check.py X.Y.Z (or the tag vX.Y.Z)", file=sys.stderr)
        return 2
    wanted = match["version"]
    wrong = {path: found for path, found in versions(ROOT).items() if found != wanted}
    for path, found in wrong.items():
        print(f"release_check: {path} says {found}, not {wanted}", file=sys.stderr)
    if not wrong:
        print(f"release_check: every package says {wanted}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
