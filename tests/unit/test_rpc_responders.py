"""core.rpc's requester dialing several responders on one socket (every result-store,
every scheduler) over real NNG sockets (ipc in tmp_path): requests spread over the
connected ones, an address nobody listens on costs nothing, and when one responder's
pipe closes only what may have gone down with it is sent again (rpc.RESEND_AFTER)."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from taskyard.bus.v1 import envelope_pb2, task_record_pb2, tasks_pb2
from taskyard.core import contract, rpc, transport

LIMIT = 64 * 1024
WAIT = 10.0


def ipc(tmp_path: Path, name: str) -> str:
    address = f"ipc://{tmp_path / name}.sock"
    assert len(address) < 100, f"ipc path too long for a unix socket: {address}"
    return address


class Arrivals:
    """Requests as they reach any of a test's responders."""

    def __init__(self) -> None:
        self.total = 0
        self._changed = asyncio.Event()

    def add(self) -> None:
        self.total += 1
        self._changed.set()

    async def until(self, total: int) -> None:
        async with asyncio.timeout(WAIT):
            while self.total < total:
                self._changed.clear()
                await self._changed.wait()


class Responder:
    """A responder that counts each request by id and holds the ones ``hold`` picks
    until ``release`` is set (or it closes)."""

    def __init__(
        self,
        address: str,
        hold: Callable[[str], bool] = lambda _id: False,
        arrivals: Arrivals | None = None,
    ) -> None:
        self.calls: collections.Counter[str] = collections.Counter()
        self.arrivals = arrivals
        self.holding: set[str] = set()
        self.arrived = asyncio.Event()  # a held request came in
        self.release = asyncio.Event()

        async def handler(
            req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope
        ) -> tasks_pb2.GetTasksReply:
            request_id = req.ids[0]
            self.calls[request_id] += 1
            if arrivals is not None:
                arrivals.add()
            if hold(request_id):
                self.holding.add(request_id)
                self.arrived.set()
                await self.release.wait()
            return tasks_pb2.GetTasksReply(tasks=[task_record_pb2.TaskRecord(id=request_id)])

        self._responder = rpc.Responder(
            address, [rpc.serve(contract.STORE_GET, handler)], max_message_bytes=LIMIT, concurrency=32
        )
        self._task = asyncio.create_task(self._responder.serve())
        self._closed = False

    async def close(self) -> None:
        """The responder dies: its socket closes and what its handlers hold is dropped
        (a context held in a handler would not see the close until released)."""
        if self._closed:
            return
        self._closed = True
        self._responder.close()
        self._task.cancel()
        done, _ = await asyncio.wait({self._task}, timeout=5)
        assert done, "the responder did not end within 5 s of its close"
        if not self._task.cancelled():
            self._task.exception()  # retrieved: how it ended does not matter here


class Pipes:
    """A requester's pipes as NNG adds and removes them. The callbacks run after the
    requester's own, so once a removal is seen here the requester has handled it."""

    def __init__(self, requester: rpc.Requester) -> None:
        loop = asyncio.get_running_loop()
        self.added = 0
        self.removed = 0
        self._changed = asyncio.Event()
        sock: Any = requester._sock
        sock.add_post_pipe_connect_cb(lambda _p: transport.call_from_nng_thread(loop, self._count, 1, 0))
        sock.add_post_pipe_remove_cb(lambda _p: transport.call_from_nng_thread(loop, self._count, 0, 1))

    def _count(self, added: int, removed: int) -> None:
        self.added += added
        self.removed += removed
        self._changed.set()

    async def until(self, *, added: int = 0, removed: int = 0) -> None:
        async with asyncio.timeout(WAIT):
            while self.added < added or self.removed < removed:
                self._changed.clear()
                await self._changed.wait()


@pytest.fixture
async def closing() -> AsyncIterator[list[Any]]:
    """Requesters and responders to close at the end of a test."""
    things: list[Any] = []
    yield things
    for thing in reversed(things):
        if isinstance(thing, Responder):
            thing.release.set()
            await thing.close()
        elif isinstance(thing, asyncio.Future):
            thing.cancel()
        else:
            thing.close()


async def connected_pair(
    tmp_path: Path, closing: list[Any], **kw: Any
) -> tuple[rpc.Requester, Pipes, list[str]]:
    """A requester dialing two addresses, with its pipe watch set up before anything
    listens there (so no connection is missed)."""
    addresses = [ipc(tmp_path, "store-a"), ipc(tmp_path, "store-b")]
    requester = rpc.Requester(addresses, max_message_bytes=LIMIT, timeout=WAIT, **kw)
    closing.append(requester)
    return requester, Pipes(requester), addresses


async def get(requester: rpc.Requester, request_id: str) -> str:
    reply = await asyncio.wait_for(
        requester.call(contract.STORE_GET, tasks_pb2.GetTasksRequest(ids=[request_id])), WAIT + 5
    )
    return reply.tasks[0].id


async def test_one_address_or_several(tmp_path: Path, closing: list[Any]) -> None:
    one = rpc.Requester(ipc(tmp_path, "one"), max_message_bytes=LIMIT, timeout=1)
    several = rpc.Requester((ipc(tmp_path, "one"), ipc(tmp_path, "two")), max_message_bytes=LIMIT, timeout=1)
    closing.extend([one, several])
    assert one.addresses == (ipc(tmp_path, "one"),) and one.address == ipc(tmp_path, "one")
    assert several.addresses == (ipc(tmp_path, "one"), ipc(tmp_path, "two"))
    assert several.address == ipc(tmp_path, "one")
    with pytest.raises(ValueError, match="no address"):
        rpc.Requester([], max_message_bytes=LIMIT, timeout=1)


