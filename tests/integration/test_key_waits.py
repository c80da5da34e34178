"""An application transaction that holds a task's key (``taskyard_submit`` with a
request_id or an idempotency key, not yet committed) never holds up the store's
writer: the store's insert of the same key is set aside (key_waits.py), the
writes behind it go on, and the set-aside insert is answered with the
application's task once it commits, inserted once it rolls back, or refused
ABORTED (REQUEST_IN_FLIGHT) past its bound. Never two tasks for one key."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from support.records import task
from support.waiting import wait_until_async

from taskyard.bus.v1 import leases_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import errors
from taskyard.core.config import Settings
from taskyard.result_store import key_waits

pytestmark = pytest.mark.asyncio

# Long enough never to be reached while a test holds its transaction open.
NEVER = 3600.0
HOUR_US = 3600 * 1_000_000
DOC = Path(__file__).resolve().parents[2] / "docs" / "transactional-enqueue.md"


def _keyed(key: str, how: str) -> tuple[dict[str, Any], tr.TaskRecord]:
    """The SQL options and the gateway's record of a submission keyed by ``key``."""
    if how == "request_id":
        return {"request_id": key}, task(request_id=key)
    expires = time.time_ns() // 1000 + HOUR_US
    return {"idempotency_key": key}, task(idempotency_key=key, idempotency_expires_at_us=expires)


@pytest.fixture
async def app(database_url: str) -> AsyncIterator[asyncpg.Connection]:
    """The application's own connection; the task name "add" declared, as a pool would."""
    conn = await asyncpg.connect(database_url)
    await conn.execute("INSERT INTO task_names (name) VALUES ('add') ON CONFLICT DO NOTHING")
    try:
        yield conn
    finally:
        await conn.close()


async def _hold(app: asyncpg.Connection, options: dict[str, Any]) -> tuple[Any, str]:
    """Open the application's transaction and submit a task in it: (transaction, task id)."""
    tx = app.transaction()
    await tx.start()
    task_id = await app.fetchval(
        "SELECT taskyard_submit('add', '[1, 2]', '{}', $1::jsonb)::text", json.dumps(options)
    )
    return tx, task_id


async def _set_aside(store: Any, record: tr.TaskRecord) -> asyncio.Task[tasks_pb2.InsertTasksReply]:
    """The gateway's insert of ``record``, once the writer has set it aside."""
    insert = asyncio.create_task(store.insert(tasks_pb2.InsertTasksRequest(tasks=[record])))
    await wait_until_async(lambda: store.committer.key_waits.waiting, 30, "the keyed insert set aside")
    return insert


async def _tasks_keyed(conn: asyncpg.Connection, key: str) -> list[str]:
    rows = await conn.fetch(
        "SELECT id::text FROM tasks WHERE request_id = $1 OR idempotency_key = $1 ORDER BY id", key
    )
    return [r["id"] for r in rows]


@pytest.mark.parametrize("how", ["request_id", "idempotency_key"])
async def test_a_held_key_holds_up_no_other_write_and_answers_with_the_committed_task(
    result_store: Any, app: asyncpg.Connection, how: str
) -> None:
    result_store.committer.key_waits.bound = NEVER
    options, record = _keyed("order-1", how)
    tx, app_task = await _hold(app, options)
    same = await _set_aside(result_store, record)

    # The writer goes on while the application's transaction stays open.
    other = task()
    reply = await asyncio.wait_for(result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[other])), 30)
    assert [(t.id, t.created) for t in reply.tasks] == [(other.id, True)]
    assert app.is_in_transaction() and not same.done()

    await tx.commit()
    answered = (await asyncio.wait_for(same, 30)).tasks[0]
    assert (answered.id, answered.created) == (app_task, False)
    assert await _tasks_keyed(app, "order-1") == [app_task]


