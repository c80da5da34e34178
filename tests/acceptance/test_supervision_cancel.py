"""Cancelling running tasks (the pool's side): real processes.

The flag first (the task polls ``ctx.cancelled``), asyncio cancellation after
TASKYARD_CANCEL_GRACE, the worker killed at TASKYARD_CANCEL_DEADLINE; the record
says which step stopped it (tasks.cancel_step: 2 FLAG, 3 ASYNCIO, 4 KILL).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import history
from support.history import row, wait_until

from taskyard.v1 import task_pb2

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(90)]

GRACE, DEADLINE = 0.5, 2.5


@pytest.mark.parametrize(
    ("name", "args", "step"),
    [
        ("cooperative", [60.0], task_pb2.CANCEL_STEP_FLAG),
        ("forever_async", [], task_pb2.CANCEL_STEP_ASYNCIO),
        ("spin_sync", [3600], task_pb2.CANCEL_STEP_KILL),
    ],
)
def test_cancel_running_task_steps(
    cluster_factory: Callable[..., Any],
    database_url: str,
    journal: Path,
    name: str,
    args: list[Any],
    step: int,
) -> None:
    cluster = history.supervised_cluster(
        cluster_factory,
        database_url,
        journal,
        workers=1,
        concurrency=2,
        cancel_grace=GRACE,
        cancel_deadline=DEADLINE,
    )
    client = cluster.client()
    bystander = client.submit("journal", "bystander", 0.2)
    task = client.submit(name, *args)
    wait_until(lambda: row(cluster, task.id)["state"] == "RUNNING", 20, f"{name} to run")
    flagged = client.cancel(task.id, reason="test")
    assert not flagged.cancelled, flagged  # running: only its flag is set, its pool stops it
    final = client.wait(task.id, timeout=20)
    assert final.state.name == "CANCELLED", final
    r = row(cluster, task.id)
    # The step that stopped it is in the record (the tasks run a minute or more: none ended by itself).
    assert r["cancel_step"] == step, r
    # Not escalated before its time: from the flag's write to the stop's, by the store's stamps
    # (its pool hears of the flag after it is written, and counts from then).
    assert flagged.task.updated_at is not None and final.finished_at is not None, (flagged, final)
    stopped_after = (final.finished_at - flagged.task.updated_at).total_seconds()
    if step == task_pb2.CANCEL_STEP_ASYNCIO:
        assert stopped_after >= GRACE, stopped_after
    if step == task_pb2.CANCEL_STEP_KILL:
        assert stopped_after >= DEADLINE, stopped_after
        assert "cancel deadline" in cluster.log_text("worker-pool")
    # The pool keeps serving.
    ok = client.submit("add", 1, 1)
    assert client.wait(ok.id, timeout=20).result == 2
    assert client.wait(bystander.id, timeout=20).state.name == "SUCCESS"
    history.check(cluster, [task.id, ok.id, bystander.id])


def test_a_cancel_kill_requeues_the_other_attempts_of_the_worker(
    cluster_factory: Callable[..., Any], database_url: str, journal: Path
) -> None:
    """The worker killed for a cancelled task that would not stop also ran another
    task: that one did nothing wrong, so it runs again as a new attempt that spends
    no retry (a death would spend one, and end a task with no retries left FAILED)."""
    cluster = history.supervised_cluster(
        cluster_factory,
        database_url,
        journal,
        workers=1,
        concurrency=2,
        cancel_grace=GRACE,
        cancel_deadline=DEADLINE,
    )
    client = cluster.client()
    bystander = client.submit("journal", "bystander", 30.0, True, max_retries=0)
    stubborn = client.submit("spin_sync", 3600)
    for t in (bystander, stubborn):
        wait_until(lambda t=t: row(cluster, t.id)["state"] == "RUNNING", 20, "both to run")
    client.cancel(stubborn.id, reason="test")
    assert client.wait(stubborn.id, timeout=20).state.name == "CANCELLED"
    final = client.wait(bystander.id, timeout=30)
    assert final.state.name == "SUCCESS", final
    assert final.attempt == 2 and final.uncharged_attempts == 1, final  # re-run, not retried
    assert journal.read_text().count("start bystander") == 2
    assert "re-queued without spending a retry" in cluster.log_text("worker-pool")
    history.check(cluster, [stubborn.id, bystander.id])
