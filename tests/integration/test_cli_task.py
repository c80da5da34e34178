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
    proc = taskyard(cluster.target, "submit", "add", "40", "2", "-o", "json", "--request-id", "cli-rq-1")
    assert proc.returncode == 0, proc.stderr
    task_id = json.loads(proc.stdout)["task"]["id"]
    waited = taskyard(cluster.target, "wait", task_id, "--timeout", "30s", "--output", "json")
    assert waited.returncode == 0, waited.stderr
    final = json.loads(waited.stdout)
    assert final["timed_out"] is False
    assert final["task"]["state"] == "TASK_STATE_SUCCESS" and final["task"]["result"] == 42
    got = json.loads(taskyard(cluster.target, "get", task_id, "--output", "json").stdout)
    assert got["task"]["id"] == task_id and got["task"]["state"] == "TASK_STATE_SUCCESS"
    # Same request id: the same task comes back.
    again = taskyard(cluster.target, "submit", "add", "40", "2", "-o", "json", "--request-id", "cli-rq-1")
    assert json.loads(again.stdout)["task"]["id"] == task_id


def test_get_unknown_id_is_one_error_line(cluster: Any) -> None:
    task_id = str(uuid.uuid4())
    proc = taskyard(cluster.target, "get", task_id)
    assert proc.returncode == 1
    assert proc.stderr == f"error: NOT_FOUND (TASK_NOT_FOUND): task {task_id} not found\n"
    assert proc.stdout == ""


def test_submit_unknown_name_prints_code_then_each_violation_once(cluster: Any) -> None:
    proc = taskyard(cluster.target, "submit", "no_such_task", "1")
    assert proc.returncode == 1
    first, *violations = proc.stderr.splitlines()
    assert first.startswith("error: INVALID_ARGUMENT"), proc.stderr
    assert [v.split(":")[0] for v in violations] == ["  - task.name"], proc.stderr
    assert proc.stderr.count("no_such_task") == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_failed_task_exits_3_and_cancel_and_list_print_the_api_json(cluster: Any) -> None:
    failed = taskyard(
        cluster.target, "submit", "fail", "boom", "--wait", "--wait-timeout", "60s", "-o", "json"
    )
    # `fail` may be retried before it is final; either way it must not be SUCCESS.
    assert failed.returncode in (3, 4), failed.stdout + failed.stderr
    assert json.loads(failed.stdout)["task"]["state"] != "TASK_STATE_SUCCESS", failed.stdout
    sleeper = json.loads(taskyard(cluster.target, "submit", "sleep", "30", "-o", "json").stdout)["task"]
    cancelled = taskyard(cluster.target, "cancel", sleeper["id"], "--reason", "test", "-o", "json")
    assert cancelled.returncode == 0, cancelled.stderr
    body = json.loads(cancelled.stdout)["task"]
    assert body["state"] == "TASK_STATE_CANCELLED" or body["cancel_requested"] is True
    listed = taskyard(cluster.target, "list", "-o", "json", "--all")
    assert listed.returncode == 0, listed.stderr
    ids = {t["id"] for t in json.loads(listed.stdout)["tasks"]}
    assert sleeper["id"] in ids
    only_add = taskyard(cluster.target, "list", "--name", "add", "-o", "json")
    assert only_add.returncode == 0, only_add.stderr
    assert all(t["name"] == "add" for t in json.loads(only_add.stdout)["tasks"])


def test_submit_with_countdown_and_eta_is_scheduled_then_runs(cluster: Any) -> None:
    proc = taskyard(cluster.target, "submit", "add", "1", "1", "--countdown", "1.5", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    submitted = json.loads(proc.stdout)["task"]
    assert submitted["state"] == "TASK_STATE_SCHEDULED", submitted
    waited = taskyard(cluster.target, "wait", submitted["id"], "--timeout", "30", "-o", "json")
    final = json.loads(waited.stdout)["task"]
    assert final["state"] == "TASK_STATE_SUCCESS" and final["result"] == 2
    # An ETA in the past runs at once; a bad one is refused with the field named.
    ok = taskyard(cluster.target, "submit", "add", "2", "2", "--eta", "2020-01-01T00:00:00", "--wait")
    assert ok.returncode == 0, ok.stderr
    both = taskyard(
        cluster.target, "submit", "add", "2", "2", "--eta", "2020-01-01T00:00:00", "--countdown", "5"
    )
    assert both.returncode != 0
    assert "countdown" in both.stderr, both.stderr


def test_submit_sets_retries_timeout_labels_and_queue(cluster: Any) -> None:
    proc = taskyard(
        cluster.target,
        "submit",
        "add",
        "1",
        "2",
        "--max-retries",
        "2",
        "--task-timeout",
        "1h30m",
        "--label",
        "team=billing",
        "--label",
        "env=ci",
        "--queue",
        "reports",
        "-o",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    task = json.loads(proc.stdout)["task"]
    assert task["max_retries"] == 2 and task["timeout"] == "5400s" and task["queue"] == "reports"
    assert task["labels"] == {"team": "billing", "env": "ci"}
    shown = taskyard(cluster.target, "get", task["id"])
    rows = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in shown.stdout.splitlines())}
    assert rows["timeout"] == "1h30m" and rows["max_retries"] == "2"
    assert rows["labels"] == "env=ci, team=billing"
    bad = taskyard(cluster.target, "submit", "add", "1", "2", "--label", "no-equals-sign")
    assert bad.returncode == 2 and "KEY=VALUE" in bad.stderr


def test_the_wait_timeout_is_not_the_task_timeout(cluster: Any) -> None:
    proc = taskyard(cluster.target, "submit", "sleep", "3", "--wait", "--wait-timeout", "300ms", "-o", "json")
    assert proc.returncode == 4, proc.stderr
    waited = json.loads(proc.stdout)
    assert waited["timed_out"] is True and "timeout" not in waited["task"]
    assert "timed out waiting" in proc.stderr
    # Without --wait a wait timeout can only be a mistake for --task-timeout.
    alone = taskyard(cluster.target, "submit", "sleep", "3", "--wait-timeout", "5s")
    assert alone.returncode == 2 and "--task-timeout" in alone.stderr
    # The old spelling still waits, and says what it is now.
    old = taskyard(cluster.target, "submit", "add", "1", "1", "--wait", "--timeout", "30", "-o", "json")
    assert old.returncode == 0, old.stderr
    assert json.loads(old.stdout)["task"]["state"] == "TASK_STATE_SUCCESS"
    assert "--wait-timeout" in old.stderr


def test_a_reader_that_leaves_early_gets_no_traceback(cluster: Any) -> None:
    with cluster.client() as client:
        client.submit("noop")
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskyard.cli", "task", "list", "-o", "json", "--target", cluster.target],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    proc.stdout.close()  # like `| head -0`: gone before the command prints a byte
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 141 and err == "", err