@pytest.mark.parametrize("how", ["request_id", "idempotency_key"])
async def test_a_held_key_rolled_back_lets_the_insert_in(
    result_store: Any, app: asyncpg.Connection, how: str
) -> None:
    result_store.committer.key_waits.bound = NEVER
    options, record = _keyed("order-2", how)
    tx, _ = await _hold(app, options)
    same = await _set_aside(result_store, record)

    await tx.rollback()
    answered = (await asyncio.wait_for(same, 30)).tasks[0]
    assert (answered.id, answered.created) == (record.id, True)
    assert await _tasks_keyed(app, "order-2") == [record.id]


@pytest.mark.parametrize("how", ["request_id", "idempotency_key"])
async def test_a_key_held_past_the_bound_is_refused_request_in_flight(
    result_store: Any, app: asyncpg.Connection, how: str
) -> None:
    result_store.committer.key_waits.bound = 0.2
    options, record = _keyed("order-3", how)
    tx, app_task = await _hold(app, options)
    same = asyncio.create_task(result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[record])))

    with pytest.raises(errors.TaskyardError) as refused:
        await asyncio.wait_for(same, 30)
    assert (refused.value.code, refused.value.reason) == (errors.Code.ABORTED, key_waits.REQUEST_IN_FLIGHT)
    assert app.is_in_transaction()

    # The caller's retry, once the application committed, is answered with its task.
    await tx.commit()
    again = await asyncio.wait_for(result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[record])), 30)
    assert (again.tasks[0].id, again.tasks[0].created) == (app_task, False)
    assert await _tasks_keyed(app, "order-3") == [app_task]


@pytest.mark.parametrize("outcome", ["commit", "rollback"])
async def test_an_expired_key_taken_again_in_a_transaction_holds_up_no_other_write(
    result_store: Any, app: asyncpg.Connection, outcome: str
) -> None:
    # The application frees the old task's expired key (its row locked until it ends).
    result_store.committer.key_waits.bound = NEVER
    _, old = _keyed("order-4", "idempotency_key")
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[old]))
    await app.execute(
        "UPDATE tasks SET idempotency_expires_at = now() - interval '1 second' WHERE id = $1", old.id
    )
    tx, app_task = await _hold(app, {"idempotency_key": "order-4"})
    _, record = _keyed("order-4", "idempotency_key")
    same = await _set_aside(result_store, record)

    other = task()
    reply = await asyncio.wait_for(result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[other])), 30)
    assert reply.tasks[0].created and not same.done()

    await (tx.commit() if outcome == "commit" else tx.rollback())
    answered = (await asyncio.wait_for(same, 30)).tasks[0]
    expected = (app_task, False) if outcome == "commit" else (record.id, True)
    assert (answered.id, answered.created) == expected
    key_holders = await app.fetch("SELECT id::text FROM tasks WHERE idempotency_key = 'order-4'")
    assert [r["id"] for r in key_holders] == [expected[0]]


async def test_a_drain_of_keyed_and_plain_inserts_commits_the_plain_ones_at_once(
    result_store: Any, app: asyncpg.Connection
) -> None:
    # One request with both kinds of rows is keyed as a whole; requests without a
    # key in the same drain go on.
    result_store.committer.key_waits.bound = NEVER
    tx, app_task = await _hold(app, {"request_id": "order-5"})
    plain = [task() for _ in range(3)]
    keyed = task(request_id="order-5")
    inserts = [
        asyncio.create_task(result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[r])))
        for r in [plain[0], keyed, plain[1], plain[2]]
    ]
    done = await asyncio.wait_for(asyncio.gather(*(inserts[i] for i in (0, 2, 3))), 30)
    assert [(r.tasks[0].id, r.tasks[0].created) for r in done] == [(r.id, True) for r in plain]
    assert not inserts[1].done()
    await tx.commit()
    answered = (await asyncio.wait_for(inserts[1], 30)).tasks[0]
    assert (answered.id, answered.created) == (app_task, False)
    assert await _tasks_keyed(app, "order-5") == [app_task]


