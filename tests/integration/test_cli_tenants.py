"""``taskyard tenant ...`` and ``--tenant`` against a real cluster, run as real commands:
docs/cli.md's example, command by command, exactly as written there; and a suspended
tenant's submission refused, then taken once it is resumed."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
# Fields whose values are the moment's.
VOLATILE = {"id", "attempt", "worker_id", "created", "started", "finished", "updated", "suspended"}


def taskyard(target: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "taskyard.cli", *args, "--target", target],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def documented() -> list[tuple[str, list[str]]]:
    """Each ``$ taskyard ...`` line of the ``taskyard tenant`` section's example, with what it prints."""
    section = DOC.read_text().split("\n## taskyard tenant\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None, "docs/cli.md: the taskyard tenant section has no example"
    steps: list[tuple[str, list[str]]] = []
    for line in block.group(1).splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def _words(line: str) -> list[str]:
    """A line as words; a `...` word (a table's CREATED, the moment's) and what follows it is dropped."""
    words = line.split()
    return words[: words.index("...")] if "..." in words else words


def printed_in_order(printed: list[str], lines: list[str], command: str) -> None:
    expected = [
        _words(line)
        for line in printed
        if line != "..." and not (":" in line and line.split(":", 1)[0].strip() in VOLATILE)
    ]
    got = [line.split() for line in lines]
    at = 0
    for words in expected:
        while at < len(got) and got[at][: len(words)] != words:
            at += 1
        assert at < len(got), f"`{command}` did not print {' '.join(words)!r} (in order):\n" + "\n".join(
            lines
        )
        at += 1


def test_the_documented_example_runs_as_written(cluster: Any) -> None:
    steps = documented()
    assert [shlex.split(c)[1] for c, _ in steps] == ["tenant"] * 4 + ["--tenant"] + ["tenant"] * 2
    for command, printed in steps:
        args = shlex.split(command)
        assert args[0] == "taskyard"
        proc = taskyard(cluster.target, *args[1:])
        assert proc.returncode == 0, f"{command}\n{proc.stdout}{proc.stderr}"
        printed_in_order(printed, proc.stdout.splitlines(), command)


def test_a_suspended_tenants_submission_is_refused_and_taken_once_resumed(cluster: Any) -> None:
    assert taskyard(cluster.target, "tenant", "create", "globex").returncode == 0
    suspended = taskyard(cluster.target, "tenant", "suspend", "globex", "--yes")
    assert suspended.returncode == 0, suspended.stderr
    refused = taskyard(cluster.target, "--tenant", "globex", "task", "submit", "add", "1", "1")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.startswith("error: FAILED_PRECONDITION (TENANT_SUSPENDED): "), refused.stderr
    assert taskyard(cluster.target, "tenant", "resume", "globex").returncode == 0
    taken = taskyard(cluster.target, "task", "submit", "add", "1", "1", "--tenant", "globex", "-o", "json")
    assert taken.returncode == 0, taken.stderr
    assert json.loads(taken.stdout)["task"]["tenant"] == "globex"
    # The operator's listing across tenants says whose each task is; globex's own shows its own only.
    default = taskyard(cluster.target, "task", "submit", "add", "2", "2", "-o", "json")
    default_id = json.loads(default.stdout)["task"]["id"]
    across = taskyard(cluster.target, "task", "list").stdout.splitlines()
    assert across[0].split()[:3] == ["ID", "TENANT", "NAME"]
    assert {row.split()[0]: row.split()[1] for row in across[1:]} == {
        json.loads(taken.stdout)["task"]["id"]: "globex",
        default_id: "(default)",
    }
    own = taskyard(cluster.target, "task", "list", "--tenant", "globex").stdout.splitlines()
    assert own[0].split()[:2] == ["ID", "NAME"] and len(own) == 2


def test_an_unknown_tenant_is_not_found_and_a_bad_name_is_refused_before_any_call(cluster: Any) -> None:
    missing = taskyard(cluster.target, "tenant", "get", "initech")
    assert missing.returncode == 1 and missing.stderr.startswith("error: NOT_FOUND"), missing.stderr
    bad = taskyard(cluster.target, "--tenant", "Initech", "task", "list")
    assert bad.returncode == 2 and "the tenant name must be 1 to 64 characters of [a-z0-9-]" in bad.stderr


def _documented_python(section: str) -> str:
    text = (Path(__file__).resolve().parents[2] / "docs" / "python-client.md").read_text()
    part = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", part, re.S)
    assert blocks, f"docs/python-client.md: no example in {section}"
    return str(blocks[0])


def test_the_python_client_guide_on_tenants_runs_as_written(
    cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    with cluster.client() as client:
        exec(_documented_python("Tenants"), {"client": client})
        printed = capsys.readouterr().out.splitlines()
        assert printed[0].startswith("acme ACTIVE 50 Rate(units=100") and printed[0].endswith(" 2"), printed
        assert printed[1] == "globex ACTIVE 0 None 1", printed
        assert printed[2:] == ["acme 5", "acme"], printed
        acme = client.tenants.get("acme")
        assert (acme.max_concurrency, acme.rate, acme.weight) == (100, None, 2)
        assert not client.tenants.get("globex").suspended
