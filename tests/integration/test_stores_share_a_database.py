"""Result-stores sharing one database (docs/scaling.md, "Result-stores: several, one
database").

Store A runs in this process, store B in a process of its own (so no state of a
module is shared between them), both on the test's database. Each race is driven
into the interleaving it names, not left to timing: a raw connection holds a
transaction open (store A's cancel or final not committed yet, or a row that makes
store B's insert wait half-way), and the test waits until PostgreSQL shows who
waits for a lock before it lets go. Neither store's periodic sweep runs during a
test: what it would repair late must have been done at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from support.cluster import Cluster
from support.records import submitted_task as task
from support.waiting import wait_until_async

from taskyard.bus.v1 import leases_pb2, queues_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import contract, errors, ids, rpc
from taskyard.core.config import Settings
from taskyard.result_store.arrays import text_array
from taskyard.result_store.queries import bind
from taskyard.result_store.store import ResultStore
from taskyard.result_store.transitions import SRC_CANCEL_NOW, SRC_SUCCESS
from taskyard.result_store.write_errors import CONFLICT_RUNS
from taskyard.v1 import task_pb2

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(180)]

# States as records carry them.
CANCELLED = task_pb2.TASK_STATE_CANCELLED
FAILURE = task_pb2.TASK_STATE_FAILURE
PENDING = task_pb2.TASK_STATE_PENDING
QUEUED = task_pb2.TASK_STATE_QUEUED
SUCCESS = task_pb2.TASK_STATE_SUCCESS
# Longer than any test: no sweep repairs what a test checks is done at once.
NO_SWEEP = 3600.0
# Sessions of the test's database waiting for a heavyweight (row) lock.
LOCK_WAITS = """SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock'"""


# --- the two stores and the raw connections ------------------------------------------
@contextlib.asynccontextmanager
async def open_store(settings: Settings) -> AsyncIterator[ResultStore]:
    store = await ResultStore.open(dataclasses.replace(settings, graph_sweep_interval=NO_SWEEP))
    store.start()
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
async def a(store_settings: Settings) -> AsyncIterator[ResultStore]:
    """Store A, in this process."""
    async with open_store(store_settings) as store:
        yield store


@pytest.fixture
def b_process(database_url: str, tmp_path: Path) -> Iterator[Cluster]:
    cluster = Cluster(database_url, tmp_path, graph_sweep_interval=NO_SWEEP)
    try:
        cluster.start_service("result-store")
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
async def b(b_process: Cluster) -> AsyncIterator[rpc.Requester]:
    """Store B, a process of its own, reached over the bus as every service reaches it."""
    requester = rpc.Requester(b_process.settings.store_address, max_message_bytes=16 << 20, timeout=30)
    try:
        yield requester
    finally:
        requester.close()


@contextlib.asynccontextmanager
async def connected(database_url: str) -> AsyncIterator[asyncpg.Connection]:
    conn = await asyncpg.connect(database_url)
    try:
        yield conn
    finally:
        await conn.close()


@pytest.fixture
async def raw(database_url: str) -> AsyncIterator[asyncpg.Connection]:
    """Holds transactions open."""
    async with connected(database_url) as conn:
        yield conn


@pytest.fixture
async def watch(database_url: str) -> AsyncIterator[asyncpg.Connection]:
    """Reads pg_stat_activity (out of any transaction: a transaction keeps its first view of it)."""
    async with connected(database_url) as conn:
        yield conn


async def until_waiting(watch: asyncpg.Connection, sessions: int, *pending: asyncio.Task[Any]) -> None:
    """Until ``sessions`` sessions wait for a lock; fails as soon as one of
    ``pending`` is done instead (it did not wait for what the test holds)."""

    async def waiting() -> bool:
        for t in pending:
            if t.done():
                raise AssertionError(f"{t.get_name()} did not wait: {t.exception() or t.result()!r}")
        return int(await watch.fetchval(LOCK_WAITS)) >= sessions

    await wait_until_async(waiting, 15, f"{sessions} sessions waiting for a lock")


@contextlib.asynccontextmanager
async def held(raw: asyncpg.Connection) -> AsyncIterator[None]:
    """A transaction of ``raw`` that the test ends (ROLLBACK), rolled back if it does not."""
    await raw.execute("BEGIN")
    try:
        yield
    finally:
        if raw.is_in_transaction():
            await raw.execute("ROLLBACK")


