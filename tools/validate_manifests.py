"""Validate rendered Kubernetes manifests against Kubernetes' own schemas, offline.

    python tools/validate_manifests.py -k 1.31.0 rendered.yaml [more.yaml ...]

Every resource is checked by kubernetes-validate in strict mode (unknown fields fail). A kind
it has no schema for fails too (a misspelt apiVersion would otherwise pass with a warning),
except the custom resources listed in CUSTOM_KINDS, which the chart may render for operators
installed beside it: their schemas are the operators' CRDs, not Kubernetes'. They are named
in the output as not validated; tests/unit/test_helm_chart.py checks their shape.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]  # no stubs, no py.typed
import yaml

# (apiVersion, kind) of the custom resources the chart renders when asked.
CUSTOM_KINDS = frozenset(
    {
        ("monitoring.coreos.com/v1", "ServiceMonitor"),
        ("gateway.networking.k8s.io/v1", "GRPCRoute"),
        ("gateway.networking.k8s.io/v1", "HTTPRoute"),
    }
)


def _describe(resource: dict[str, Any]) -> str:
    name = (resource.get("metadata") or {}).get("name", "?")
    return f"{resource.get('kind')}/{name} ({resource.get('apiVersion')})"


def validate(path: Path, version: str) -> list[str]:
    """The problems of one file, each a line; prints what was checked."""
    problems: list[str] = []
    checked = 0
    skipped: Counter[str] = Counter()
    for resource in yaml.safe_load_all(path.read_text()):
        if not resource:
            continue
        if not isinstance(resource, dict) or "kind" not in resource or "apiVersion" not in resource:
            problems.append(f"{path.name}: a document without kind and apiVersion")
            continue
        if (resource["apiVersion"], resource["kind"]) in CUSTOM_KINDS:
            skipped[resource["kind"]] += 1
            continue
        try:
            kubernetes_validate.validate(resource, version, strict=True)
        except kubernetes_validate.SchemaNotFoundError:
            problems.append(f"{path.name}: {_describe(resource)}: Kubernetes {version} has no such kind")
        except kubernetes_validate.ValidationError as exc:
            problems.append(f"{path.name}: {_describe(resource)}: {exc.message}")
        checked += 1
    custom = ", ".join(f"{kind} x{n}" for kind, n in sorted(skipped.items()))
    print(
        f"{path.name}: {checked} resources against Kubernetes {version}"
        + (f"; custom resources not validated: {custom}" if custom else "")
    )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("-k", "--kubernetes-version", required=True)
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args(argv)
    problems = [p for f in args.files for p in validate(f, args.kubernetes_version)]
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
