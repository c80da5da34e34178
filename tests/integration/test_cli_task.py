"""`taskyard task ...` against a real cluster, run as a real command."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from typing import Any

import pytest
from support import fixtures as _fixtures

pytestmark = pytest.mark.integration

# The cluster fixtures, usable here even before the root conftest loads
# support.fixtures as a plugin (pytest_plugins = ["support.fixtures"]).
cluster_factory = _fixtures.cluster_factory
cluster = _fixtures.cluster


def taskyard(target: str, *args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "taskyard.cli", "task", *args, "--target", target],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_submit_add_wait_prints_success_and_result(cluster: Any) -> None:
    proc = taskyard(cluster.target, "submit", "add", "2", "3", "--wait")
    assert proc.returncode == 0, proc.stderr
    lines = dict(
        (k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in proc.stdout.splitlines()) if v
    )
    assert lines["state"] == "SUCCESS", proc.stdout
    assert lines["result"] == "5", proc.stdout
    assert lines["name"] == "add"


def test_submit_json_then_get_and_wait(cluster: Any) -> None:
    proc = taskyard(cluster.target, "submit", "add", "40", "2", "--json", "--request-id", "cli-rq-1")
    assert proc.returncode == 0, proc.stderr
    submitted = json.loads(proc.stdout)
    task_id = submitted["id"]
    waited = taskyard(cluster.target, "wait", task_id, "--timeout", "30", "--json")
    assert waited.returncode == 0, waited.stderr
    final = json.loads(waited.stdout)
    assert final["state"] == "SUCCESS"
    assert final["result"] == 42
    got = json.loads(taskyard(cluster.target, "get", task_id, "--json").stdout)
    assert got["id"] == task_id and got["state"] == "SUCCESS"
    # Same request id: the same task comes back.
    again = json.loads(
        taskyard(cluster.target, "submit", "add", "40", "2", "--json", "--request-id", "cli-rq-1").stdout
    )
    assert again["id"] == task_id


def test_get_unknown_id_exits_non_zero_with_not_found(cluster: Any) -> None:
    proc = taskyard(cluster.target, "get", str(uuid.uuid4()))
    assert proc.returncode != 0
    assert "NOT_FOUND" in proc.stderr, proc.stderr
    assert proc.stdout == ""


def test_submit_unknown_name_prints_code_and_violations(cluster: Any) -> None:
    proc = taskyard(cluster.target, "submit", "no_such_task", "1")
    assert proc.returncode == 1
    assert "INVALID_ARGUMENT" in proc.stderr, proc.stderr
    assert "name" in proc.stderr


def test_failed_task_exits_3_and_cancel_and_list(cluster: Any) -> None:
    failed = taskyard(cluster.target, "submit", "fail", "boom", "--wait", "--timeout", "60", "--json")
    # `fail` may be retried before it is final; either way it must not be SUCCESS.
    assert failed.returncode in (3, 4), failed.stdout + failed.stderr
    sleeper = json.loads(taskyard(cluster.target, "submit", "sleep", "30", "--json").stdout)
    cancelled = taskyard(cluster.target, "cancel", sleeper["id"], "--reason", "test", "--json")
    assert cancelled.returncode == 0, cancelled.stderr
    body = json.loads(cancelled.stdout)
    assert body["state"] == "CANCELLED" or body.get("cancel_requested") is True
    listed = taskyard(cluster.target, "list", "--json", "--all")
    assert listed.returncode == 0, listed.stderr
    ids = {json.loads(line)["id"] for line in listed.stdout.splitlines() if line.strip()}
    assert sleeper["id"] in ids
    only_add = taskyard(cluster.target, "list", "--name", "add", "--json")
    assert only_add.returncode == 0, only_add.stderr
    assert all(json.loads(line)["name"] == "add" for line in only_add.stdout.splitlines() if line.strip())


def test_submit_with_countdown_and_eta_is_scheduled_then_runs(cluster: Any) -> None:
    proc = taskyard(cluster.target, "submit", "add", "1", "1", "--countdown", "1.5", "--json")
    assert proc.returncode == 0, proc.stderr
    submitted = json.loads(proc.stdout)
    assert submitted["state"] == "SCHEDULED", submitted
    waited = json.loads(taskyard(cluster.target, "wait", submitted["id"], "--timeout", "30", "--json").stdout)
    assert waited["state"] == "SUCCESS" and waited["result"] == 2
    # An ETA in the past runs at once; a bad one is refused with the field named.
    ok = taskyard(cluster.target, "submit", "add", "2", "2", "--eta", "2020-01-01T00:00:00", "--wait")
    assert ok.returncode == 0, ok.stderr
    both = taskyard(
        cluster.target, "submit", "add", "2", "2", "--eta", "2020-01-01T00:00:00", "--countdown", "5"
    )
    assert both.returncode != 0
    assert "countdown" in both.stderr, both.stderr
