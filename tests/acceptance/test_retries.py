"""Retries on a real cluster: backoff by the documented formula, failures kept,
non-retryable types, and a task asking for its own retry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from taskyard.core.retry import RetryPolicy
from taskyard.v1 import task_pb2, task_service_pb2, task_service_pb2_grpc

pytestmark = pytest.mark.acceptance

TIME_TASKS = ("taskyard.examples", "support.time_tasks")


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    d = tmp_path / "state"
    d.mkdir()
    return d


def _cluster(cluster_factory: Any, state_dir: Path, **overrides: Any) -> Any:
    return cluster_factory(
        task_modules=TIME_TASKS, env={"TASKYARD_TEST_STATE_DIR": str(state_dir)}, **overrides
    )


def _stub(cluster: Any) -> task_service_pb2_grpc.TaskServiceStub:
    return task_service_pb2_grpc.TaskServiceStub(cluster.channel())


def _get(stub: task_service_pb2_grpc.TaskServiceStub, task_id: str) -> task_pb2.Task:
    return stub.GetTask(task_service_pb2.GetTaskRequest(id=task_id), timeout=10).task


def _seconds(ts: Any) -> float:
    return float(ts.seconds + ts.nanos / 1e9)


def test_failing_twice_then_succeeding_follows_the_formula(cluster_factory: Any, state_dir: Path) -> None:
    cluster = _cluster(cluster_factory, state_dir)
    client = cluster.client()
    task = client.submit("backoff_flaky", "twice", 2)
    final = client.wait(task.id, timeout=30)
    assert final.state.name == "SUCCESS", final
    assert final.attempt == 3
    assert final.result == 3

    got = _get(_stub(cluster), task.id)
    assert [f.attempt for f in got.failures] == [1, 2]
    assert all(f.type == "RuntimeError" for f in got.failures)
    # The task's policy: base 0.4 s, cap 0.6 s, jitter 0.5 (support/time_tasks.py).
    policy = RetryPolicy(base_seconds=0.4, cap_seconds=0.6, jitter=0.5)
    for f in got.failures:
        delay = _seconds(f.retry_at) - _seconds(f.failed_at)
        low, high = policy.bounds(f.attempt)
        # retry_at = failed_at + the delay the worker drew (whole milliseconds).
        assert low - 0.001 <= delay <= high + 0.001, (f.attempt, delay, low, high)
    # The last attempt ran after it was due (started_at stays the first attempt's).
    assert _seconds(got.finished_at) >= _seconds(got.failures[-1].retry_at)


def test_default_policy_applies_without_task_options(cluster_factory: Any, state_dir: Path) -> None:
    cluster = _cluster(cluster_factory, state_dir, retry_base_seconds=0.2, retry_cap_seconds=0.3)
    client = cluster.client()
    task = client.submit("flaky", "k", 2, str(state_dir))
    final = client.wait(task.id, timeout=30)
    assert final.state.name == "SUCCESS" and final.attempt == 3
    got = _get(_stub(cluster), task.id)
    policy = RetryPolicy(base_seconds=0.2, cap_seconds=0.3, jitter=0.2)
    for f in got.failures:
        delay = _seconds(f.retry_at) - _seconds(f.failed_at)
        low, high = policy.bounds(f.attempt)
        assert low - 0.001 <= delay <= high + 0.001, (f.attempt, delay)


@pytest.mark.parametrize("kind", ["value", "fatal"])
def test_non_retryable_error_fails_at_attempt_one(cluster_factory: Any, state_dir: Path, kind: str) -> None:
    cluster = _cluster(cluster_factory, state_dir)
    client = cluster.client()
    final = client.wait(client.submit("fatal", kind).id, timeout=30)
    assert final.state.name == "FAILURE"
    assert final.attempt == 1
    assert final.failure is not None
    assert final.failure.type == ("ValueError" if kind == "value" else "Fatal")
    got = _get(_stub(cluster), final.id)
    assert len(got.failures) == 1
    assert not got.failures[0].HasField("retry_at")


def test_task_asks_for_its_own_retry_within_its_budget(cluster_factory: Any, state_dir: Path) -> None:
    cluster = _cluster(cluster_factory, state_dir)
    client = cluster.client()
    ok = client.submit("asks_retry", "ok", 0.3, 1)
    spent = client.submit("asks_retry", "spent", 0.05, 5)  # max_retries=2: 3 attempts, all ask again
    final = client.wait(ok.id, timeout=30)
    assert final.state.name == "SUCCESS" and final.attempt == 2
    (f,) = _get(_stub(cluster), ok.id).failures
    assert f.type == "Retry" and "not ready yet" in f.message
    assert _seconds(f.retry_at) - _seconds(f.failed_at) == pytest.approx(0.3, abs=0.002)
    final = client.wait(spent.id, timeout=30)
    assert final.state.name == "FAILURE" and final.attempt == 3
    assert final.failure is not None and final.failure.type == "Retry"


def test_arguments_that_do_not_fit_fail_at_once_with_the_signature(
    cluster_factory: Any, state_dir: Path
) -> None:
    cluster = _cluster(cluster_factory, state_dir)
    client = cluster.client()
    wrong = client.submit("add", 1)  # add(a, b): one argument short
    final = client.wait(wrong.id, timeout=30)
    assert final.state.name == "FAILURE" and final.attempt == 1
    assert final.failure is not None and final.failure.type == "TypeError"
    assert final.failure.message == "arguments do not fit add(a, b): missing a required argument: 'b'"
    (f,) = _get(_stub(cluster), wrong.id).failures
    assert not f.HasField("retry_at")
