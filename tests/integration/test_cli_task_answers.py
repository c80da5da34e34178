"""What the CLI says back, against a real cluster: payload numbers as they were
sent, a cancel's outcome in words, ``task retry``, and queue columns named by
the states they count."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from click.testing import CliRunner, Result
from support.waiting import wait_until

from taskyard.cli.main import cli

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def rows(text: str) -> dict[str, str]:
    """``key: value`` lines of a table view."""
    return {k.strip(): v.strip() for k, sep, v in (line.partition(":") for line in text.splitlines()) if sep}


def test_json_and_yaml_print_integral_payload_numbers_as_integers(cluster: Any) -> None:
    t = cluster.target
    submitted = run(
        "task", "submit", "echo", "2", "2.5", "--kwargs", '{"n": 7}', "--wait", "-o", "json", "--target", t
    )
    assert submitted.exit_code == 0, submitted.output
    # Decimal for every float: a "2.0" would come back as Decimal, an integer as int.
    task = json.loads(submitted.stdout, parse_float=Decimal)["task"]
    assert task["args"] == [2, Decimal("2.5")] and type(task["args"][0]) is int
    assert task["kwargs"] == {"n": 7} and type(task["kwargs"]["n"]) is int
    assert task["result"] == {"args": [2, Decimal("2.5")], "kwargs": {"n": 7}}
    assert type(task["result"]["args"][0]) is int
    as_yaml = run("task", "get", task["id"], "-o", "yaml", "--target", t)
    assert "- 2\n" in as_yaml.stdout and "- 2.0\n" not in as_yaml.stdout, as_yaml.stdout


def test_cancel_says_what_happened(cluster: Any) -> None:
    t = cluster.target
    with cluster.client() as client:
        sleeper = client.submit("sleep", 30)
        wait_until(lambda: client.get(sleeper.id).state.name == "RUNNING", 30, "the sleeper running")
        client.queues.pause("held")
        held = client.submit("noop", queue="held")
    requested = run("task", "cancel", sleeper.id, "--target", t)
    assert requested.exit_code == 0, requested.output
    shown = rows(requested.stdout)
    assert "cancelled" not in shown, requested.stdout
    assert shown["outcome"].startswith("requested: the RUNNING task is being stopped"), requested.stdout
    assert shown["cancel"] == "requested"
    at_once = run("task", "cancel", held.id, "--target", t)
    assert at_once.exit_code == 0, at_once.output
    shown = rows(at_once.stdout)
    assert (shown["state"], shown["outcome"], shown["step"]) == ("CANCELLED", "cancelled", "NOT_STARTED")


def test_task_retry_runs_a_failed_task_again(cluster: Any) -> None:
    t = cluster.target
    with cluster.client() as client:
        failed = client.submit("fail", "once", max_retries=0)
        assert client.wait(failed.id, timeout=30).state.name == "FAILURE"
        done = client.submit("add", 1, 2)
        assert client.wait(done.id, timeout=30).state.name == "SUCCESS"
        retried = run("task", "retry", failed.id, "--target", t)
        assert retried.exit_code == 0, retried.output
        assert retried.stdout == f"{failed.id}\n" and retried.stderr == "retried 1 of 1 tasks\n"
        wait_until(
            lambda: (lambda t: t.attempt == 2 and t.state.name == "FAILURE")(client.get(failed.id)),
            30,
            "the retried task's second attempt to fail",
        )
        # A task that is not FAILURE is named, with an error status; the others are retried.
        mixed = run("task", "retry", failed.id, done.id, "-o", "json", "--target", t)
        assert mixed.exit_code == 1
        assert json.loads(mixed.stdout) == {"ids": [failed.id]}
        assert mixed.stderr == f"error: not retried (not FAILURE, or no such task): {done.id}\n"
    assert run("task", "retry", "--target", t).exit_code == 2  # at least one id


def test_queue_status_columns_are_the_task_states(cluster: Any) -> None:
    with cluster.client() as client:
        client.wait(client.submit("add", 1, 1).id, timeout=30)
    status = run("queue", "status", "--target", cluster.target)
    assert status.exit_code == 0, status.output
    header = status.stdout.splitlines()[0].split()
    assert header == [
        "QUEUE", "PENDING", "QUEUED", "SCHEDULED", "ASSIGNED", "RUNNING", "RETRYING",
        "SUCCESS", "FAILURE", "CANCELLED", "PAUSED",
    ]  # fmt: skip
