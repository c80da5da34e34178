"""The result-store as a service: real NNG sockets (ipc), events PUB, NOTIFY, process."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import asyncpg
import pynng
import pytest
from support.bus_events import Subscriber
from support.waiting import wait_until_async

from taskyard.bus.v1 import dispatch_pb2, event_pb2, leases_pb2, pools_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import contract, errors, health, ids, rpc, transport
from taskyard.result_store.service import serve

pytestmark = pytest.mark.asyncio
# How long a dispatch may take to reach a subscribed pool (a loaded machine): a bound, not a speed.
HEARD_WITHIN = 30.0


@pytest.fixture
async def served(store_settings: Any) -> Any:
    stop = asyncio.Event()
    task = asyncio.create_task(serve(store_settings, stop))
    req = rpc.Requester(store_settings.store_address, max_message_bytes=16 << 20, timeout=10)

    async def answers() -> bool:
        try:
            await req.call(contract.STORE_TASK_NAMES, pools_pb2.TaskNamesRequest(), timeout=0.5)
        except errors.TaskyardError:
            if task.done():
                task.result()  # it failed to start: its error, not a timeout
            return False
        return True

    await wait_until_async(answers, 10, "the store to answer")
    sub = Subscriber(store_settings.events_address)
    await sub.connected()
    try:
        yield req, sub
    finally:
        sub.close()
        req.close()
        stop.set()
        await asyncio.wait_for(task, 10)


async def test_insert_over_nng_publishes_events(served: Any) -> None:
    req, sub = served
    rec = tr.TaskRecord(id=ids.new_task_id(), name="add", request_id="nng-1")
    reply = await req.call(contract.STORE_INSERT, tasks_pb2.InsertTasksRequest(tasks=[rec]))
    assert reply.tasks[0].created
    e = await sub.wait_for(lambda e: e.task_id == rec.id)
    assert e.type == "task.queued" and e.name == "add"
    got = await req.call(contract.STORE_GET, tasks_pb2.GetTasksRequest(ids=[rec.id]))
    assert got.tasks[0].id == rec.id


async def test_concurrent_requests_over_nng_are_group_committed(served: Any) -> None:
    req, _ = served
    n = 100
    replies = await asyncio.gather(
        *(
            req.call(
                contract.STORE_INSERT,
                tasks_pb2.InsertTasksRequest(tasks=[tr.TaskRecord(id=ids.new_task_id(), name="x")]),
            )
            for _ in range(n)
        )
    )
    assert all(r.tasks[0].created for r in replies)


async def test_errors_cross_the_bus(served: Any) -> None:
    req, _ = served
    with pytest.raises(errors.TaskyardError) as ei:
        await req.call(contract.STORE_LIST, tasks_pb2.ListTasksRequest(cursor="%%%"))
    assert ei.value.reason == "INVALID_PAGE_TOKEN"
    assert [v.field for v in ei.value.violations] == ["page_token"]


async def test_insert_from_plain_sql_is_published_as_its_ref(served: Any, database_url: str) -> None:
    """Its NOTIFY makes the store read the new row's event and publish the row's ref
    (result_store/arrivals.py), not a reload of every QUEUED row."""
    _, sub = served
    insert = "INSERT INTO tasks (id, name) VALUES ($1::uuid, 'from-psql')"
    conn = await asyncpg.connect(database_url)
    try:
        # The store's LISTEN may connect after this first row (its connect then loads
        # everything): once either is heard, the listener was up.
        first = ids.new_task_id()
        await conn.execute(insert, first)
        await sub.until(
            lambda: first in sub.released() or any(e.type == "tasks.available" for e in sub.events)
        )
        task_id = ids.new_task_id()
        await conn.execute(insert, task_id)
        await sub.wait_for_released([task_id])
    finally:
        await conn.close()


async def test_store_inserts_do_not_notify(result_store: Any, database_url: str) -> None:
    listener = result_store.listener
    assert listener is not None
    await asyncio.wait_for(listener.connected.wait(), 5)
    before = listener.notifications
    await result_store.insert(
        tasks_pb2.InsertTasksRequest(tasks=[tr.TaskRecord(id=ids.new_task_id(), name="quiet")])
    )
    # A marker sent after the store's insert committed: PostgreSQL delivers a channel's
    # notifications in commit order, so one of the insert would have come before it.
    marker = f"marker-{ids.new_task_id()}"
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("SELECT pg_notify($1, $2)", listener.channel, marker)
    finally:
        await conn.close()
    await wait_until_async(lambda: listener.last_payload == marker, 10, "the marker's NOTIFY")
    assert listener.notifications == before + 1


async def test_listener_reconnects_after_its_connection_is_killed(
    result_store: Any, database_url: str
) -> None:
    listener = result_store.listener
    await asyncio.wait_for(listener.connected.wait(), 5)
    listener.health_interval = 0.2
    pid = listener.backend_pid()
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("SELECT pg_terminate_backend($1)", pid)
        await wait_until_async(
            lambda: listener.reconnects >= 1 and listener.connected.is_set(), 10, "the listener to reconnect"
        )
        assert listener.backend_pid() != pid
        before = listener.notifications
        await conn.execute("INSERT INTO tasks (id, name) VALUES ($1::uuid, 'after')", ids.new_task_id())
        await wait_until_async(lambda: listener.notifications > before, 5, "the insert's NOTIFY")
    finally:
        await conn.close()


async def test_process_entry_point(store_settings: Any) -> None:
    env = {**os.environ, **store_settings.to_env()}
    mig = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "taskyard.result_store", "migrate"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert mig.returncode == 0, mig.stderr
    proc = subprocess.Popen(  # noqa: ASYNC220 - starting it is instant
        [sys.executable, "-m", "taskyard.result_store"], env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stderr is not None
        stderr = proc.stderr

        async def ready() -> bool:
            # Each line is a signal; end of output (the process exited) is a failure.
            while line := await asyncio.to_thread(stderr.readline):
                if "result-store ready" in line:
                    return True
            return False

        assert await asyncio.wait_for(ready(), 30)
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(proc.wait, 15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_each_audience_has_its_own_stream(served: Any, store_settings: Any) -> None:
    """Gateways hear results only, pools their leases, the scheduler its event types:
    NNG filters topics on the subscriber's side, so each audience has its own socket
    and topic, and nobody's process wakes for another's messages."""
    req, _ = served

    def sub(address: str, topic: bytes) -> pynng.Sub0:
        s: pynng.Sub0 = transport.open_socket(pynng.Sub0, max_message_bytes=16 << 20, recv_timeout=100)
        s.subscribe(topic)
        s.dial(address, block=False)
        return s

    results = sub(store_settings.events_address, transport.RESULT_EVENTS_TOPIC)
    pools = sub(store_settings.pool_stream_address, transport.dispatch_topic("pool-a"))
    sched = sub(store_settings.scheduler_stream_address, transport.SCHEDULER_TOPIC)
    # The SUBs connect first: a PUB drops what no one hears.
    await wait_until_async(lambda: all(s.pipes for s in (results, pools, sched)), 5, "the SUBs to connect")

    async def receive_until(s: pynng.Sub0, done: Callable[[list[bytes]], bool]) -> list[bytes]:
        """What ``s`` hears up to the message that makes ``done`` true: on one PUB, what
        came before it was published before it."""
        got: list[bytes] = []

        async def receive() -> None:
            while not done(got):
                with contextlib.suppress(pynng.Timeout):
                    got.append(await s.arecv())

        try:
            await asyncio.wait_for(receive(), HEARD_WITHIN)
        except TimeoutError:
            raise AssertionError(f"heard {len(got)} messages, not the one awaited") from None
        return got

    def events(raws: list[bytes], skip: int) -> list[event_pb2.Event]:
        out: list[event_pb2.Event] = []
        for raw in raws:
            batch = contract.EVENTS.open(raw[skip:])
            if batch is not None:
                out.extend(batch.events)
        return out

    def dispatched(raws: list[bytes]) -> list[tr.TaskRecord]:
        skip = len(transport.dispatch_topic("pool-a"))
        return [
            t
            for raw in raws
            for t in transport.unpack(transport.decode(raw[skip:]), dispatch_pb2.Dispatch).tasks
        ]

    try:
        leased = tr.TaskRecord(id=ids.new_task_id(), name="add")
        queued = tr.TaskRecord(id=ids.new_task_id(), name="add")
        await req.call(
            contract.STORE_INSERT,
            tasks_pb2.InsertTasksRequest(
                tasks=[leased, queued],
                pool_id="pool-a",
                lease_ms=30_000,
                leases=[leases_pb2.Lease(task_id=leased.id, lease_token="tok")],
            ),
        )
        await req.call(contract.STORE_CANCEL, tasks_pb2.CancelTasksRequest(ids=[queued.id]))

        def cancelled(skip: int) -> Callable[[list[bytes]], bool]:
            return lambda raws: any(e.type == "task.cancelled" for e in events(raws, skip))

        got_results, got_sched = await asyncio.gather(
            receive_until(results, cancelled(transport.EVENTS_TOPIC_BYTES)),
            receive_until(sched, cancelled(len(transport.SCHEDULER_TOPIC))),
        )
        # The gateway's topic: the final transition only, not the inserts' queued/assigned.
        assert [(e.task_id, e.type) for e in events(got_results, transport.EVENTS_TOPIC_BYTES)] == [
            (queued.id, "task.cancelled")
        ]
        # The scheduler's: the cancel (it drops the task from its lane), nothing per insert.
        # (The store's LISTEN publishes a tasks.available of its own when it connects.)
        heard = events(got_sched, len(transport.SCHEDULER_TOPIC))
        assert [(e.task_id, e.type) for e in heard if e.type != "tasks.available"] == [
            (queued.id, "task.cancelled")
        ]
        # The pool's: the attempt leased to it at insert, as a dispatch, and nothing of the
        # queued task's cancel: the next thing it hears is the leased attempt's flagged copy.
        await req.call(contract.STORE_CANCEL, tasks_pb2.CancelTasksRequest(ids=[leased.id]))
        got_pool = await receive_until(pools, lambda raws: any(t.cancel_requested for t in dispatched(raws)))
        assert [(t.id, t.lease_token, t.cancel_requested) for t in dispatched(got_pool)] == [
            (leased.id, "tok", False),
            (leased.id, "tok", True),
        ]
    finally:
        for s in (results, pools, sched):
            s.close()


async def test_a_dispatched_attempts_cancel_reaches_its_pool_as_a_flagged_copy(
    served: Any, store_settings: Any
) -> None:
    """A pool holds no worker id for an attempt it has not started, so the cancel
    of an ASSIGNED task goes to its pool on the lease stream: the dispatch again,
    flagged, for the pool to answer NOT_STARTED or stop the body it began."""
    req, _ = served
    topic = transport.dispatch_topic("pool-c")
    pool: pynng.Sub0 = transport.open_socket(pynng.Sub0, max_message_bytes=16 << 20)
    pool.subscribe(topic)
    pool.dial(store_settings.pool_stream_address, block=False)

    def dispatched(raw: bytes) -> list[tr.TaskRecord]:
        env = transport.decode(raw[len(topic) :])
        return list(transport.unpack(env, dispatch_pb2.Dispatch).tasks)

    async def lease_at_insert() -> str:
        t = tr.TaskRecord(id=ids.new_task_id(), name="add")
        await req.call(
            contract.STORE_INSERT,
            tasks_pb2.InsertTasksRequest(
                tasks=[t],
                pool_id="pool-c",
                lease_ms=30_000,
                leases=[leases_pb2.Lease(task_id=t.id, lease_token="tok")],
            ),
        )
        return t.id

    probes = 0

    async def probe() -> bytes | None:
        """A dispatch leased at insert, and what the pool hears of it (None: nothing yet)."""
        nonlocal probes
        await lease_at_insert()
        probes += 1
        try:
            return await asyncio.wait_for(pool.arecv(), 0.2)
        except TimeoutError:
            return None

    try:
        await wait_until_async(lambda: pool.pipes, 5, "the pool's SUB to connect")
        # PUB drops what no subscriber hears yet (its side of the pipe may come a moment
        # after the SUB's): lease until the pool hears a dispatch, usually the first.
        raw = await wait_until_async(
            probe, HEARD_WITHIN, lambda: f"the pool's SUB to hear one of {probes} dispatches", interval=0
        )
        (heard,) = dispatched(raw)
        assert not heard.cancel_requested
        reply = await req.call(contract.STORE_CANCEL, tasks_pb2.CancelTasksRequest(ids=[heard.id]))
        assert [(o.flagged, o.cancelled) for o in reply.outcomes] == [(True, False)]
        # Past any other probe's dispatch still on its way, to the flagged copy of this one.
        deadline = asyncio.get_running_loop().time() + HEARD_WITHIN
        other: list[str] = []
        while True:
            left = deadline - asyncio.get_running_loop().time()
            try:
                batch = dispatched(await asyncio.wait_for(pool.arecv(), max(0.0, left)))
            except TimeoutError:
                raise AssertionError(
                    f"no flagged copy of {heard.id}'s dispatch within {HEARD_WITHIN:g}s "
                    f"(heard only other probes': {other})"
                ) from None
            copies = [t for t in batch if t.id == heard.id]
            if copies:
                break
            other += [t.id for t in batch]
        (copy,) = copies
        assert (copy.cancel_requested, copy.attempt, copy.lease_token) == (True, heard.attempt, "tok")
    finally:
        pool.close()


async def test_the_writer_plans_once_and_reads_plan_per_call(result_store: Any) -> None:
    """The committer's connections use generic plans (re-planning the insert on every
    execution cost more than running it); the read pool keeps PostgreSQL's choice."""
    assert result_store.writer_pool is not None
    async with result_store.writer_pool.acquire() as conn:
        assert await conn.fetchval("SHOW plan_cache_mode") == "force_generic_plan"
    async with result_store.pool.acquire() as conn:
        assert await conn.fetchval("SHOW plan_cache_mode") == "auto"


async def test_the_store_is_ready_while_its_database_answers(
    store_settings: Any, pg_cluster: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(health, "FOLLOW_INTERVAL", 0.1)
    health.mark_ready(False)
    name = store_settings.database_url.rsplit("/", 1)[1]
    admin = await asyncpg.connect(pg_cluster.dsn("postgres"))
    stop = asyncio.Event()
    task = asyncio.create_task(serve(store_settings, stop))
    try:
        await wait_until_async(lambda: health.ready() or task.done(), 15, "the store ready")
        await admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        await admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name)
        await wait_until_async(lambda: not health.ready(), 15, "unready without its database")
        await admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        await wait_until_async(health.ready, 15, "ready again once the database answers")
    finally:
        await admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        await admin.close()
        stop.set()
        await asyncio.wait_for(task, 15)
    assert not health.ready()  # a stopped store is not
