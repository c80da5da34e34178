"""`taskyard task logs` and the `taskyard queue` commands against a real cluster."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from taskyard.cli.main import cli

pytestmark = pytest.mark.timeout(90)


def run(*args: str) -> Any:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result


def test_task_logs_follow_and_queue_commands(cluster: Any) -> None:
    t = cluster.target
    with cluster.client() as client:
        task = client.submit("chatty", lines=30, batch=10, pause=0.1)
        follow = run("task", "logs", task.id, "--follow", "--target", t)
        assert follow.exit_code == 0, follow.output
        assert [ln.split()[-1] for ln in follow.output.splitlines() if " info " in ln] == [
            str(i) for i in range(30)
        ]
        page = run("task", "logs", task.id, "--from", "5", "--limit", "3", "--json", "--target", t)
        assert [json.loads(x)["offset"] for x in page.output.splitlines()] == [5, 6, 7]

        paused = run("queue", "pause", "cli-q", "--json", "--target", t)
        assert json.loads(paused.output)["paused"] is True
        client.submit("noop", queue="cli-q")
        status = json.loads(run("queue", "status", "--json", "--target", t).output)
        cli_q = {q["name"]: q for q in status["queues"]}["cli-q"]
        assert cli_q["paused"] and cli_q["counts"]["queued"] == 1
        assert "cli-q" in run("queue", "status", "--target", t).output
        assert run("queue", "resume", "cli-q", "--target", t).exit_code == 0

        failed = client.submit("fail", max_retries=0)
        client.wait(failed.id, timeout=20)
        retried = run("queue", "retry", failed.id, "--json", "--target", t)
        assert json.loads(retried.output) == [failed.id]
        stats = json.loads(run("queue", "stats", "--json", "--target", t).output)
        assert any(r["queue"] == "default" for r in stats)
        servers = json.loads(run("queue", "servers", "--json", "--target", t).output)
        assert len(servers) == 1 and servers[0]["server_name"] == "test-cluster"
        assert run("queue", "clear", "cli-q", "--yes", "--target", t).output.startswith("cancelled")
        assert run("queue", "purge", "--older-than", "30", "--target", t).output == "purged 0 tasks\n"
        bad = run("queue", "retry", "not-a-uuid", "--target", t)
        assert bad.exit_code == 1 and "INVALID_ARGUMENT" in bad.output