async def hold_request_id(raw: asyncpg.Connection, request_id: str) -> None:
    """Insert (not committed) a task with ``request_id``: an insert of another task
    with the same one waits, at its insert statement, until this transaction ends."""
    await raw.execute(
        "INSERT INTO tasks (id, name, request_id) VALUES ($1, 'add', $2)", ids.new_task_id(), request_id
    )


# --- calls -------------------------------------------------------------------------------
async def insert_a(a: ResultStore, *records: tr.TaskRecord) -> None:
    reply = await a.insert(tasks_pb2.InsertTasksRequest(tasks=records))
    assert all(item.created for item in reply.tasks)


async def insert_b(b: rpc.Requester, *records: tr.TaskRecord) -> tasks_pb2.InsertTasksReply:
    reply: tasks_pb2.InsertTasksReply = await b.call(
        contract.STORE_INSERT, tasks_pb2.InsertTasksRequest(tasks=records)
    )
    return reply


async def get_a(a: ResultStore, t: str) -> tr.TaskRecord:
    rec: tr.TaskRecord = (await a.get(tasks_pb2.GetTasksRequest(ids=[t]))).tasks[0]
    return rec


async def get_b(b: rpc.Requester, t: str) -> tr.TaskRecord:
    rec: tr.TaskRecord = (await b.call(contract.STORE_GET, tasks_pb2.GetTasksRequest(ids=[t]))).tasks[0]
    return rec


async def lease(a: ResultStore, t: str, token: str = "tok") -> list[str]:
    req = leases_pb2.LeaseTasksRequest(
        pool_id="pool-1", lease_ms=60_000, leases=[leases_pb2.Lease(task_id=t, lease_token=token)]
    )
    return [r.id for r in (await a.lease(req)).tasks]


def ref(t: str, *, attempt: int = 1, token: str = "tok") -> tr.AttemptRef:
    return tr.AttemptRef(task_id=t, attempt=attempt, lease_token=token, worker_id="pool-1/w0:1")


def success(t: str, **kw: Any) -> leases_pb2.Completion:
    return leases_pb2.Completion(ref=ref(t, **kw), success=True, result_json=b"3")


async def until_state(a: ResultStore, t: str, state: task_pb2.TaskState, within: float) -> tr.TaskRecord:
    async def reached() -> tr.TaskRecord | None:
        rec = await get_a(a, t)
        return rec if rec.state == state else None

    return await wait_until_async(reached, within, f"{t} to be {task_pb2.TaskState.Name(state)}")


# --- (a) a child inserted while its parent is cancelled ----------------------------------
async def test_a_child_inserted_while_its_parent_is_being_cancelled_is_cancelled(
    a: ResultStore, b: rpc.Requester, raw: asyncpg.Connection, watch: asyncpg.Connection
) -> None:
    parent = task()
    await insert_a(a, parent)
    child = task(parent_id=parent.id)
    async with raw.transaction():
        # Store A's cancel of the parent, its very statement, not committed yet.
        await raw.fetch(
            *bind(
                "cancel_now",
                ids=[parent.id],
                sources=SRC_CANCEL_NOW.db,
                reason="stop",
                all_tenants=True,
                tenant="",
            )
        )
        inserting = asyncio.create_task(insert_b(b, child), name="store B's insert")
        await until_waiting(watch, 1, inserting)  # the insert holds for its parent's row
    (item,) = (await inserting).tasks
    assert item.created and item.state == CANCELLED
    rec = await get_a(a, child.id)
    assert rec.state == CANCELLED and rec.cancel_reason == f"parent {parent.id} cancelled"
    # Never leased, never run.
    assert await lease(a, child.id) == []
    assert not rec.pool_id and not rec.started_at_us
    assigned = "SELECT count(*) FROM events WHERE task_id = $1 AND type = 'task.assigned'"
    assert await watch.fetchval(assigned, child.id) == 0


