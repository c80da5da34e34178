"""``taskyard redrive`` refuses bad input with a clear error and changes nothing, against
a real cluster: an empty filter without --all, a rate of 0 or below, an unknown group, a
task that is not a dead letter, no --rate, no terminal to confirm on without --yes."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner, Result
from support.cluster import Cluster
from support.waiting import wait_until

from taskyard.cli.main import cli
from taskyard.client import FailureFilter, TaskRequest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def test_bad_redrives_are_refused_and_change_nothing(cluster_factory: Callable[..., Cluster]) -> None:
    cluster = cluster_factory(task_modules=("taskyard.examples", "support.failing_tasks"))
    client: Any = cluster.client()
    client.submit_many([TaskRequest(name="charge", args=["timeout", n]) for n in range(3)])
    (group,) = wait_until(
        lambda: (g := client.failures.groups().items) and g[0].count == 3 and g, 60, "three dead letters"
    )
    succeeded = client.submit("add", 2, 3).id
    assert client.wait(succeeded, timeout=60).state.name == "SUCCESS"

    def run(*args: str) -> Result:
        return CliRunner().invoke(cli, ["redrive", *args, "--target", cluster.target])

    cases: list[tuple[tuple[str, ...], int, list[str]]] = [
        (("--rate", "50", "--yes"), 1, ["INVALID_ARGUMENT", "filter:", "all=true"]),
        (
            ("--group", group.group_id, "--rate", "0", "--yes"),
            1,
            ["INVALID_ARGUMENT", "rate:", "at least 0.01"],
        ),
        # Below the least rate: a redrive that would barely ever step.
        (("--group", group.group_id, "--rate", "0.001", "--yes"), 1, ["INVALID_ARGUMENT", "at least 0.01"]),
        (("--group", group.group_id, "--rate", "-1", "--yes"), 1, ["INVALID_ARGUMENT", "rate:"]),
        (("--group", "0123456789abcdef", "--rate", "50", "--yes"), 1, ["NOT_FOUND"]),
        (("--task", succeeded, "--rate", "50", "--yes"), 1, ["FAILED_PRECONDITION", succeeded]),
        (("--group", group.group_id), 2, ["--rate is required"]),
        # No terminal to ask on and no --yes: the dry run's count, then a refusal.
        (("--group", group.group_id, "--rate", "50"), 2, ["pass --yes"]),
    ]
    for args, status, said in cases:
        result = run(*args)
        assert result.exit_code == status, (args, result.output)
        for text in said:
            assert text in result.stderr, (args, result.stderr)
    # A dead letter says so, with its group (what `failures list --group` and `redrive` take).
    dead = client.failures.list(FailureFilter(group_id=group.group_id), page_size=1).items[0].task_id
    shown = CliRunner().invoke(cli, ["task", "get", dead, "--target", cluster.target])
    assert re.search(rf"^dead_letter:\s+retries-exhausted \(group {group.group_id}\)$", shown.stdout, re.M), (
        shown.stdout
    )
    listed = json.loads(run("list", "-o", "json").stdout)
    assert listed["redrives"] == []
    assert [g.count for g in client.failures.groups().items] == [3]
