"""How long a responder gives a request (core.rpc), over real NNG sockets (ipc in
tmp_path): a request is judged by the budget its requester gave it, counted from its
receipt, never by comparing the requester's wall clock with the responder's, so a
requester seconds ahead of the responder or behind it is answered alike. A request
with a deadline and no budget (a requester of an older version) is still judged by
its deadline against the responder's clock."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pynng
import pytest
from support.waiting import wait_until_async

from taskyard.bus.v1 import envelope_pb2, task_record_pb2, tasks_pb2
from taskyard.core import contract, rpc, transport

LIMIT = 64 * 1024
WAIT = 10.0
# Far more than a request's timeout: a responder comparing clocks drops a request of a
# requester behind it by this much, and runs one ahead of it long past its deadline.
SKEW = 5.0
TIMEOUT = 2.0  # a pool's heartbeat's
GET = contract.STORE_GET


def ipc(tmp_path: Path, name: str) -> str:
    address = f"ipc://{tmp_path / name}.sock"
    assert len(address) < 100, f"ipc path too long for a unix socket: {address}"
    return address


class Served:
    """A responder of STORE_GET that keeps the envelope of every request it runs."""

    def __init__(self, address: str) -> None:
        self.envelopes: list[envelope_pb2.Envelope] = []

        async def handler(
            req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope
        ) -> tasks_pb2.GetTasksReply:
            self.envelopes.append(env)
            return tasks_pb2.GetTasksReply(tasks=[task_record_pb2.TaskRecord(id=req.ids[0])])

        self.responder = rpc.Responder(
            address, [rpc.serve(contract.STORE_GET, handler)], max_message_bytes=LIMIT, concurrency=4
        )
        self.task = asyncio.create_task(self.responder.serve())

    async def close(self) -> None:
        self.responder.close()
        async with asyncio.timeout(WAIT):
            await asyncio.gather(self.task, return_exceptions=True)


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    s = Served(ipc(tmp_path, "store"))
    try:
        yield s
    finally:
        await s.close()


def stamped(request_id: str, *, clock_offset: float, budget: bool) -> bytes:
    """A request as a requester whose wall clock is ``clock_offset`` seconds off the
    responder's stamps it (with its budget, or without one as older versions do)."""
    deadline_ms = int((time.time() + clock_offset + TIMEOUT) * 1000)
    data = transport.encode(GET.kind, GET.request(ids=[request_id]), deadline_ms=deadline_ms)
    return rpc.with_budget(data, TIMEOUT) if budget else data


async def ask(address: str, data: bytes, *, wait: float) -> envelope_pb2.Envelope | None:
    """The reply to ``data`` sent on a REQ socket; None when none came within ``wait``."""
    sock = transport.open_socket(pynng.Req0, max_message_bytes=LIMIT, dial=address)
    try:
        await sock.asend(data)
        try:
            async with asyncio.timeout(wait):
                return transport.decode(await sock.arecv())
        except TimeoutError:
            return None
    finally:
        sock.close()


@pytest.mark.parametrize("offset", [SKEW, -SKEW], ids=["requester-ahead", "requester-behind"])
async def test_a_request_with_its_budget_is_answered_whatever_the_requester_clock(
    served: Served, offset: float
) -> None:
    reply = await ask(served.responder.address, stamped("t1", clock_offset=offset, budget=True), wait=WAIT)
    assert reply is not None, f"a request of a requester {offset:+g} s off the responder was dropped"
    assert not reply.HasField("error"), reply.error
    assert transport.unpack(reply, GET.reply).tasks[0].id == "t1"
    assert served.envelopes[0].budget_ms == TIMEOUT * 1000


async def test_a_request_without_a_budget_past_its_deadline_by_this_clock_is_dropped(served: Served) -> None:
    # A requester of an older version, behind: judged as its own responders judge it.
    # The answered request that follows on the same responder shows the first was dropped.
    late = stamped("late", clock_offset=-SKEW, budget=False)
    assert await ask(served.responder.address, late, wait=TIMEOUT) is None
    on_time = await ask(
        served.responder.address, stamped("on-time", clock_offset=0.0, budget=False), wait=WAIT
    )
    assert on_time is not None
    assert [env.budget_ms for env in served.envelopes] == [0]
    assert [transport.unpack(env, GET.request).ids[0] for env in served.envelopes] == ["on-time"]