async def test_a_cancel_that_waits_for_a_childs_insert_cancels_the_child(
    a: ResultStore, b: rpc.Requester, raw: asyncpg.Connection, watch: asyncpg.Connection
) -> None:
    """The other order: store B's insert of a grandchild holds its parent's row
    when store A's cancel of the root reaches that row. A's look for descendants
    came before B's commit, so A must look again once it has the row."""
    root = task()
    parent = task(parent_id=root.id, root_id=root.id)
    await insert_a(a, root, parent)
    child = task(parent_id=parent.id, request_id="held")
    async with held(raw):
        await hold_request_id(raw, "held")  # B's insert stops at its insert statement
        inserting = asyncio.create_task(insert_b(b, child), name="store B's insert")
        await until_waiting(watch, 1, inserting)
        cancelling = asyncio.create_task(
            a.cancel(tasks_pb2.CancelTasksRequest(ids=[root.id], reason="stop")), name="store A's cancel"
        )
        await until_waiting(watch, 2, inserting, cancelling)  # the cancel waits for the parent's row
        await raw.execute("ROLLBACK")  # the held request id is free: B goes on, then A
    (item,) = (await inserting).tasks
    assert item.created and item.state == QUEUED  # B saw the parent not cancelled yet
    cancel = await cancelling
    assert sorted(cancel.cancelled_children) == sorted([parent.id, child.id])
    rec = await get_a(a, child.id)
    assert rec.state == CANCELLED and rec.cancel_reason == f"parent {root.id} cancelled"


# --- (b) a dependency finishing while its dependent is inserted ------------------------------
async def test_a_dependency_final_before_the_insert_commits_releases_the_dependent_at_insert(
    a: ResultStore, b: rpc.Requester, raw: asyncpg.Connection, watch: asyncpg.Connection
) -> None:
    dep = task()
    await insert_a(a, dep)
    assert await lease(a, dep.id) == [dep.id]
    dependent = task(depends_on=[dep.id])
    async with raw.transaction():
        # Store A's success of the dependency, its very statement, not committed yet.
        done = await raw.fetch(
            *bind(
                "complete_successes",
                ids=[dep.id],
                attempts=[1],
                tokens=text_array(["tok"]),
                results=["3"],
                worker_ids=text_array(["pool-1/w0:1"]),
                started_us=[0],
                sources=SRC_SUCCESS.db,
            )
        )
        assert [r["id"] for r in done] == [dep.id]
        inserting = asyncio.create_task(insert_b(b, dependent), name="store B's insert")
        await until_waiting(watch, 1, inserting)  # the insert holds for its dependency's row
    (item,) = (await inserting).tasks
    assert item.created and item.state == QUEUED  # released by the insert itself


async def test_a_dependency_final_after_the_insert_releases_the_dependent_promptly(
    a: ResultStore, b: rpc.Requester, raw: asyncpg.Connection, watch: asyncpg.Connection
) -> None:
    """The other order: store B's insert holds the dependency's row when store A
    commits its success, so B's insert cannot see the success; A's statement reads
    the row as B left it (a task depends on it) and A releases the dependent."""
    dep = task()
    await insert_a(a, dep)
    assert await lease(a, dep.id) == [dep.id]
    dependent = task(depends_on=[dep.id], request_id="held")
    async with held(raw):
        await hold_request_id(raw, "held")  # B's insert stops at its insert statement
        inserting = asyncio.create_task(insert_b(b, dependent), name="store B's insert")
        await until_waiting(watch, 1, inserting)
        reporting = asyncio.create_task(
            a.report(leases_pb2.ReportRequest(completed=[success(dep.id)])), name="store A's report"
        )
        await until_waiting(watch, 2, inserting, reporting)  # the success waits for the row
        await raw.execute("ROLLBACK")  # B goes on, then A
    (item,) = (await inserting).tasks
    assert item.created and item.state == PENDING  # B saw the dependency not final yet
    assert list((await reporting).completed) == [dep.id]
    # Released by store A right after its commit: not at a sweep (none runs here).
    await until_state(a, dependent.id, QUEUED, within=10)


