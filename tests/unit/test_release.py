"""What a release is made of: the package's extras (each level costs only what it needs),
the Python client's own distribution, the version check, and the release workflow that a
maintainer's tag runs (.github/workflows/release.yml, docs/releasing.md)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
# The actions the workflow may use: well-known ones, each pinned to the commit of a
# published release (a tag or a branch can be moved under jobs that hold id-token: write
# and the publishing secrets), with that release in a trailing comment.
KNOWN_ACTIONS = {
    "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683": "v4.2.2",
    "actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065": "v5.6.0",
    "actions/setup-node@49933ea5288caeca8642d1e84afbd3f7d6820020": "v4.4.0",
    "actions/setup-java@c5195efecf7bdfc987ee8bae7a71cb8b11521c00": "v4.7.1",
    "actions/setup-go@d35c59abb061a4a6fb18e82ac0862c26744d6ab5": "v5.5.0",
    "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02": "v4.6.2",
    "actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093": "v4.3.0",
    "pypa/gh-action-pypi-publish@76f52bc884231f62b9a034ebfe128415bbaabdfc": "v1.12.4",
}
PYPI_PUBLISH = "pypa/gh-action-pypi-publish@76f52bc884231f62b9a034ebfe128415bbaabdfc"


def project(path: str) -> dict[str, Any]:
    data: dict[str, Any] = tomllib.loads((ROOT / path).read_text())["project"]
    return data


def names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_running_needs_no_test_or_lint_tools() -> None:
    suite = project("pyproject.toml")
    extras = suite["optional-dependencies"]
    base = names(suite["dependencies"])
    assert "pgserver" not in base, "the embedded PostgreSQL is an extra: an image has no use for it"
    assert names(extras["embedded"]) == {"pgserver"}
    dev_tools = {"mypy", "ruff", "grpcio-tools", "kubernetes-validate", "types-protobuf", "grpc-stubs"}
    assert not (base | names(extras["embedded"]) | names(extras["test"])) & dev_tools
    assert not base & {"pytest", "playwright", "cryptography"}
    assert "taskyard[embedded]" in extras["test"]
    assert "taskyard[embedded,test]" in extras["dev"]
    assert dev_tools <= names(extras["dev"])


def test_python_client_distribution() -> None:
    client = tomllib.loads((ROOT / "clients/python/pyproject.toml").read_text())
    suite = project("pyproject.toml")
    assert client["project"]["name"] == "taskyard-client"
    assert client["project"]["version"] == suite["version"]
    assert client["tool"]["setuptools"]["packages"] == [
        "taskyard.client",
        "taskyard.v1",
        "taskyard.worker.v1",
    ]
    # Whatever the client needs, the suite has too (it carries the same modules).
    assert names(client["project"]["dependencies"]) <= names(suite["dependencies"])


def release_check(version: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "release_check.py"), version], capture_output=True, text=True
    )


def test_release_check_wants_every_package_at_the_tags_version() -> None:
    version = project("pyproject.toml")["version"]
    assert release_check(f"v{version}").returncode == 0
    other = release_check("99.0.0")
    assert other.returncode == 1
    for path in ("clients/python/pyproject.toml", "clients/typescript/package.json", "clients/java/pom.xml"):
        assert f"{path} says {version}, not 99.0.0" in other.stderr
    assert release_check("latest").returncode == 2


def workflow() -> dict[Any, Any]:
    loaded: dict[Any, Any] = yaml.safe_load(WORKFLOW.read_text())
    return loaded


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = job["steps"]
    return found


def runs(job: dict[str, Any]) -> str:
    return "\n".join(str(step.get("run", "")) for step in steps(job))


def test_release_workflow_runs_on_a_version_tag() -> None:
    # YAML 1.1 reads the key `on` as True.
    loaded = workflow()
    triggers = loaded["on"] if "on" in loaded else loaded[True]
    assert triggers["push"]["tags"] == ["v[0-9]+.[0-9]+.[0-9]+*"]
    assert "workflow_dispatch" in triggers


def test_release_workflow_pins_every_action_to_a_commit() -> None:
    used = re.findall(r"^\s*(?:- )?uses: (\S+)(.*)$", WORKFLOW.read_text(), re.M)
    assert used
    for action, rest in used:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", action), f"{action}: not pinned to a commit"
        assert action in KNOWN_ACTIONS, action
        assert rest.strip() == f"# {KNOWN_ACTIONS[action]}", f"{action}: its release in a comment"


def test_release_workflow_jobs() -> None:
    jobs = workflow()["jobs"]
    assert set(jobs) == {"version", "python-build", "pypi", "npm", "maven", "go"}
    for name, job in jobs.items():
        for step in steps(job):
            if "uses" in step:
                assert step["uses"] in KNOWN_ACTIONS, f"{name}: {step['uses']} is not a pinned known action"
        for script in re.findall(r"tools/[\w.-]+", runs(job)):
            assert (ROOT / script).is_file(), f"{name} runs {script}, which does not exist"
    assert "tools/release_check.py" in runs(jobs["version"])
    assert "python -m build --outdir dist ." in runs(jobs["python-build"])
    assert "python -m build --outdir dist clients/python" in runs(jobs["python-build"])
    pypi = jobs["pypi"]
    assert pypi["permissions"]["id-token"] == "write"
    assert any(s.get("uses") == PYPI_PUBLISH for s in steps(pypi))
    assert jobs["npm"]["permissions"]["id-token"] == "write"
    assert "npm publish --provenance" in runs(jobs["npm"])
    assert "tools/maven-bundle.sh" in runs(jobs["maven"])
    assert "central.sonatype.com/api/v1/publisher/upload" in runs(jobs["maven"])
    assert jobs["go"]["permissions"]["contents"] == "write"
    assert 'tag="clients/go/v${{ needs.version.outputs.version }}"' in runs(jobs["go"])
    # Publishing only from a tag: a run by hand builds and checks.
    for job, publish in (("npm", "npm publish"), ("maven", "publisher/upload"), ("go", "git push")):
        step = next(s for s in steps(jobs[job]) if publish in str(s.get("run", "")))
        assert step.get("if") == "env.PUBLISH == 'true'", (job, step)
    assert pypi["if"] == "github.event_name == 'push'"
