"""A sealed request captured from the bus is carried out once per database
(docs/security.md, "Replays across stores and restarts").

The bus is sealed but not encrypted, so anyone on its network can copy a request
and send it again within the seal's window. Each receiving socket refuses a copy
it has seen; these tests send the copy where no socket has: to a second store on
the same database, and to the same store after a restart. The copy is not carried
out again; it is answered with the reply the request got (which crossed the bus
already), so that a requester whose reply was lost, and who sends the request
again, gets its answer. Real stores (the service's own ``serve``, REP socket
included), real PostgreSQL, real NNG sockets; the copy is the bytes a real
requester put on the wire, sent again by a plain (unsealed) REQ socket as an
eavesdropper would.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
import pynng
import pytest
from google.protobuf.message import Message
from support.records import submitted_task
from support.waiting import wait_until_async

from taskyard.bus.v1 import queues_pb2, schedule_pb2, tasks_pb2
from taskyard.core import contract, errors, rpc, seal, transport
from taskyard.core.clock import ManualClock
from taskyard.core.config import Settings
from taskyard.result_store import bus_requests, service
from taskyard.result_store.readiness import ClockDisagrees
from taskyard.result_store.store import ResultStore
from taskyard.scheduler.lanes import Lanes
from taskyard.scheduler.periodic import Periodic
from taskyard.v1 import schedule_pb2 as pub
from taskyard.v1 import task_pb2

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]

M = TypeVar("M", bound=Message)
QUEUE = "reports"
WAIT = 30.0


class Capturing:
    """A requester's seal that keeps a copy of every message it seals: what an
    eavesdropper on the bus reads."""

    def __init__(self, inner: seal.Seal) -> None:
        self._inner = inner
        self.sent: list[bytes] = []

    def seal(self, data: bytes) -> bytes:
        sealed = self._inner.seal(data)
        self.sent.append(sealed)
        return sealed

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@contextlib.asynccontextmanager
async def serving(settings: Settings) -> AsyncIterator[None]:
    """A result-store process's service (migrations, REP socket, PUB) in this process."""
    stop = asyncio.Event()
    task = asyncio.create_task(service.serve(settings, stop), name="store")
    try:
        yield
    finally:
        stop.set()
        await task


def address_of(settings: Settings | str) -> str:
    return settings if isinstance(settings, str) else settings.store_address


@contextlib.asynccontextmanager
async def requester(settings: Settings | str) -> AsyncIterator[rpc.Requester]:
    req = rpc.Requester(address_of(settings), max_message_bytes=1 << 20, timeout=WAIT)
    try:
        yield req
    finally:
        req.close()