# --- (c) deadlocks and other conflicts ----------------------------------------------------
async def test_a_deadlock_with_another_session_is_run_again_and_succeeds(
    store_settings: Settings, database_url: str, raw: asyncpg.Connection, watch: asyncpg.Connection
) -> None:
    # Of a deadlock's sessions, the first whose deadlock_timeout runs out finds it
    # and loses: the store's (opened after this) then, not this one.
    dbname = await raw.fetchval("SELECT current_database()")
    await raw.execute(f"ALTER DATABASE \"{dbname}\" SET deadlock_timeout = '50ms'")
    await raw.execute("SET deadlock_timeout = '60s'")
    async with open_store(store_settings) as a:
        first, second = sorted([task(), task()], key=lambda r: r.id)  # the store locks in id order
        await insert_a(a, first, second)
        assert sorted(await lease(a, first.id) + await lease(a, second.id)) == [first.id, second.id]
        touch = "UPDATE tasks SET updated_at = now() WHERE id = $1"
        async with raw.transaction():
            await raw.execute(touch, second.id)
            reporting = asyncio.create_task(
                a.report(leases_pb2.ReportRequest(completed=[success(first.id), success(second.id)])),
                name="store A's report",
            )
            await until_waiting(watch, 1, reporting)  # A holds the first row, waits for the second
            await raw.execute(touch, first.id)  # a deadlock: A loses it, and runs again
        reply = await reporting
        assert sorted(reply.completed) == sorted([first.id, second.id]) and reply.refused == 0
        assert a.stats.conflicts >= 1
        assert (await get_a(a, first.id)).state == (await get_a(a, second.id)).state == SUCCESS


LOSE = """
CREATE SEQUENCE test_losses;
CREATE FUNCTION test_lose() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF nextval('test_losses') <= {times} THEN
    RAISE EXCEPTION 'a conflict, injected' USING ERRCODE = '{sqlstate}';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER test_lose BEFORE INSERT OR UPDATE ON tasks
  FOR EACH ROW WHEN (NEW.queue = 'contested') EXECUTE FUNCTION test_lose();
"""


@pytest.mark.parametrize("sqlstate", ["40P01", "40001", "55P03"])
@pytest.mark.parametrize("write", ["insert", "renew"])  # in a transaction; a lone statement
async def test_a_write_that_loses_to_a_concurrent_one_runs_again(
    a: ResultStore, raw: asyncpg.Connection, sqlstate: str, write: str
) -> None:
    t = task(queue="contested")
    if write == "renew":
        await insert_a(a, t)
        assert await lease(a, t.id) == [t.id]
    await raw.execute(LOSE.format(times=CONFLICT_RUNS, sqlstate=sqlstate))
    if write == "insert":
        await insert_a(a, t)
    else:
        renewed = await a.renew(leases_pb2.RenewLeasesRequest(refs=[ref(t.id)], lease_ms=60_000))
        assert not renewed.lost
    assert a.stats.conflicts == CONFLICT_RUNS


@pytest.mark.parametrize("sqlstate", ["40P01", "40001", "55P03"])
async def test_a_write_that_keeps_losing_is_unavailable_not_internal(
    store_settings: Settings, b: rpc.Requester, raw: asyncpg.Connection, sqlstate: str
) -> None:
    # (store_settings: the task names are declared.)
    await raw.execute(LOSE.format(times=1_000, sqlstate=sqlstate))
    with pytest.raises(errors.TaskyardError) as info:
        await insert_b(b, task(queue="contested"))
    assert info.value.code is errors.Code.UNAVAILABLE  # callers retry it (never poison)
    # Every run of the drain met the injected conflict: the first and CONFLICT_RUNS more.
    assert await raw.fetchval("SELECT last_value FROM test_losses") == 1 + CONFLICT_RUNS
    assert (await insert_b(b, task(queue="calm"))).tasks[0].created  # the store carries on


# --- (d) the result cache ----------------------------------------------------------------------
async def test_a_failure_retried_through_one_store_is_not_answered_as_failure_by_another(
    a: ResultStore, b: rpc.Requester
) -> None:
    t = task()
    await insert_a(a, t)
    assert await lease(a, t.id) == [t.id]
    failed = leases_pb2.Completion(ref=ref(t.id), success=False, retryable=False)
    failed.failure.type = "ValueError"
    await a.report(leases_pb2.ReportRequest(completed=[failed]))
    assert (await get_b(b, t.id)).state == FAILURE  # B read it once, as a WaitTask would
    retried = await a.ops.queue_op(queues_pb2.QueueOpRequest(op=queues_pb2.QUEUE_OP_RETRY, ids=[t.id]))
    assert list(retried.ids) == [t.id]
    assert (await get_b(b, t.id)).state == QUEUED
    # A success does not change again: the store that committed it answers from memory.
    assert await lease(a, t.id, token="tok2") == [t.id]
    await a.report(leases_pb2.ReportRequest(completed=[success(t.id, attempt=2, token="tok2")]))
    assert t.id in a.cache
    assert (await get_b(b, t.id)).state == SUCCESS
