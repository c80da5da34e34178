"""Tasks inserted outside the store reach the scheduler one by one
(result_store/arrivals.py): a store on a real PostgreSQL reads the events of
taskyard_submit's rows on their NOTIFY and publishes their refs, without the
full reload (tasks.available) every wake-up caused before; the full reload
stays for what the cursor cannot vouch for (a listener reconnect, a transaction
holding the log's bound back)."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pynng
import pytest
from support.bus_events import Subscriber
from support.waiting import wait_until_async

from taskyard.bus.v1 import event_pb2
from taskyard.core import contract, transport

pytestmark = pytest.mark.asyncio

BACKLOG = 2_000
BURST = 1_000
SUBMIT = "SELECT taskyard_submit('add', jsonb_build_array($1::int))"


def _reloads(sub: Subscriber) -> int:
    return sum(e.type == "tasks.available" for e in sub.events)


@pytest.fixture
async def listening(result_store: Any, store_settings: Any, database_url: str) -> AsyncIterator[Subscriber]:
    """The store with a backlog of QUEUED rows written as the store writes them (no
    NOTIFY), its listener connected and its connect's full reload heard."""
    conn = await asyncpg.connect(database_url, server_settings={"taskyard.origin": "store"})
    try:
        await conn.execute(
            "INSERT INTO tasks (id, name, queue) "
            "SELECT gen_random_uuid(), 'add', 'backlog' FROM generate_series(1, $1::int)",
            BACKLOG,
        )
    finally:
        await conn.close()
    sub = Subscriber(store_settings.events_address)
    try:
        await sub.connected()
        arrivals = result_store.arrivals
        assert arrivals is not None
        await wait_until_async(lambda: arrivals.full_reloads >= 1, 10, "the listener's first connect")
        # Once a probe's ref is heard, whatever came before it has been too: forgotten.
        (probe,) = await _submit_each(database_url, [0])
        await sub.wait_for_released([probe])
        sub.events.clear()
        sub.others.clear()
        yield sub
    finally:
        sub.close()


async def _submit_each(dsn: str, values: list[int]) -> list[str]:
    """One transaction per call, each with an application write, on one connection."""
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("CREATE TABLE IF NOT EXISTS app_orders (id serial PRIMARY KEY, n int)")
        got = []
        for v in values:
            async with conn.transaction():
                await conn.execute("INSERT INTO app_orders (n) VALUES ($1)", v)
                got.append(str(await conn.fetchval(SUBMIT, v)))
        return got
    finally:
        await conn.close()


async def test_a_transactional_submit_is_published_by_itself(
    listening: Subscriber, result_store: Any, database_url: str
) -> None:
    sub = listening
    arrivals = result_store.arrivals
    reloads = arrivals.full_reloads
    (task_id,) = await _submit_each(database_url, [1])
    await sub.wait_for_released([task_id])
    await wait_until_async(arrivals.caught_up.is_set, 5, "the store caught up")
    # Its ref, none of the backlog's, and no reload of every QUEUED row.
    assert sub.released() == [task_id]
    assert arrivals.full_reloads == reloads and _reloads(sub) == 0


async def test_a_bare_notify_has_every_queued_row_read_again(
    listening: Subscriber, result_store: Any, store_settings: Any, database_url: str
) -> None:
    """An operator who changed rows by hand (an UPDATE sends no NOTIFY) wakes the
    scheduler with a NOTIFY of their own: no insert to read, so a full reload."""
    sub = listening
    arrivals = result_store.arrivals
    reloads = arrivals.full_reloads
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("SELECT pg_notify($1, '')", store_settings.notify_channel)
    finally:
        await conn.close()
    await sub.until(lambda: _reloads(sub) == 1, 5, "a full reload asked of the scheduler")
    assert arrivals.full_reloads == reloads + 1