async def test_requests_spread_over_every_connected_responder(tmp_path: Path, closing: list[Any]) -> None:
    requester, pipes, (a_address, b_address) = await connected_pair(tmp_path, closing)
    a, b = Responder(a_address), Responder(b_address)
    closing.extend([a, b])
    await pipes.until(added=2)
    ids = [f"task-{i}" for i in range(40)]
    assert await asyncio.gather(*(get(requester, i) for i in ids)) == ids
    assert a.calls.total() > 0 and b.calls.total() > 0, (a.calls, b.calls)
    assert a.calls + b.calls == collections.Counter(ids)  # each handled once


async def test_an_address_nobody_listens_on_costs_nothing(tmp_path: Path, closing: list[Any]) -> None:
    # A standby scheduler opens no listener: its address, first here, never connects.
    live = Responder(ipc(tmp_path, "leader"))
    closing.append(live)
    requester = rpc.Requester(
        [ipc(tmp_path, "standby"), ipc(tmp_path, "leader")], max_message_bytes=LIMIT, timeout=2.0
    )
    closing.append(requester)
    for i in range(10):
        assert await get(requester, f"task-{i}") == f"task-{i}"
    assert live.calls.total() == 10


async def test_a_request_lost_with_one_responder_is_answered_by_another(
    tmp_path: Path, closing: list[Any]
) -> None:
    requester, pipes, (a_address, b_address) = await connected_pair(tmp_path, closing)
    a = Responder(a_address, hold=lambda _id: True)  # dies holding what it got
    b = Responder(b_address)
    closing.extend([a, b])
    await pipes.until(added=2)
    ids = [f"task-{i}" for i in range(8)]
    calls = asyncio.gather(*(get(requester, i) for i in ids))
    await asyncio.wait_for(a.arrived.wait(), WAIT)
    await a.close()
    assert await calls == ids
    lost = a.holding
    assert lost and all(b.calls[i] == 1 for i in lost), (lost, b.calls)


async def test_a_request_still_in_progress_elsewhere_is_not_sent_again_when_a_pipe_closes(
    tmp_path: Path, closing: list[Any]
) -> None:
    # A threshold no request here reaches: nothing has waited long enough to go again.
    requester, pipes, addresses = await connected_pair(tmp_path, closing, resend_after=WAIT)
    a, b, ids, calls = await held_by_b(requester, pipes, addresses, closing)
    await a.close()
    await pipes.until(removed=1)
    # Only b is connected now: a request sent again when a's pipe closed would have
    # reached b before this one.
    assert await get(requester, "probe") == "probe"
    assert all(b.calls[i] == 1 for i in b.holding), b.calls
    b.release.set()
    assert await asyncio.wait_for(asyncio.gather(*calls), WAIT) == ids
    assert all(b.calls[i] == 1 for i in b.holding), b.calls


async def test_a_request_waiting_past_the_threshold_is_sent_again_at_once(
    tmp_path: Path, closing: list[Any]
) -> None:
    threshold = 0.05
    requester, pipes, addresses = await connected_pair(tmp_path, closing, resend_after=threshold)
    a, b, ids, calls = await held_by_b(requester, pipes, addresses, closing)
    held = set(b.holding)
    await asyncio.sleep(threshold * 2)  # the held requests grow older than the threshold
    await a.close()
    await pipes.until(removed=1)
    assert await get(requester, "probe") == "probe"
    # Its pipe unknown, an old unanswered request may have been on a's: it went again.
    # (A resend that found NNG's queue full goes as soon as there is room, and so may
    # arrive after the probe: wait for every arrival, then count.)
    assert b.arrivals is not None
    await b.arrivals.until(len(ids) + len(held) + 1)
    assert all(b.calls[i] == 2 for i in held), (held, b.calls)
    b.release.set()
    assert await asyncio.wait_for(asyncio.gather(*calls), WAIT) == ids


async def held_by_b(
    requester: rpc.Requester, pipes: Pipes, addresses: list[str], closing: list[Any]
) -> tuple[Responder, Responder, list[str], list[asyncio.Task[str]]]:
    """Requests spread over a (answers at once) and b (holds all but probes), with
    every one a got answered: what still waits is held by b."""
    arrivals = Arrivals()
    a = Responder(addresses[0], arrivals=arrivals)
    b = Responder(addresses[1], hold=lambda request_id: not request_id.startswith("probe"), arrivals=arrivals)
    closing.extend([a, b])
    await pipes.until(added=2)
    ids = [f"task-{i}" for i in range(8)]
    calls = [asyncio.create_task(get(requester, i)) for i in ids]
    closing.extend(calls)
    await arrivals.until(len(ids))
    await asyncio.wait_for(
        asyncio.gather(*(c for i, c in zip(ids, calls, strict=True) if i not in b.holding)), WAIT
    )
    assert b.holding and a.calls.total() + len(b.holding) == len(ids), (a.calls, b.holding)
    return a, b, ids, calls