@pytest.fixture
def other_ipc_dir() -> Iterator[Path]:
    """Where the second store listens (ipc socket paths must stay short)."""
    d = Path(tempfile.mkdtemp(prefix="ty-", dir="/tmp"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def second(store_settings: Settings, other_ipc_dir: Path) -> Settings:
    """A second result-store on the same database."""
    return dataclasses.replace(store_settings, ipc_dir=str(other_ipc_dir))


async def capture(settings: Settings | str, method: contract.Method[Any, M], request: Any) -> tuple[bytes, M]:
    """Send ``request`` as the gateway does; the sealed bytes that crossed the bus, and the reply."""
    async with requester(settings) as req:
        tap = Capturing(req._sock._seal)
        req._sock._seal = tap
        reply = await req.call(method, request)
    assert len(tap.sent) == 1
    return tap.sent[0], reply


def replayed() -> int:
    return seal.current().refusals.counts().get("replayed", 0)


async def replay(settings: Settings | str, raw: bytes, method: contract.Method[Any, M]) -> M:
    """Send the captured bytes of a ``method`` request to the store of ``settings`` (or
    to an address) from a socket without the key; the answer, which must be a repeat
    caught by the database guard (counted as ``replayed``)."""
    before = replayed()
    with pynng.Req0(dial=address_of(settings), block_on_dial=False) as sock:
        await sock.asend(raw)
        sealed = await asyncio.wait_for(sock.arecv(), WAIT)
    assert replayed() == before + 1, "the copy was not caught as a repeat"
    opened = seal.current().open(sealed, None)
    assert opened is not None, "the answer is not sealed"
    env = transport.decode(opened)
    assert not env.HasField("error"), env.error
    return transport.unpack(env, method.reply)


async def paused(database_url: str) -> bool:
    conn = await asyncpg.connect(database_url)
    try:
        return bool(await conn.fetchval("SELECT paused FROM queues WHERE name = $1", QUEUE))
    finally:
        await conn.close()


async def task_ids(database_url: str) -> set[str]:
    conn = await asyncpg.connect(database_url)
    try:
        return {str(r["id"]) for r in await conn.fetch("SELECT id FROM tasks")}
    finally:
        await conn.close()


async def finished_task(settings: Settings) -> str:
    """A task made final (CANCELLED while it waits), so a purge may delete it."""
    record = submitted_task()
    async with requester(settings) as req:
        await req.call(contract.STORE_INSERT, tasks_pb2.InsertTasksRequest(tasks=[record]))
        reply = await req.call(contract.STORE_CANCEL, tasks_pb2.CancelTasksRequest(ids=[record.id]))
    assert reply.outcomes[0].cancelled
    return record.id


PAUSE = queues_pb2.QueueOpRequest(op=queues_pb2.QUEUE_OP_PAUSE, queue=QUEUE)
RESUME = queues_pb2.QueueOpRequest(op=queues_pb2.QUEUE_OP_RESUME, queue=QUEUE)


async def test_a_replayed_pause_is_refused_by_a_second_store_and_after_a_restart(
    store_settings: Settings, second: Settings, database_url: str
) -> None:
    async with serving(store_settings):
        captured, reply = await capture(store_settings, contract.STORE_QUEUE_OP, PAUSE)
        assert reply.queue.paused
        async with requester(store_settings) as admin:  # the admin resumes it
            assert not (await admin.call(contract.STORE_QUEUE_OP, RESUME)).queue.paused
        async with serving(second):  # answered as the pause was, not carried out again
            assert (await replay(second, captured, contract.STORE_QUEUE_OP)).queue.paused
        assert not await paused(database_url), "a second store re-paused the queue the admin resumed"
    async with serving(store_settings):  # the same store, restarted
        assert (await replay(store_settings, captured, contract.STORE_QUEUE_OP)).queue.paused
        assert not await paused(database_url), "the restarted store re-paused the queue the admin resumed"
        # A new pause (a new request) is still carried out.
        async with requester(store_settings) as admin:
            assert (await admin.call(contract.STORE_QUEUE_OP, PAUSE)).queue.paused


async def test_a_replayed_purge_deletes_nothing_on_a_second_store_or_after_a_restart(
    store_settings: Settings, second: Settings, database_url: str
) -> None:
    purge = queues_pb2.QueueOpRequest(op=queues_pb2.QUEUE_OP_PURGE, older_than_us=1)
    async with serving(store_settings):
        old = await finished_task(store_settings)
        captured, reply = await capture(store_settings, contract.STORE_QUEUE_OP, purge)
        assert reply.count == 1
        assert old not in await task_ids(database_url)
        later = await finished_task(store_settings)  # finished after the admin's purge
        async with serving(second):
            assert (await replay(second, captured, contract.STORE_QUEUE_OP)).count == 1
        assert later in await task_ids(database_url), "a second store purged a task finished after the purge"
    async with serving(store_settings):
        assert (await replay(store_settings, captured, contract.STORE_QUEUE_OP)).count == 1
        assert later in await task_ids(database_url), (
            "the restarted store purged a task finished after the purge"
        )


@contextlib.asynccontextmanager
async def open_store(settings: Settings) -> AsyncIterator[ResultStore]:
    store = await ResultStore.open(settings)
    store.start()
    try:
        yield store
    finally:
        await store.close()


async def test_two_copies_racing_on_two_stores_are_carried_out_once(
    store_settings: Settings, second: Settings, database_url: str
) -> None:
    later = queues_pb2.QueueOpRequest(op=queues_pb2.QUEUE_OP_PAUSE, queue=QUEUE)
    async with open_store(store_settings) as a, open_store(second) as b:
        answers = await asyncio.gather(
            a.ops.queue_op(later, "copied-id"), b.ops.queue_op(later, "copied-id"), return_exceptions=True
        )
        refused = [x for x in answers if isinstance(x, seal.Replayed)]
        carried = [x for x in answers if isinstance(x, queues_pb2.QueueOpReply)]
        assert (len(refused), len(carried)) == (1, 1), answers
        assert refused[0].reply == carried[0].SerializeToString()  # what the copy is answered with
        # Two copies at once on one store (one group commit, as a rule).
        cancel = tasks_pb2.CancelTasksRequest(ids=[submitted_task().id])
        cancels = await asyncio.gather(
            a.cancel(cancel, "cancel-id"), a.cancel(cancel, "cancel-id"), return_exceptions=True
        )
        # The second copy is answered as the first (in its drain, or after it as a repeat),
        # and carried out once.
        answered = [
            x.reply if isinstance(x, seal.Replayed) else x.SerializeToString()
            for x in cancels
            if isinstance(x, seal.Replayed | tasks_pb2.CancelTasksReply)
        ]
        assert isinstance(cancels[0], tasks_pb2.CancelTasksReply), cancels
        assert len(answered) == 2, cancels
        assert answered[0] == answered[1], cancels
        assert await recorded(database_url) == 2  # the two ids above: one row each
        # A request that does not come off the bus (no id) is never refused.
        await a.ops.queue_op(later)
        await b.ops.queue_op(later)


async def recorded(database_url: str) -> int:
    """The bus request ids on record."""
    conn = await asyncpg.connect(database_url)
    try:
        return int(await conn.fetchval("SELECT count(*) FROM bus_requests"))
    finally:
        await conn.close()


async def schedule_row(database_url: str, name: str) -> tuple[bool, int]:
    """A schedule's paused flag, and its runs in the tasks table."""
    conn = await asyncpg.connect(database_url)
    try:
        row = await conn.fetchrow(
            "SELECT s.paused, (SELECT count(*) FROM tasks t WHERE t.schedule_id = s.id) AS runs"
            " FROM schedules s WHERE s.name = $1",
            name,
        )
        assert row is not None
        return bool(row["paused"]), int(row["runs"])
    finally:
        await conn.close()


async def new_schedule(settings: Settings, name: str) -> str:
    schedule = pub.Schedule(name=name, cron="0 3 * * *", task=task_pb2.TaskSpec(name="noop"))
    async with requester(settings) as store:
        reply = await store.call(
            contract.STORE_SCHEDULE_SAVE,
            schedule_pb2.SaveSchedulesRequest(schedules=[schedule], now_us=time.time_ns() // 1000),
        )
    return str(reply.schedules[0].id)


async def test_a_replayed_schedule_pause_is_refused_by_a_second_store(
    store_settings: Settings, second: Settings, database_url: str
) -> None:
    def change(action: int) -> schedule_pb2.ChangeScheduleRequest:
        return schedule_pb2.ChangeScheduleRequest(id="nightly", action=action, now_us=time.time_ns() // 1000)  # type: ignore[arg-type]

    async with serving(store_settings):
        await new_schedule(store_settings, "nightly")
        captured, reply = await capture(
            store_settings, contract.STORE_SCHEDULE_CHANGE, change(schedule_pb2.SCHEDULE_ACTION_PAUSE)
        )
        assert reply.schedule.paused
        async with requester(store_settings) as admin:
            await admin.call(contract.STORE_SCHEDULE_CHANGE, change(schedule_pb2.SCHEDULE_ACTION_RESUME))
        async with serving(second):
            assert await replay(second, captured, contract.STORE_SCHEDULE_CHANGE) == reply
        assert await schedule_row(database_url, "nightly") == (False, 0)


@contextlib.asynccontextmanager
async def scheduler(store_settings: Settings, address: str) -> AsyncIterator[None]:
    """A scheduler's trigger route (what TriggerSchedule reaches), on a REP socket of its own."""
    async with requester(store_settings) as store:
        periodic = Periodic(store, lanes=Lanes(), wake=lambda: None)
        responder = rpc.Responder(address, periodic.routes(), max_message_bytes=1 << 20)
        serving_task = asyncio.create_task(responder.serve())
        try:
            yield
        finally:
            responder.close()
            await asyncio.gather(serving_task, return_exceptions=True)


async def test_a_replayed_trigger_fires_one_run_whichever_scheduler_it_reaches(
    store_settings: Settings, other_ipc_dir: Path, database_url: str
) -> None:
    first, other = (f"ipc://{other_ipc_dir}/scheduler-{n}.ipc" for n in ("a", "b"))
    async with serving(store_settings):
        sid = await new_schedule(store_settings, "hourly-report")
        async with scheduler(store_settings, first):
            trigger = schedule_pb2.FireSchedulesRequest(trigger=sid)
            captured, reply = await capture(first, contract.SCHEDULE_TRIGGER, trigger)
            assert len(reply.tasks) == 1
        # Another scheduler passes the copy on to the store, which has fired it already.
        async with scheduler(store_settings, other):
            again = await replay(other, captured, contract.SCHEDULE_TRIGGER)
        assert [t.id for t in again.tasks] == [t.id for t in reply.tasks]
        assert await schedule_row(database_url, "hourly-report") == (False, 1)


class LosingFirstReply(rpc.Responder):
    """A store's REP socket that carries out the first request of ``method`` and loses
    its reply, as when the connection closes between the commit and the reply."""

    def __init__(self, address: str, routes: Any, *, method: contract.Method[Any, Any]) -> None:
        super().__init__(address, routes, max_message_bytes=1 << 20)
        self._kind = method.kind
        self.lost = asyncio.Event()

    async def _handle(self, raw: bytes, **how: Any) -> bytes | None:
        reply = await super()._handle(raw, **how)
        if not self.lost.is_set() and transport.decode(raw).kind == self._kind:
            self.lost.set()
            return None
        return reply


@contextlib.asynccontextmanager
async def responding(responder: rpc.Responder) -> AsyncIterator[rpc.Responder]:
    task = asyncio.create_task(responder.serve())
    try:
        yield responder
    finally:
        responder.close()
        await asyncio.gather(task, return_exceptions=True)


async def test_a_request_whose_reply_was_lost_gets_its_answer_when_sent_again(
    store_settings: Settings, second: Settings, other_ipc_dir: Path, database_url: str
) -> None:
    address = f"ipc://{other_ipc_dir}/store.ipc"
    record = submitted_task()
    cancel = tasks_pb2.CancelTasksRequest(ids=[record.id])
    async with open_store(store_settings) as a, open_store(second) as b, requester(address) as req:
        first = LosingFirstReply(address, a.routes(), method=contract.STORE_CANCEL)
        async with responding(first):
            await req.call(contract.STORE_INSERT, tasks_pb2.InsertTasksRequest(tasks=[record]))
            call = asyncio.create_task(req.call(contract.STORE_CANCEL, cancel))
            await asyncio.wait_for(first.lost.wait(), WAIT)  # committed, its reply lost
            before = replayed()
        # The connection closes; the requester sends the cancel again (same id, sealed
        # afresh) to whichever store listens there now: another one, on the same database.
        async with responding(rpc.Responder(address, b.routes(), max_message_bytes=1 << 20)):
            reply = await asyncio.wait_for(call, WAIT)
        # The answer the first delivery got: a second run would find the task final.
        assert [o.cancelled for o in reply.outcomes] == [True]
        assert replayed() == before + 1  # the resend was caught, not carried out
        assert await recorded(database_url) == 1


async def test_old_request_ids_are_forgotten_by_the_retention_loop_not_by_a_recorded_request(
    store_settings: Settings, database_url: str
) -> None:
    store = await ResultStore.open(store_settings)
    store.start(sweep=False)  # the retention loop is started below, by the test
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute(
            "INSERT INTO bus_requests (id, kind, seen_at)"
            " SELECT 'old-' || n, 0, now() - interval '1 day' FROM generate_series(1, 5) n"
        )
        await store.ops.queue_op(PAUSE, "a-new-id")  # recording deletes nothing
        assert await recorded(database_url) == 6
        # Each statement forgets a bounded number, oldest first.
        assert await bus_requests.forget(store.pool, keep_s=600, limit=2) == 2
        assert await recorded(database_url) == 4
        # The store's retention loop forgets the rest, and keeps what is recent.
        loop = asyncio.create_task(store.ops.purger.run(3600))
        try:
            await wait_until_async(
                lambda: _only(database_url, "a-new-id"), WAIT, "the retention loop to forget the old ids"
            )
        finally:
            loop.cancel()
            await asyncio.gather(loop, return_exceptions=True)
    finally:
        await conn.close()
        await store.close()


async def _only(database_url: str, request_id: str) -> bool | None:
    conn = await asyncpg.connect(database_url)
    try:
        ids = [r["id"] for r in await conn.fetch("SELECT id FROM bus_requests")]
    finally:
        await conn.close()
    return True if ids == [request_id] else None


async def test_requests_carried_out_once_are_refused_while_the_store_clock_is_off(
    store_settings: Settings, other_ipc_dir: Path, database_url: str
) -> None:
    address = f"ipc://{other_ipc_dir}/store.ipc"
    clock = ManualClock(time.time() + 3600)  # an hour ahead of the database's
    store = await ResultStore.open(store_settings, clock=clock)
    store.start(sweep=False)
    try:
        with pytest.raises(ClockDisagrees):
            await store.readiness.check()
        async with (
            responding(rpc.Responder(address, store.routes(), max_message_bytes=1 << 20)),
            requester(address) as req,
        ):
            with pytest.raises(errors.TaskyardError) as refused:
                await req.call(contract.STORE_QUEUE_OP, PAUSE)
            assert refused.value.code.name == "UNAVAILABLE"
            assert await recorded(database_url) == 0
            assert not await paused(database_url)
            # Requests that are not recorded are served as before.
            await req.call(contract.STORE_INSERT, tasks_pb2.InsertTasksRequest(tasks=[submitted_task()]))
            clock.advance(-3600)  # the clock is set right: the next check agrees
            await store.readiness.check()
            assert (await req.call(contract.STORE_QUEUE_OP, PAUSE)).queue.paused
    finally:
        await store.close()