async def test_a_burst_of_small_transactions_is_all_published(
    listening: Subscriber, result_store: Any, database_url: str
) -> None:
    sub = listening
    arrivals = result_store.arrivals
    reloads = arrivals.full_reloads
    connections = 8
    per = BURST // connections
    submitted: set[str] = set()
    done = asyncio.Event()

    async def burst() -> None:
        batches = await asyncio.gather(
            *(_submit_each(database_url, list(range(c * per, (c + 1) * per))) for c in range(connections))
        )
        submitted.update(t for batch in batches for t in batch)
        done.set()

    # Heard while they are submitted, as the scheduler hears them: a SUB that nobody
    # reads holds 128 messages and drops the rest.
    heard = asyncio.create_task(
        sub.until(lambda: done.is_set() and submitted <= set(sub.released()), 60, f"{BURST} tasks released")
    )
    await burst()
    await heard
    assert len(submitted) == BURST
    await wait_until_async(arrivals.caught_up.is_set, 10, "the store caught up")
    published = Counter(sub.released())
    # Each once (one store reads each event once), nothing else, and no full reload
    # unless a transaction held the bound back past its limit (then each is still there).
    assert set(published) == submitted
    assert set(published.values()) == {1}
    assert arrivals.full_reloads - reloads == _reloads(sub)


async def test_after_a_listener_reconnect_everything_is_loaded(
    listening: Subscriber, result_store: Any, database_url: str
) -> None:
    sub = listening
    listener, arrivals = result_store.listener, result_store.arrivals
    listener.health_interval = 0.2
    reloads = arrivals.full_reloads
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("SELECT pg_terminate_backend($1)", listener.backend_pid())
        await sub.until(lambda: _reloads(sub) >= 1, 10, "a tasks.available after the reconnect")
        assert listener.reconnects >= 1 and arrivals.full_reloads == reloads + 1
    finally:
        await conn.close()
    # And the cursor goes on from there.
    (task_id,) = await _submit_each(database_url, [7])
    await sub.wait_for_released([task_id])


async def test_a_transaction_holding_the_bound_back_falls_back_to_a_reload(
    listening: Subscriber, result_store: Any, database_url: str
) -> None:
    """A task committed behind an older transaction still running is not final in the
    log: after a while everything is loaded whole; its ref follows once the older ends."""
    sub = listening
    arrivals = result_store.arrivals
    reloads = arrivals.full_reloads
    holder = await asyncpg.connect(database_url)
    try:
        tx = holder.transaction()
        await tx.start()
        await holder.fetchval("SELECT pg_current_xact_id()")  # it takes an xid: the bound stays
        (task_id,) = await _submit_each(database_url, [3])
        await sub.until(lambda: _reloads(sub) >= 1, 10, "the fallback reload")
        assert arrivals.full_reloads == reloads + 1 and task_id not in sub.released()
        await tx.rollback()
        # The next notification reads it (the store also looks again on its own).
        await _submit_each(database_url, [4])
        await sub.wait_for_released([task_id])
    finally:
        await holder.close()


async def test_a_task_with_an_eta_goes_to_the_schedulers_timers(
    listening: Subscriber, result_store: Any, store_settings: Any, database_url: str
) -> None:
    """A SCHEDULED arrival is told to the scheduler's stream as a task.scheduled with its
    time, so its timers hold it (no lane, no reload)."""
    sched = transport.open_socket(pynng.Sub0, max_message_bytes=16 << 20, recv_timeout=100)
    sched.subscribe(transport.SCHEDULER_TOPIC)
    sched.dial(store_settings.scheduler_stream_address, block=False)
    try:
        await wait_until_async(lambda: len(sched.pipes) > 0, 5, "the scheduler's SUB to connect")
        conn = await asyncpg.connect(database_url)
        try:
            task_id = str(
                await conn.fetchval("""SELECT taskyard_submit('add', '[1]', '{}', '{"countdown": 3600}')""")
            )
            run_at_us = await conn.fetchval("SELECT ty_us(run_at) FROM tasks WHERE id = $1::uuid", task_id)
        finally:
            await conn.close()
        seen: list[event_pb2.Event] = []

        async def heard() -> bool:
            with contextlib.suppress(pynng.Timeout):
                raw = await sched.arecv()
                batch = contract.EVENTS.open(raw[len(transport.SCHEDULER_TOPIC) :])
                if batch is not None:
                    seen.extend(batch.events)
            return any(e.task_id == task_id for e in seen)

        await wait_until_async(heard, 5, "the task's task.scheduled on the scheduler's stream")
        (ev,) = [e for e in seen if e.task_id == task_id]
        assert (ev.type, ev.run_at_us, ev.name) == ("task.scheduled", run_at_us, "add")
        assert task_id not in listening.released()
    finally:
        sched.close()