async def test_a_requester_gives_each_request_its_timeout_as_budget(served: Served) -> None:
    requester = rpc.Requester(served.responder.address, max_message_bytes=LIMIT, timeout=TIMEOUT)
    try:
        reply = await requester.call(contract.STORE_GET, tasks_pb2.GetTasksRequest(ids=["t2"]), timeout=3.5)
    finally:
        requester.close()
    assert reply.tasks[0].id == "t2"
    env = served.envelopes[0]
    assert 0 < env.budget_ms <= 3500 and env.deadline_unix_ms > 0


def test_a_budget_is_the_last_field_of_the_envelope_and_never_zero() -> None:
    data = transport.encode(GET.kind, GET.request(ids=["t3"]), message_id="m1")
    env = transport.decode(rpc.with_budget(data, 1.25))
    assert (env.budget_ms, env.message_id, env.kind) == (1250, "m1", GET.kind)
    assert transport.unpack(env, GET.request).ids == ["t3"]
    # A request resent after its caller's time ran out still says it has a budget.
    assert transport.decode(rpc.with_budget(data, -0.5)).budget_ms == 1
    assert not rpc.arrived_late(env, now_ms=env.deadline_unix_ms + 1e9)


class Held:
    """A responder of STORE_GET with one handler, whose clock the test moves, and whose
    handler holds a request named "hold" until ``release`` is set (a frozen database)."""

    def __init__(self, address: str) -> None:
        self.ran: list[str] = []
        self.release = asyncio.Event()
        self.now = 0.0
        self.reads = 0

        async def handler(
            req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope
        ) -> tasks_pb2.GetTasksReply:
            self.ran.append(req.ids[0])
            if req.ids[0] == "hold":
                await self.release.wait()
            return tasks_pb2.GetTasksReply(tasks=[task_record_pb2.TaskRecord(id=req.ids[0])])

        self.responder = rpc.Responder(
            address, [rpc.serve(contract.STORE_GET, handler)], max_message_bytes=LIMIT, concurrency=1
        )
        self.responder._clock = self.clock
        self.task = asyncio.create_task(self.responder.serve())

    def clock(self) -> float:
        self.reads += 1
        return self.now


@pytest.mark.parametrize(("queued_for", "runs"), [(TIMEOUT + 1.0, False), (TIMEOUT - 1.0, True)])
async def test_a_request_that_waited_in_the_responders_queue_past_its_budget_is_dropped(
    tmp_path: Path, queued_for: float, runs: bool
) -> None:
    held = Held(ipc(tmp_path, "store"))
    address = held.responder.address
    asks: list[asyncio.Task[envelope_pb2.Envelope | None]] = []
    try:
        asks.append(
            asyncio.create_task(ask(address, stamped("hold", clock_offset=0.0, budget=True), wait=WAIT))
        )
        await wait_until_async(lambda: held.ran == ["hold"], WAIT, "the first request held")
        # The next request is taken off the socket (its receipt read on the clock) and
        # waits for the one handler, busy with the first.
        reads = held.reads
        asks.append(
            asyncio.create_task(ask(address, stamped("queued", clock_offset=0.0, budget=True), wait=WAIT))
        )
        await wait_until_async(lambda: held.reads > reads, WAIT, "the next request received")
        held.now += queued_for
        held.release.set()
        # A third one runs after it either way: the responder is still serving.
        last = await ask(address, stamped("last", clock_offset=0.0, budget=True), wait=WAIT)
        assert last is not None and not last.HasField("error")
        assert held.ran == (["hold", "queued", "last"] if runs else ["hold", "last"])
        if runs:
            assert await asks[1] is not None
        else:
            assert not asks[1].done()  # dropped unanswered
    finally:
        for task in asks:
            task.cancel()
        held.responder.close()
        await asyncio.gather(held.task, *asks, return_exceptions=True)


def test_a_request_whose_deadline_is_past_by_more_than_the_seal_window_is_late() -> None:
    # Its caller gave up whatever the clocks' skew (more skew than the window is
    # refused by the seal): a backlog sent before a long stall is not run after it.
    data = transport.encode(GET.kind, GET.request(ids=["t4"]), deadline_ms=1_000_000)
    env = transport.decode(rpc.with_budget(data, TIMEOUT))
    window_ms = 30_000
    assert rpc.arrived_late(env, now_ms=1_000_000 + window_ms + 1, window_ms=window_ms)
    assert not rpc.arrived_late(env, now_ms=1_000_000 + window_ms - 1, window_ms=window_ms)
    assert rpc.arrived_late(env, now_ms=0, waited_ms=TIMEOUT * 1000 + 1, window_ms=window_ms)
    assert not rpc.arrived_late(env, now_ms=0, waited_ms=TIMEOUT * 1000, window_ms=window_ms)
