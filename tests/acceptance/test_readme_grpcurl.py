"""The README's grpcurl session, command for command, against a real cluster.

Every ``$ grpcurl ...`` line of the README's fenced blocks is run as written, with
``localhost:50051`` replaced by the cluster's gateway and the transcript's task id by
the id the SubmitTask of this run returned.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from support import grpcurl

pytestmark = pytest.mark.acceptance

README = Path(__file__).resolve().parents[2] / "README.md"
README_TARGET = "localhost:50051"
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def session_text() -> str:
    """The README's "A session with grpcurl" section (the API section has its own test)."""
    text = README.read_text()
    start = text.index("\n## A session with grpcurl")
    return text[start : text.index("\n## ", start + 1)]


def readme_commands() -> list[list[str]]:
    """Every ``$ grpcurl`` command of the session's fenced blocks, split like a shell would."""
    commands: list[list[str]] = []
    for block in FENCE.findall(session_text()):
        for line in block.splitlines():
            if line.startswith("$ grpcurl "):
                commands.append(shlex.split(line[2:]))
    return commands


def data_of(argv: list[str]) -> dict[str, Any] | None:
    if "-d" not in argv:
        return None
    data: dict[str, Any] = json.loads(argv[argv.index("-d") + 1])
    return data


def method_of(argv: list[str]) -> str:
    return argv[-1]


def test_readme_lists_the_session() -> None:
    commands = readme_commands()
    methods = [method_of(c) for c in commands]
    assert methods == [
        "list",
        "taskyard.v1.TaskService",  # describe
        "taskyard.v1.TaskService/SubmitTask",
        "taskyard.v1.TaskService/WaitTask",
        "taskyard.v1.TaskService/SubmitTask",
    ], commands
    assert all(README_TARGET in c for c in commands)


def test_readme_grpcurl_session_runs(cluster: Any) -> None:
    commands = readme_commands()
    wait_cmd = next(c for c in commands if method_of(c).endswith("/WaitTask"))
    wait_data = data_of(wait_cmd)
    assert wait_data is not None
    readme_id = wait_data["id"]
    submitted_id: str | None = None
    saw_wait = saw_unknown = False

    for argv in commands:
        assert argv[0] == "grpcurl"
        args = [cluster.target if a == README_TARGET else a for a in argv[1:]]
        method = method_of(argv)
        data = data_of(argv)
        if method.endswith("/WaitTask"):
            assert submitted_id is not None, "the README waits before it submits"
            args = [a.replace(readme_id, submitted_id) for a in args]

        name = data["task"]["name"] if data is not None and "task" in data else None
        unknown_name = method.endswith("/SubmitTask") and name != "add"
        proc = grpcurl.run_raw(args, check=not unknown_name)

        if unknown_name:
            # grpcurl exits with 64 + the gRPC status code (INVALID_ARGUMENT = 3).
            assert proc.returncode == 64 + 3, (proc.returncode, proc.stdout, proc.stderr)
            assert "Code: InvalidArgument" in proc.stderr, proc.stderr
            assert "UNKNOWN_TASK_NAME" in proc.stderr, proc.stderr
            assert cluster.count_tasks(name=name) == 0
            saw_unknown = True
        elif method == "list":
            assert "taskyard.v1.TaskService" in proc.stdout.split()
        elif method.endswith("/SubmitTask"):
            reply = json.loads(proc.stdout)
            assert reply["created"] is True
            # Usually QUEUED, as in the README; a fast dispatch may already show it leased.
            assert reply["task"]["state"].startswith("TASK_STATE_"), reply
            submitted_id = reply["task"]["id"]
        elif method.endswith("/WaitTask"):
            reply = json.loads(proc.stdout)
            assert reply["task"]["id"] == submitted_id
            assert reply["task"]["state"] == "TASK_STATE_SUCCESS", reply
            assert reply["task"]["result"] == 5
            saw_wait = True
        else:
            assert "rpc SubmitTask" in proc.stdout

    assert saw_wait and saw_unknown
