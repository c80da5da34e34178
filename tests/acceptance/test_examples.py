"""The runnable examples in examples/ work against a real cluster, as a user runs them:
each one is a separate ``python`` process pointed at the cluster's gateway."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.cluster import TESTS_DIR

pytestmark = pytest.mark.acceptance

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
# examples.my_tasks is imported from the repository root, as examples/README.md says.
MY_TASKS_PYTHONPATH = os.pathsep.join([str(ROOT), str(TESTS_DIR)])
# The CLI installed beside this interpreter (the venv's), not whichever is first on PATH.
TASKYARD_CLI = str(Path(sys.executable).parent / "taskyard")


def run(
    argv: list[str], *, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("TASKYARD_")}
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
        cwd=cwd,
        env={**base, **(env or {})},
    )


def expect_batch_output(out: str) -> None:
    assert "add(2, 3) -> 5 (SUCCESS)" in out
    assert "submitted a batch of 4 echo tasks" in out
    for i, priority in enumerate(["low", "normal", "high", "critical"]):
        line = f'echo [{priority}] -> {{"args": ["message {i}"], "kwargs": {{"n": {i}}}}} (SUCCESS)'
        assert line in out, out
    assert out.rstrip().endswith("all tasks succeeded")


def test_quickstart_with_target_argument(cluster: Any) -> None:
    proc = run([sys.executable, str(EXAMPLES / "quickstart.py"), cluster.target])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"connecting to {cluster.target}" in proc.stdout
    expect_batch_output(proc.stdout)
    assert cluster.count_tasks(states=["SUCCESS"]) == 5


def test_async_client_with_target_from_environment(cluster: Any) -> None:
    proc = run([sys.executable, str(EXAMPLES / "async_client.py")], env={"TASKYARD_TARGET": cluster.target})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"connecting to {cluster.target}" in proc.stdout
    expect_batch_output(proc.stdout)
    assert cluster.count_tasks(states=["SUCCESS"]) == 5


def test_quickstart_fails_without_a_gateway(tmp_path: Path) -> None:
    # Port 1 on loopback: nothing listens there, the first call fails.
    proc = run([sys.executable, str(EXAMPLES / "quickstart.py"), "127.0.0.1:1"])
    assert proc.returncode == 1
    assert "error: UNAVAILABLE" in proc.stderr


@pytest.mark.cluster(
    task_modules="taskyard.examples,examples.my_tasks", env={"PYTHONPATH": MY_TASKS_PYTHONPATH}
)
def test_my_tasks_run_in_a_pool_that_loads_them(cluster: Any) -> None:
    def submit(*args: str) -> dict[str, Any]:
        proc = run(
            [TASKYARD_CLI, "task", "submit", *args, "--wait", "--output", "json", "--target", cluster.target]
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        waited = json.loads(proc.stdout)
        assert waited["timed_out"] is False, waited
        task: dict[str, Any] = waited["task"]
        assert task["state"] == "TASK_STATE_SUCCESS", task
        return task

    assert submit("word_count", "a rose is a rose")["result"] == {"a": 2, "rose": 2, "is": 1}
    assert submit("shout", "hello", "--kwargs", '{"delay": 0.01}')["result"] == "HELLO!"
    where = submit("where_am_i")["result"]
    assert where["in_worker"] is True
    assert where["pid"] in cluster.worker_pids()
    # The example tasks are still served next to them.
    assert submit("add", "2", "3")["result"] == 5


def test_workflow_example(cluster: Any) -> None:
    proc = run([sys.executable, str(EXAMPLES / "workflow.py"), cluster.target])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "countdown: SCHEDULED, explain: ETA" in out
    assert "chain a -> b -> c: c is SUCCESS with 101" in out
    assert "after a failure: CANCELLED (dependency " in out
    assert out.count("tree:   add SUCCESS") == 2
    assert "last 'line 4'" in out
    assert "cancel: CANCELLED by step ASYNCIO" in out
    assert "trigger -> 42" in out
    assert out.rstrip().endswith("workflow done")
    assert cluster.count_tasks(states=["RUNNING", "ASSIGNED", "QUEUED"]) == 0
