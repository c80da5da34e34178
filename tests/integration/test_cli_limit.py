"""``taskyard limit ...`` and ``task submit --limit`` against a real cluster, run as real commands:
docs/cli.md's example, command by command, exactly as written there."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
# Fields whose values are the moment's (ids, times, a worker, the scheduler's live usage).
VOLATILE = {
    "id",
    "attempt",
    "worker_id",
    "usage",
    "busiest_keys",
    "created",
    "started",
    "finished",
    "updated",
}
# `limit list`: IN USE, WAITING and THROTTLED are the scheduler's live numbers.
LIVE_COLUMNS = 3


def taskyard(target: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "taskyard.cli", *args, "--target", target],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def documented() -> list[tuple[str, list[str]]]:
    """Each ``$ taskyard ...`` line of the ``taskyard limit`` section's example, with what it prints."""
    section = DOC.read_text().split("\n## taskyard limit\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None, "docs/cli.md: the taskyard limit section has no example"
    steps: list[tuple[str, list[str]]] = []
    for line in block.group(1).splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def expected_lines(command: str, printed: list[str]) -> list[list[str]]:
    """The documented lines a run must print, in order, as words (tables align by content)."""
    out = []
    for line in printed:
        key = line.split(":", 1)[0].strip()
        if line == "..." or (":" in line and key in VOLATILE):
            continue
        words = line.split()
        out.append(
            words[:-LIVE_COLUMNS] if command == "taskyard limit list" and words[0] != "NAME" else words
        )
    return out


def printed_in_order(expected: list[list[str]], lines: list[str], command: str) -> None:
    got = [line.split() for line in lines]
    if command == "taskyard limit list":
        for row in got[1:]:
            assert all(x == "-" or x.isdigit() for x in row[-LIVE_COLUMNS:]), row
        got = [got[0], *(row[:-LIVE_COLUMNS] for row in got[1:])]
    at = 0
    for words in expected:
        while at < len(got) and got[at] != words:
            at += 1
        assert at < len(got), f"`{command}` did not print {' '.join(words)!r} (in order):\n" + "\n".join(
            lines
        )
        at += 1


def test_the_documented_example_runs_as_written(cluster: Any) -> None:
    steps = documented()
    assert [shlex.split(c)[1] for c, _ in steps] == ["limit"] * 2 + ["task"] + ["limit"] * 5
    for command, printed in steps:
        args = shlex.split(command)
        assert args[0] == "taskyard"
        proc = taskyard(cluster.target, *args[1:])
        assert proc.returncode == 0, f"{command}\n{proc.stdout}{proc.stderr}"
        printed_in_order(expected_lines(command, printed), proc.stdout.splitlines(), command)
    gone = taskyard(cluster.target, "limit", "get", "per-customer")
    assert gone.returncode == 1 and gone.stderr.startswith("error: NOT_FOUND"), gone.stderr


def test_an_unknown_limit_is_refused_and_nothing_is_stored(cluster: Any) -> None:
    proc = taskyard(cluster.target, "task", "submit", "add", "1", "2", "--limit", "no-such-limit=k")
    assert proc.returncode == 1 and proc.stdout == ""
    first, *violations = proc.stderr.splitlines()
    assert first.startswith("error: INVALID_ARGUMENT"), proc.stderr
    assert len(violations) == 1 and "limits[0].limit" in violations[0], proc.stderr
    assert "no-such-limit" in violations[0], proc.stderr
    listed = taskyard(cluster.target, "task", "list", "-o", "json")
    assert '"tasks": []' in listed.stdout, listed.stdout


def test_a_limit_in_use_is_deleted_only_by_force(cluster: Any) -> None:
    made = taskyard(cluster.target, "limit", "create", "reports", "--concurrency", "1")
    assert made.returncode == 0, made.stderr
    # SCHEDULED an hour ahead: not final, and holding the limit all the test long.
    waiting = taskyard(
        cluster.target, "task", "submit", "add", "1", "1", "--limit", "reports", "--countdown", "1h"
    )
    assert waiting.returncode == 0, waiting.stderr
    refused = taskyard(cluster.target, "limit", "delete", "reports", "--yes")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert refused.stderr.startswith("error: FAILED_PRECONDITION"), refused.stderr
    forced = taskyard(cluster.target, "limit", "delete", "reports", "--force", "--yes")
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout == "deleted reports: 1 tasks that used it run without it\n", forced.stdout


def test_update_changes_only_what_it_is_given(cluster: Any) -> None:
    made = taskyard(
        cluster.target, "limit", "create", "mail", "--rate", "10/min", "--burst", "5", "--description", "smtp"
    )
    assert made.returncode == 0, made.stderr

    def shown(*args: str) -> dict[str, str]:
        proc = taskyard(cluster.target, "limit", *args)
        assert proc.returncode == 0, proc.stderr
        return {
            k.strip(): v.strip() for k, _, v in (line.partition(":") for line in proc.stdout.splitlines())
        }

    per_key = shown("update", "mail", "--per-key")
    assert (per_key["limit"], per_key["per_key"], per_key["description"]) == (
        "10/min, burst 5",
        "yes",
        "smtp",
    )
    burst = shown("update", "mail", "--burst", "8", "--global")
    assert (burst["limit"], burst["per_key"]) == ("10/min, burst 8", "no")
    kind = shown("update", "mail", "--concurrency", "2")
    assert (kind["kind"], kind["limit"], kind["description"]) == ("concurrency", "2 at once", "smtp")
    assert shown("get", "mail")["limit"] == "2 at once"
