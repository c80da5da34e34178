# mypy: disable-error-code="comparison-overlap,list-item,arg-type"
"""Dependencies, idempotency keys, cancel cascades and trees in the result-store
(in-process store, real PostgreSQL)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from support.records import submitted_task as task
from support.waiting import wait_until_async

from taskyard.bus.v1 import graph_pb2, leases_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import contract, errors, ids
from taskyard.core.states import TaskState as S

pytestmark = pytest.mark.asyncio


async def insert(store: Any, *records: tr.TaskRecord) -> tasks_pb2.InsertTasksReply:
    reply: tasks_pb2.InsertTasksReply = await store.insert(tasks_pb2.InsertTasksRequest(tasks=records))
    return reply


async def get(store: Any, t: str) -> tr.TaskRecord:
    reply = await store.get(tasks_pb2.GetTasksRequest(ids=[t]))
    rec: tr.TaskRecord = reply.tasks[0]
    return rec


async def run_to(store: Any, t: str, *, success: bool, token: str = "tok") -> None:
    """Lease, start and complete one attempt (a failure that is not retried)."""
    leased = await store.lease(
        leases_pb2.LeaseTasksRequest(
            pool_id="pool-1", lease_ms=30_000, leases=[leases_pb2.Lease(task_id=t, lease_token=token)]
        )
    )
    assert [r.id for r in leased.tasks] == [t]
    ref = tr.AttemptRef(task_id=t, attempt=1, lease_token=token, worker_id="w-1")
    completion = leases_pb2.Completion(ref=ref, success=success, result_json=b"3")
    if not success:
        completion.failure.type = "ValueError"
        completion.retryable = False
    await store.report(leases_pb2.ReportRequest(started=[ref], completed=[completion]))


async def until(store: Any, t: str, state: S, within: float = 5.0) -> tr.TaskRecord:
    """The dependents are resolved after the commit that finalised their dependency
    (a background write): poll the row, with a deadline."""
    rec = await get(store, t)

    async def reached() -> bool:
        nonlocal rec
        rec = await get(store, t)
        return rec.state == state

    await wait_until_async(reached, within, lambda: f"{t} to be {state.name} (is {S(rec.state).name})")
    return rec


def released_messages(store: Any) -> list[graph_pb2.ReleasedTasks]:
    got: list[graph_pb2.ReleasedTasks] = []
    original = store.publisher.publish_message

    def spy(stream: contract.Stream[Any, Any], message: Any) -> None:
        if stream is contract.GRAPH_RELEASED:
            got.append(message)
        original(stream, message)

    store.publisher.publish_message = spy
    store.resolver._publish = spy
    return got


# --- dependencies -------------------------------------------------------------
async def test_chain_is_released_in_order(result_store: Any) -> None:
    released = released_messages(result_store)
    a = task()
    b = task(depends_on=[a.id])
    c = task(depends_on=[b.id])
    reply = await insert(result_store, a, b, c)
    assert [t.state for t in reply.tasks] == [S.QUEUED, S.PENDING, S.PENDING]
    rec = await get(result_store, c.id)
    assert list(rec.depends_on) == [b.id]
    await run_to(result_store, a.id, success=True)
    await until(result_store, b.id, S.QUEUED)
    assert (await get(result_store, c.id)).state == S.PENDING
    await run_to(result_store, b.id, success=True)
    await until(result_store, c.id, S.QUEUED)
    assert [r.id for m in released for r in m.tasks] == [b.id, c.id]


async def test_failed_dependency_cancels_dependents_transitively(result_store: Any) -> None:
    a, b = task(), task()
    c = task(depends_on=[a.id, b.id])
    d = task(depends_on=[c.id])
    await insert(result_store, a, b, c, d)
    await run_to(result_store, a.id, success=True)
    await run_to(result_store, b.id, success=False)
    rec_c = await until(result_store, c.id, S.CANCELLED)
    assert rec_c.cancel_reason == f"dependency {b.id} failed"
    assert rec_c.cancel_step == 1  # CANCEL_STEP_NOT_STARTED
    rec_d = await until(result_store, d.id, S.CANCELLED)
    assert rec_d.cancel_reason == f"dependency {c.id} cancelled"


async def test_cancelled_dependency_cancels_dependent(result_store: Any) -> None:
    a = task()
    b = task(depends_on=[a.id])
    await insert(result_store, a, b)
    await result_store.cancel(tasks_pb2.CancelTasksRequest(ids=[a.id], reason="no"))
    rec = await until(result_store, b.id, S.CANCELLED)
    assert rec.cancel_reason == f"dependency {a.id} cancelled"


async def test_dependency_already_final_decides_at_insert(result_store: Any) -> None:
    ok, bad = task(), task()
    await insert(result_store, ok, bad)
    await run_to(result_store, ok.id, success=True)
    await run_to(result_store, bad.id, success=False)
    after_ok = task(depends_on=[ok.id])
    after_bad = task(depends_on=[ok.id, bad.id])
    reply = await insert(result_store, after_ok, after_bad)
    assert [t.state for t in reply.tasks] == [S.QUEUED, S.CANCELLED]
    assert (await get(result_store, after_bad.id)).cancel_reason == f"dependency {bad.id} failed"


async def test_dependent_with_eta_is_released_to_scheduled(result_store: Any) -> None:
    a = task()
    later = int((time.time() + 3600) * 1_000_000)
    b = task(depends_on=[a.id], run_at_us=later)
    await insert(result_store, a, b)
    await run_to(result_store, a.id, success=True)
    rec = await until(result_store, b.id, S.SCHEDULED)
    assert rec.run_at_us == later


async def test_unknown_dependency_and_parent_are_refused(result_store: Any) -> None:
    ghost = ids.new_task_id()
    with pytest.raises(errors.TaskyardError) as info:
        await insert(result_store, task(), task(depends_on=[ghost]), task(parent_id=ghost))
    assert info.value.code.name == "INVALID_ARGUMENT"
    fields = {v.field for v in info.value.violations}
    assert fields == {"tasks[1].depends_on[0]", "tasks[2].parent_id"}


async def test_sweep_releases_what_a_lost_resolve_left(result_store: Any) -> None:
    a = task()
    b = task(depends_on=[a.id])
    await insert(result_store, a, b)
    # A crash between the commit and the resolve step: the hook never ran.
    result_store.resolver.finals = lambda records: None
    await run_to(result_store, a.id, success=True)
    assert (await get(result_store, b.id)).state == S.PENDING
    assert await result_store.resolver.sweep(result_store._pending_page) == 1
    assert (await get(result_store, b.id)).state == S.QUEUED


# --- parent / child -----------------------------------------------------------
async def test_child_root_is_the_parents_root(result_store: Any) -> None:
    root = task()
    child = task(parent_id=root.id)
    await insert(result_store, root)
    await insert(result_store, child)
    grandchild = task(parent_id=child.id)
    await insert(result_store, grandchild)
    assert (await get(result_store, grandchild.id)).root_id == root.id


async def test_cancelling_a_parent_cancels_unfinished_children(result_store: Any) -> None:
    root = task()
    await insert(result_store, root)
    c1, c2 = task(parent_id=root.id), task(parent_id=root.id)
    await insert(result_store, c1, c2)
    g = task(parent_id=c1.id)
    await insert(result_store, g)
    await run_to(result_store, c2.id, success=True)
    reply = await result_store.cancel(tasks_pb2.CancelTasksRequest(ids=[root.id], reason="stop"))
    assert reply.outcomes[0].cancelled
    assert sorted(reply.cancelled_children) == sorted([c1.id, g.id])
    for t in (c1.id, g.id):
        rec = await get(result_store, t)
        assert rec.state == S.CANCELLED and rec.cancel_reason == f"parent {root.id} cancelled"
    assert (await get(result_store, c2.id)).state == S.SUCCESS


# --- trees --------------------------------------------------------------------
async def test_tree_is_depth_first_in_creation_order(result_store: Any) -> None:
    root = task(created_at_us=1_000_000)
    c1 = task(parent_id=root.id, created_at_us=2_000_000)
    c2 = task(parent_id=root.id, created_at_us=3_000_000)
    g1 = task(parent_id=c1.id, created_at_us=4_000_000)
    await insert(result_store, root)
    await insert(result_store, c2, c1)
    await insert(result_store, g1)
    reply = await result_store._task_tree(graph_pb2.TaskTreeRequest(id=g1.id))
    assert reply.found and reply.root_id == root.id and not reply.truncated
    assert [(n.task.id, n.depth) for n in reply.nodes] == [(root.id, 0), (c1.id, 1), (g1.id, 2), (c2.id, 1)]
    assert list(reply.nodes[2].path) == [root.id, c1.id, g1.id]
    cut = await result_store._task_tree(graph_pb2.TaskTreeRequest(id=root.id, limit=2))
    assert cut.truncated and len(cut.nodes) == 2
    missing = await result_store._task_tree(graph_pb2.TaskTreeRequest(id=ids.new_task_id()))
    assert not missing.found


# --- idempotency keys ---------------------------------------------------------
def keyed(key: str, window_s: float = 3600.0) -> tr.TaskRecord:
    now = int(time.time() * 1_000_000)
    return task(idempotency_key=key, created_at_us=now, idempotency_expires_at_us=now + int(window_s * 1e6))


async def test_same_key_within_window_returns_the_first_task(result_store: Any) -> None:
    first = keyed("k1")
    r1 = await insert(result_store, first)
    r2 = await insert(result_store, keyed("k1"))
    assert r1.tasks[0].created and not r2.tasks[0].created
    assert r2.tasks[0].id == first.id


async def test_concurrent_submits_with_one_key_make_one_task(result_store: Any) -> None:
    replies = await asyncio.gather(*(insert(result_store, keyed("k2")) for _ in range(20)))
    made = {r.tasks[0].id for r in replies}
    assert len(made) == 1
    assert sum(r.tasks[0].created for r in replies) == 1
    # Inside one batch too.
    batch = await insert(result_store, keyed("k3"), keyed("k3"))
    assert [t.created for t in batch.tasks] == [True, False]
    assert batch.tasks[0].id == batch.tasks[1].id


async def test_after_the_window_the_key_makes_a_new_task(result_store: Any) -> None:
    old = keyed("k4", window_s=0.3)
    await insert(result_store, old)
    # The database's now() decides; wait until it is past the window.
    async with result_store.pool.acquire() as conn:
        sql = "SELECT idempotency_expires_at > now() FROM tasks WHERE id = $1"

        async def window_passed() -> bool:
            return not await conn.fetchval(sql, old.id)

        await wait_until_async(window_passed, 5, "the database's clock to pass the window", interval=0.05)
    new = keyed("k4")
    reply = await insert(result_store, new)
    assert reply.tasks[0].created and reply.tasks[0].id == new.id
    assert (await get(result_store, old.id)).idempotency_key == ""
    assert (await get(result_store, new.id)).idempotency_key == "k4"


async def test_request_id_wins_over_the_key(result_store: Any) -> None:
    a = keyed("k5")
    a.request_id = "r-a"
    await insert(result_store, a)
    b = keyed("k6")
    b.request_id = "r-a"
    reply = await insert(result_store, b)
    assert not reply.tasks[0].created and reply.tasks[0].id == a.id


async def test_only_finals_something_depends_on_get_a_look(result_store: Any) -> None:
    a, lone = task(), task()
    await insert(result_store, a, lone)
    b = task(depends_on=[a.id])
    await insert(result_store, b)
    looked: list[list[str]] = []
    resolve = result_store.resolver.resolve

    async def spy(req: graph_pb2.ResolveRequest) -> graph_pb2.ResolveReply:
        looked.append(list(req.final_ids))
        return await resolve(req)

    result_store.resolver.resolve = spy
    await run_to(result_store, lone.id, success=True)  # nothing depends on it: no look
    await run_to(result_store, a.id, success=True)
    await until(result_store, b.id, S.QUEUED)
    assert looked == [[a.id]]


async def test_a_dependency_finishing_during_the_insert_strands_nothing(result_store: Any) -> None:
    deps = [task() for _ in range(30)]
    await insert(result_store, *deps)
    dependents = [task(depends_on=[d.id]) for d in deps]
    # Each dependent's insert races its dependency's completion through the committer.
    await asyncio.gather(
        *(insert(result_store, t) for t in dependents),
        *(run_to(result_store, d.id, success=True, token=f"tok-{i}") for i, d in enumerate(deps)),
    )
    for t in dependents:
        await until(result_store, t.id, S.QUEUED)