@pytest.mark.parametrize("isolation", ["repeatable_read", "serializable"])
async def test_a_concurrent_caller_above_read_committed_is_told_to_retry(
    database_url: str, app: asyncpg.Connection, isolation: str
) -> None:
    # As docs/transactional-enqueue.md says: 40001, and the retry returns the task.
    other, watcher = await asyncpg.connect(database_url), await asyncpg.connect(database_url)
    call = "SELECT taskyard_submit('add', '[1, 2]', '{}', '{\"request_id\": \"order-6\"}')::text"
    try:
        tx, app_task = await _hold(app, {"request_id": "order-6"})
        late = other.transaction(isolation=isolation)
        await late.start()
        await other.fetchval("SELECT 1")  # its snapshot, taken before the first commits
        waiting = asyncio.create_task(other.fetchval(call))
        pid = other.get_server_pid()
        await wait_until_async(
            lambda: watcher.fetchval(
                "SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $1", pid
            ),
            30,
            "the second call waiting on the first's key",
        )
        await tx.commit()
        with pytest.raises(asyncpg.PostgresError) as refused:
            await asyncio.wait_for(waiting, 30)
        assert refused.value.sqlstate == "40001"
        await late.rollback()
        async with other.transaction(isolation=isolation):
            assert await other.fetchval(call) == app_task
        assert await _tasks_keyed(app, "order-6") == [app_task]
    finally:
        await other.close()
        await watcher.close()


async def test_a_row_held_by_another_session_holds_up_the_writer_a_bounded_time(
    result_store: Any, app: asyncpg.Connection
) -> None:
    # Reusing an expired key locks the old task's row until the application ends; a
    # lease of that task waits WRITER_LOCK_TIMEOUT_MS a run, then fails UNAVAILABLE,
    # and the writes behind it go on.
    _, old = _keyed("order-7", "idempotency_key")
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[old]))
    expire = "UPDATE tasks SET idempotency_expires_at = now() - interval '1 second' WHERE id = $1"
    await app.execute(expire, old.id)
    tx, _ = await _hold(app, {"idempotency_key": "order-7"})
    lease = asyncio.create_task(
        result_store.lease(
            leases_pb2.LeaseTasksRequest(
                pool_id="p1", lease_ms=60_000, leases=[leases_pb2.Lease(task_id=old.id, lease_token="t1")]
            )
        )
    )
    held = (
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE wait_event_type = 'Lock' AND application_name = 'taskyard-result-store'"
    )
    await wait_until_async(lambda: app.fetchval(held), 30, "the lease waiting on the held row")
    other = task()
    reply = await asyncio.wait_for(result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[other])), 30)
    assert reply.tasks[0].created and app.is_in_transaction()
    with pytest.raises(errors.TaskyardError) as refused:
        await asyncio.wait_for(lease, 30)
    assert refused.value.code is errors.Code.UNAVAILABLE
    await tx.rollback()
    again = await result_store.lease(
        leases_pb2.LeaseTasksRequest(
            pool_id="p1", lease_ms=60_000, leases=[leases_pb2.Lease(task_id=old.id, lease_token="t1")]
        )
    )
    assert [t.id for t in again.tasks] == [old.id]


async def test_the_documented_bounds_are_the_stores() -> None:
    from taskyard.result_store import store, write_errors

    doc = await asyncio.to_thread(DOC.read_text)
    section = doc[doc.index("## Keep keyed calls in short transactions") :]
    for said in (
        f"**{key_waits.LOCK_TIMEOUT_MS} ms** (`key_waits.LOCK_TIMEOUT_MS`",
        f"{key_waits.RETRY_LOCK_TIMEOUT_MS} ms at most, `RETRY_LOCK_TIMEOUT_MS`",
        f"from {key_waits.FIRST_PAUSE * 1000:g} ms, doubling, up to\n{key_waits.MAX_PAUSE:g} s",
        f"**{key_waits.BOUND:g} s** (`key_waits.BOUND`",
        f"waits {store.WRITER_LOCK_TIMEOUT_MS} ms at most (`WRITER_LOCK_TIMEOUT_MS`)",
        f"is run again\n{['no', 'once', 'twice', 'three times'][write_errors.CONFLICT_RUNS]}",
    ):
        assert said in section
    assert Settings().request_timeout / 2 >= key_waits.BOUND  # the default keeps the documented bound
