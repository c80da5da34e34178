"""What a pool hands the result-store, with real processes: a short task's start and
outcome reach the store in one report request (the outcome carries the start), a
long task's start goes alone before it ends (RUNNING shows while it runs), and the
store applies a start and an outcome of one attempt in one request in that order."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import pytest
from support.observability import scrape
from support.records import task
from support.waiting import wait_until

from taskyard.bus.v1 import leases_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.client import TaskState
from taskyard.core.states import TaskState as S

POOL = "worker-pool"


def pool_counts(cluster: Any) -> dict[str, float]:
    """The pool's report requests and its start notices by what carried them."""
    text = scrape(cluster.metrics_ports[POOL])
    out: dict[str, float] = {}
    for name, key in (
        (r"taskyard_pool_store_reports_total", "reports"),
        (r'taskyard_pool_start_notices_total\{carried_by="notice"\}', "notice"),
        (r'taskyard_pool_start_notices_total\{carried_by="outcome"\}', "outcome"),
    ):
        m = re.search(rf"^{name} (\S+)$", text, re.M)
        assert m is not None, f"{name} not served:\n{text}"
        out[key] = float(m.group(1))
    return out


def delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: after[k] - before[k] for k in before}


def test_a_short_task_reaches_the_store_in_one_request_that_carries_its_start(
    cluster_factory: Callable[..., Any],
) -> None:
    cluster = cluster_factory(metrics=True)
    with cluster.client() as client:
        before = pool_counts(cluster)
        t = client.submit("add", 2, 3)
        done = client.wait(t.id, timeout=30)
        after = pool_counts(cluster)
    assert done.state == TaskState.SUCCESS and done.result == 5
    # The start was held for the outcome, which came within the hold-back (a no-op
    # body: 50-100 ms is its margin) and took it to the store in one request.
    assert delta(before, after) == {"reports": 1.0, "notice": 0.0, "outcome": 1.0}
    # The start the outcome carried: who ran it and when it started.
    (row,) = cluster.query("SELECT worker_id, started_at, finished_at FROM tasks WHERE id = $1::uuid", t.id)
    assert "/w0:" in row["worker_id"]
    assert row["started_at"] is not None and row["started_at"] <= row["finished_at"]


@pytest.mark.timeout(120)
def test_a_long_task_shows_running_and_its_start_goes_before_its_outcome(
    cluster_factory: Callable[..., Any],
) -> None:
    cluster = cluster_factory(metrics=True, task_modules=("taskyard.examples", "support.supervision_tasks"))
    with cluster.client() as client:
        before = pool_counts(cluster)
        t = client.submit("cooperative", 60.0)
        # RUNNING only ever comes from a start notice: the store has no other way to know.
        wait_until(lambda: client.get(t.id).state == TaskState.RUNNING, 30, "the long task running")

        # Counted once the store's reply is back, just after the commit RUNNING shows.
        def acknowledged() -> dict[str, float] | None:
            now = pool_counts(cluster)
            return now if now["notice"] > before["notice"] else None

        running = wait_until(acknowledged, 30, "the start notice acknowledged")
        client.cancel(t.id, reason="test")
        final = client.wait(t.id, timeout=30)
        after = pool_counts(cluster)
    assert final.state == TaskState.CANCELLED
    assert delta(before, running) == {"reports": 1.0, "notice": 1.0, "outcome": 0.0}
    assert delta(running, after) == {"reports": 1.0, "notice": 0.0, "outcome": 0.0}


@pytest.mark.asyncio
async def test_a_start_and_its_outcome_in_one_request_apply_in_that_order(result_store: Any) -> None:
    """A start notice and its attempt's outcome meet in one request when the one that
    carried the notice failed and is sent again with what came meanwhile merged behind
    it: the store applies the start first (RUNNING, then final), in one commit."""
    ok, failing = task(), task(max_retries=1)
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[ok, failing]))
    leased = await result_store.lease(
        leases_pb2.LeaseTasksRequest(
            pool_id="pool-1",
            lease_ms=30_000,
            leases=[leases_pb2.Lease(task_id=x.id, lease_token="tok") for x in (ok, failing)],
        )
    )
    assert len(leased.tasks) == 2
    seen: list[tuple[str, str]] = []
    batches: list[int] = []
    all_seen = asyncio.Event()

    def listen(batch: Any) -> None:
        mine = [(e.task_id, e.type) for e in batch.events if e.task_id in (ok.id, failing.id)]
        if mine:
            seen.extend(mine)
            batches.append(len(mine))
        if len(seen) == 4:
            all_seen.set()

    result_store.publisher.listeners.append(listen)

    def ref(t: str) -> tr.AttemptRef:
        return tr.AttemptRef(task_id=t, attempt=1, lease_token="tok", at_us=1, worker_id="pool-1/w0:1")

    r = await result_store.report(
        leases_pb2.ReportRequest(
            started=[ref(ok.id), ref(failing.id)],
            completed=[
                leases_pb2.Completion(ref=ref(ok.id), success=True, result_json=b"5"),
                leases_pb2.Completion(ref=ref(failing.id), retryable=True, failure={"type": "ValueError"}),
            ],
        )
    )
    assert sorted(r.started) == sorted([ok.id, failing.id]) and r.refused == 0
    assert sorted(r.completed) == sorted([ok.id, failing.id])
    await asyncio.wait_for(all_seen.wait(), 5)
    assert batches == [4]  # one commit
    for t, final in ((ok.id, "task.succeeded"), (failing.id, "task.retrying")):
        assert [kind for tid, kind in seen if tid == t] == ["task.started", final]
    rows = {
        x.id: x for x in (await result_store.get(tasks_pb2.GetTasksRequest(ids=[ok.id, failing.id]))).tasks
    }
    assert S(rows[ok.id].state) == S.SUCCESS and rows[ok.id].worker_id == "pool-1/w0:1"
    assert S(rows[failing.id].state) == S.RETRYING and rows[failing.id].attempt == 2
