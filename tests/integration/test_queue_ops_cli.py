"""`taskyard task logs` and the `taskyard queue` commands against a real cluster."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from click.testing import CliRunner

from taskyard.cli import durations
from taskyard.cli.main import cli

pytestmark = pytest.mark.timeout(90)


def run(*args: str) -> Any:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result


def api_json(*args: str) -> Any:
    result = run(*args, "--output", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_task_logs_follow_and_queue_commands(cluster: Any) -> None:
    t = cluster.target
    with cluster.client() as client:
        task = client.submit("chatty", lines=30, batch=10, pause=0.1)
        follow = run("task", "logs", task.id, "--follow", "--target", t)
        assert follow.exit_code == 0, follow.output
        assert [ln.split()[-1] for ln in follow.output.splitlines() if " info " in ln] == [
            str(i) for i in range(30)
        ]
        page = api_json("task", "logs", task.id, "--from", "5", "--limit", "3", "--target", t)
        # The API's JSON mapping: int64 as a string, int32 as a number.
        assert [x["offset"] for x in page["logs"]] == ["5", "6", "7"]
        assert [x["attempt"] for x in page["logs"]] == [1, 1, 1]

        paused = api_json("queue", "pause", "cli-q", "--target", t)
        assert paused["queue"]["paused"] is True
        client.submit("noop", queue="cli-q")
        status = api_json("queue", "status", "--target", t)
        cli_q = {q["name"]: q for q in status["queues"]}["cli-q"]
        assert cli_q["paused"] and cli_q["queued"] == "1"
        assert "cli-q" in run("queue", "status", "--target", t).stdout
        assert run("queue", "resume", "cli-q", "--target", t).exit_code == 0

        failed = client.submit("fail", max_retries=0)
        client.wait(failed.id, timeout=20)
        retried = api_json("queue", "retry", failed.id, "--target", t)
        assert retried == {"ids": [failed.id]}
        stats = run("queue", "stats", "--target", t)
        header, *rows = stats.stdout.splitlines()
        assert header.split() == ["QUEUE", "MEAN", "FAILED", "TODAY", "DONE", "WAITING"]
        mean = {row.split()[0]: row.split()[1] for row in rows}["default"]
        # A mean run time as people write it (18.5ms, 2s), which the CLI's options accept back.
        assert durations.parse(mean) > dt.timedelta(), mean
        servers = api_json("queue", "servers", "--target", t)
        assert [s["server_name"] for s in servers["servers"]] == ["test-cluster"]
        assert run("queue", "clear", "cli-q", "--yes", "--target", t).stdout.startswith("cancelled")
        assert (
            run("queue", "purge", "--older-than", "30", "--yes", "--target", t).stdout == "purged 0 tasks\n"
        )
        bad = run("queue", "retry", "not-a-uuid", "--target", t)
        assert bad.exit_code == 1 and bad.stderr.startswith("error: INVALID_ARGUMENT")
