"""The Helm chart rendered by the helm that tools/install-tools.sh builds (.tools/bin/helm,
else one on PATH): skipped where there is none, a failure in CI."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from support.tools import missing

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy/helm/taskyard"
EXAMPLES = ROOT / "deploy/helm/examples"
# The Kubernetes version the chart is rendered for and validated against (make helm-check).
KUBE_VERSION = "1.31.0"
NAMESPACE = "taskyard"


def helm() -> str:
    found = ROOT / ".tools/bin/helm"
    if found.exists():
        return str(found)
    on_path = shutil.which("helm")
    if on_path:
        return on_path
    missing("helm is not installed (tools/install-tools.sh helm); CI must render the chart")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """helm with these arguments, from the repository's root."""
    return subprocess.run([helm(), *args], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)


def render(*args: str, release: str = "taskyard") -> list[dict[str, Any]]:
    """The chart's resources, rendered for KUBE_VERSION in NAMESPACE."""
    done = run("template", release, str(CHART), "--kube-version", KUBE_VERSION, "-n", NAMESPACE, *args)
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def refusal(*args: str) -> str:
    """What helm says when the chart refuses these values (it must)."""
    done = run("template", "taskyard", str(CHART), "--kube-version", KUBE_VERSION, "-n", NAMESPACE, *args)
    assert done.returncode != 0, "rendered, but should have been refused"
    return done.stderr


def of(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]
