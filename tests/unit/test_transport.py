"""core.transport and core.rpc over real NNG sockets (ipc in tmp_path): request/reply
in raw mode (ids, resends, the concurrency bound), error replies, deadlines and the
receive-size limit."""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pynng
import pytest

from taskyard.bus.v1 import envelope_pb2, task_record_pb2, tasks_pb2
from taskyard.core import contract, errors, gate, rpc, transport

LIMIT = 64 * 1024
GET = contract.STORE_GET
Handler = Callable[[tasks_pb2.GetTasksRequest, envelope_pb2.Envelope], Awaitable[tasks_pb2.GetTasksReply]]


def ipc(tmp_path: Path, name: str) -> str:
    address = f"ipc://{tmp_path / name}.sock"
    assert len(address) < 100, f"ipc path too long for a unix socket: {address}"
    return address


def echo_reply(request: tasks_pb2.GetTasksRequest) -> tasks_pb2.GetTasksReply:
    return tasks_pb2.GetTasksReply(tasks=[task_record_pb2.TaskRecord(id=i) for i in request.ids])


class Server:
    """A Responder serving one route, run as a task for the duration of a test."""

    def __init__(self, address: str, handler: Handler, *, max_message_bytes: int = LIMIT) -> None:
        self.calls = 0
        self._handler = handler

        async def counted(
            req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope
        ) -> tasks_pb2.GetTasksReply:
            self.calls += 1
            return await handler(req, env)

        self.responder = rpc.Responder(
            address,
            [rpc.serve(contract.STORE_GET, counted)],
            max_message_bytes=max_message_bytes,
            concurrency=32,
        )
        self.task = asyncio.create_task(self.responder.serve())

    async def close(self) -> None:
        self.responder.close()
        with contextlib.suppress(asyncio.CancelledError, pynng.NNGException):
            await asyncio.wait_for(self.task, 5)


@pytest.fixture
async def servers() -> AsyncIterator[list[Server]]:
    started: list[Server] = []
    yield started
    for s in started:
        await s.close()


@pytest.fixture
def requesters() -> list[rpc.Requester]:
    return []


@pytest.fixture(autouse=True)
def _close_requesters(requesters: list[rpc.Requester]) -> object:
    yield
    for r in requesters:
        r.close()


def make_requester(
    requesters: list[rpc.Requester], address: str, *, timeout: float = 5.0, limit: int = LIMIT
) -> rpc.Requester:
    r = rpc.Requester(address, max_message_bytes=limit, timeout=timeout)
    requesters.append(r)
    return r


async def get(r: rpc.Requester, *ids: str, limit: float | None = None) -> tasks_pb2.GetTasksReply:
    # The outer bound turns a hang into a test failure instead of a pytest-timeout.
    bound = (r.timeout if limit is None else limit) + 5
    return await asyncio.wait_for(
        r.call(contract.STORE_GET, tasks_pb2.GetTasksRequest(ids=list(ids)), timeout=limit),
        bound,
    )


# --- envelopes ---------------------------------------------------------------


def test_envelope_round_trip() -> None:
    payload = GET.request(ids=["a", "b"])
    raw = transport.encode(GET.kind, payload, headers={"traceparent": "00-x"}, deadline_ms=123)
    env = transport.decode(raw)
    assert env.kind == GET.kind and env.deadline_unix_ms == 123 and env.message_id
    assert dict(env.headers) == {"traceparent": "00-x"}
    assert transport.unpack(env, GET.request) == payload


def test_open_socket_sets_the_receive_limit(tmp_path: Path) -> None:
    sock = transport.open_socket(pynng.Rep0, max_message_bytes=12345, listen=ipc(tmp_path, "s"))
    try:
        assert sock.recv_max_size == 12345
        assert transport.listen_address(sock) == ipc(tmp_path, "s")
    finally:
        sock.close()


# --- REQ/REP -----------------------------------------------------------------


async def test_request_reply(tmp_path: Path, servers: list[Server], requesters: list[rpc.Requester]) -> None:
    seen: list[envelope_pb2.Envelope] = []

    async def handler(req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope) -> tasks_pb2.GetTasksReply:
        seen.append(env)
        return echo_reply(req)

    address = ipc(tmp_path, "store")
    servers.append(Server(address, handler))
    reply = await get(make_requester(requesters, address), "t1", "t2")
    assert [t.id for t in reply.tasks] == ["t1", "t2"]
    assert seen[0].kind == GET.kind and seen[0].deadline_unix_ms > 0


async def test_concurrent_requests_each_get_their_own_reply(
    tmp_path: Path, servers: list[Server], requesters: list[rpc.Requester]
) -> None:
    n = 20
    arrived = 0
    all_in = asyncio.Event()

    async def handler(req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope) -> tasks_pb2.GetTasksReply:
        nonlocal arrived
        arrived += 1
        if arrived == n:
            all_in.set()
        await all_in.wait()  # every request is in flight at once before any reply
        return echo_reply(req)

    address = ipc(tmp_path, "store")
    servers.append(Server(address, handler))
    r = make_requester(requesters, address)
    replies = await asyncio.gather(*(get(r, f"task-{i}") for i in range(n)))
    assert [[t.id for t in rep.tasks] for rep in replies] == [[f"task-{i}"] for i in range(n)]
    assert arrived == n


async def test_error_reply_becomes_taskyard_error(
    tmp_path: Path, servers: list[Server], requesters: list[rpc.Requester]
) -> None:
    async def handler(req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope) -> tasks_pb2.GetTasksReply:
        if req.ids[0] == "bad":
            raise errors.invalid([errors.FieldViolation(field="ids[0]", description="not a uuid")])
        raise errors.not_found("task", req.ids[0])

    address = ipc(tmp_path, "store")
    servers.append(Server(address, handler))
    r = make_requester(requesters, address)

    with pytest.raises(errors.TaskyardError) as info:
        await get(r, "t-404")
    assert info.value.code == errors.Code.NOT_FOUND
    assert info.value.reason == "TASK_NOT_FOUND"
    assert "t-404" in info.value.message

    with pytest.raises(errors.TaskyardError) as info:
        await get(r, "bad")
    assert info.value.code == errors.Code.INVALID_ARGUMENT
    assert info.value.violations == (errors.FieldViolation(field="ids[0]", description="not a uuid"),)


async def test_handler_crash_is_internal_and_the_server_goes_on(
    tmp_path: Path, servers: list[Server], requesters: list[rpc.Requester]
) -> None:
    async def handler(req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope) -> tasks_pb2.GetTasksReply:
        if req.ids[0] == "boom":
            raise RuntimeError("kaput")
        return echo_reply(req)

    address = ipc(tmp_path, "store")
    servers.append(Server(address, handler))
    r = make_requester(requesters, address)
    with pytest.raises(errors.TaskyardError) as info:
        await get(r, "boom")
    assert info.value.code == errors.Code.INTERNAL
    assert "kaput" in info.value.message
    assert [t.id for t in (await get(r, "ok")).tasks] == ["ok"]


async def test_unknown_kind_is_an_error(
    tmp_path: Path, servers: list[Server], requesters: list[rpc.Requester]
) -> None:
    async def handler(req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope) -> tasks_pb2.GetTasksReply:
        return echo_reply(req)

    address = ipc(tmp_path, "store")
    servers.append(Server(address, handler))
    r = make_requester(requesters, address)
    with pytest.raises(errors.TaskyardError) as info:
        await asyncio.wait_for(
            r.call(contract.STORE_LIST, tasks_pb2.ListTasksRequest()),
            10,
        )
    assert info.value.code == errors.Code.INTERNAL
    assert servers[0].calls == 0


async def test_no_reply_in_time_is_deadline_exceeded(
    tmp_path: Path, servers: list[Server], requesters: list[rpc.Requester]
) -> None:
    never = asyncio.Event()

    async def handler(req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope) -> tasks_pb2.GetTasksReply:
        await never.wait()
        return echo_reply(req)

    address = ipc(tmp_path, "store")
    servers.append(Server(address, handler))
    r = make_requester(requesters, address, timeout=0.3)
    with pytest.raises(errors.TaskyardError) as info:
        await get(r, "slow")
    assert info.value.code == errors.Code.DEADLINE_EXCEEDED
    assert servers[0].calls == 1
    never.set()


async def test_a_request_waiting_when_its_responder_restarts_is_answered_by_the_new_one(
    tmp_path: Path, servers: list[Server], requesters: list[rpc.Requester]
) -> None:
    arrived = asyncio.Event()
    never = asyncio.Event()

    async def stuck(req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope) -> tasks_pb2.GetTasksReply:
        arrived.set()
        await never.wait()
        return echo_reply(req)

    async def answers(req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope) -> tasks_pb2.GetTasksReply:
        return echo_reply(req)

    address = ipc(tmp_path, "store")
    first = Server(address, stuck)
    r = make_requester(requesters, address, timeout=10)
    pending = asyncio.ensure_future(get(r, "carried-over"))
    await asyncio.wait_for(arrived.wait(), 5)
    await first.close()  # its pipe closes: the request is sent again on the next one
    second = Server(address, answers)
    servers.append(second)
    reply = await asyncio.wait_for(pending, 10)
    assert [t.id for t in reply.tasks] == ["carried-over"]
    assert second.calls == 1


async def test_the_responder_runs_at_most_its_concurrency_and_answers_the_rest_later(
    tmp_path: Path, requesters: list[rpc.Requester]
) -> None:
    running = 0
    most = 0
    two_in = asyncio.Event()
    release = asyncio.Event()

    async def handler(req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope) -> tasks_pb2.GetTasksReply:
        nonlocal running, most
        running += 1
        most = max(most, running)
        if running == 2:
            two_in.set()
        await release.wait()
        running -= 1
        return echo_reply(req)

    address = ipc(tmp_path, "store")
    responder = rpc.Responder(
        address, [rpc.serve(contract.STORE_GET, handler)], max_message_bytes=LIMIT, concurrency=2
    )
    serving = asyncio.create_task(responder.serve())
    try:
        r = make_requester(requesters, address)
        calls = [asyncio.ensure_future(get(r, f"task-{i}")) for i in range(7)]
        await asyncio.wait_for(two_in.wait(), 5)
        for _ in range(20):  # the other five stay in NNG while two run
            await asyncio.sleep(0)
        assert running == 2
        release.set()
        replies = await asyncio.gather(*calls)
        assert [[t.id for t in rep.tasks] for rep in replies] == [[f"task-{i}"] for i in range(7)]
        assert most == 2
    finally:
        responder.close()
        await asyncio.wait_for(serving, 5)


async def test_a_late_reply_is_dropped_and_the_next_request_gets_its_own(
    tmp_path: Path, servers: list[Server], requesters: list[rpc.Requester]
) -> None:
    slow_done = asyncio.Event()
    timed_out = asyncio.Event()

    async def handler(req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope) -> tasks_pb2.GetTasksReply:
        if req.ids[0] == "slow":
            await timed_out.wait()  # answers only once the requester gave up on it
            slow_done.set()
        return echo_reply(req)

    address = ipc(tmp_path, "store")
    servers.append(Server(address, handler))
    r = make_requester(requesters, address)
    with pytest.raises(errors.TaskyardError) as info:
        await get(r, "slow", limit=0.1)
    assert info.value.code == errors.Code.DEADLINE_EXCEEDED
    timed_out.set()
    await asyncio.wait_for(slow_done.wait(), 5)
    assert [t.id for t in (await get(r, "next")).tasks] == ["next"]


async def test_closing_a_requester_ends_its_waiting_requests_as_unavailable(
    tmp_path: Path, servers: list[Server]
) -> None:
    arrived = asyncio.Event()
    never = asyncio.Event()

    async def handler(req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope) -> tasks_pb2.GetTasksReply:
        arrived.set()
        await never.wait()
        return echo_reply(req)

    address = ipc(tmp_path, "store")
    servers.append(Server(address, handler))
    r = rpc.Requester(address, max_message_bytes=LIMIT, timeout=10)
    pending = asyncio.ensure_future(get(r, "held"))
    await asyncio.wait_for(arrived.wait(), 5)
    r.close()
    with pytest.raises(errors.TaskyardError) as info:
        await pending
    assert info.value.code == errors.Code.UNAVAILABLE
    never.set()


async def test_a_closed_requester_refuses_at_once(tmp_path: Path) -> None:
    r = rpc.Requester(ipc(tmp_path, "nobody"), max_message_bytes=LIMIT, timeout=5)
    r.close()
    with pytest.raises(errors.TaskyardError) as info:
        await asyncio.wait_for(get(r, "late"), 5)
    assert info.value.code == errors.Code.UNAVAILABLE


async def test_a_request_past_its_deadline_is_dropped_unanswered(
    tmp_path: Path, servers: list[Server]
) -> None:
    async def handler(req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope) -> tasks_pb2.GetTasksReply:
        return echo_reply(req)

    address = ipc(tmp_path, "store")
    servers.append(Server(address, handler))
    sender = transport.open_socket(pynng.Req0, max_message_bytes=LIMIT, dial=address, recv_timeout=300)
    try:
        expired = transport.encode(GET.kind, GET.request(ids=["stale"]), deadline_ms=1)
        await sender.asend(expired)
        with pytest.raises(pynng.Timeout):
            await sender.arecv()
        assert servers[0].calls == 0
        live = transport.encode(GET.kind, GET.request(ids=["live"]), deadline_ms=2**62)
        await sender.asend(live)
        reply = transport.unpack(transport.decode(await sender.arecv()), GET.reply)
        assert reply is not None and [t.id for t in reply.tasks] == ["live"]
    finally:
        sender.close()


async def test_no_responder_is_deadline_exceeded(tmp_path: Path, requesters: list[rpc.Requester]) -> None:
    r = make_requester(requesters, ipc(tmp_path, "nobody"), timeout=0.3)
    with pytest.raises(errors.TaskyardError) as info:
        await asyncio.wait_for(r.call(contract.STORE_GET, tasks_pb2.GetTasksRequest(ids=["x"])), 2)
    assert info.value.code == errors.Code.DEADLINE_EXCEEDED


async def test_oversized_request_is_dropped(
    tmp_path: Path, servers: list[Server], requesters: list[rpc.Requester]
) -> None:
    async def handler(req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope) -> tasks_pb2.GetTasksReply:
        return echo_reply(req)

    address = ipc(tmp_path, "store")
    servers.append(Server(address, handler, max_message_bytes=4096))
    r = make_requester(requesters, address, timeout=0.5)
    assert [t.id for t in (await get(r, "small")).tasks] == ["small"]

    with pytest.raises(errors.TaskyardError) as info:
        await get(r, "x" * 10_000)
    assert info.value.code == errors.Code.DEADLINE_EXCEEDED
    assert servers[0].calls == 1, "the oversized request never reached the handler"

    # The responder survives and serves the next (small) request.
    assert [t.id for t in (await get(r, "again", limit=5)).tasks] == ["again"]


async def test_oversized_reply_is_dropped(
    tmp_path: Path, servers: list[Server], requesters: list[rpc.Requester]
) -> None:
    async def handler(req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope) -> tasks_pb2.GetTasksReply:
        return echo_reply(req)

    address = ipc(tmp_path, "store")
    servers.append(Server(address, handler))
    r = make_requester(requesters, address, timeout=0.5, limit=2048)
    with pytest.raises(errors.TaskyardError) as info:
        await get(r, *(f"id-{i:04}" for i in range(400)))  # request ~4 KiB fits the server, not the client
    assert info.value.code == errors.Code.DEADLINE_EXCEEDED
    # The reply is too big for the client, whose NNG closes the pipe; the request is
    # then sent again on the next pipe until the deadline (handlers are idempotent).
    assert servers[0].calls >= 1


async def test_a_refused_message_is_let_go_by_the_context_that_received_it(
    tmp_path: Path,
    servers: list[Server],
    requesters: list[rpc.Requester],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the gate refuses leaves memory at once, not when the context that received
    it takes its next request. NNG hands messages to the waiting contexts in turn, so a
    context that kept its last refused message kept it while every other context took
    one: under a keyless flood of 32.9 MiB bodies a store (256 contexts) held up to 14
    of them (+458 MiB, bench/chaos_flood.py), past what docs/security.md says NNG holds."""
    junk_messages = 3  # fewer than a pipe's refusal burst: its pipe stays open
    refused: list[weakref.ref[pynng.Message]] = []
    all_refused = asyncio.Event()
    original = gate.Gate.open

    async def noting(self: gate.Gate, msg: Any) -> bytes | None:
        clear = await original(self, msg)
        if clear is None:
            refused.append(weakref.ref(msg))
            if len(refused) == junk_messages:
                all_refused.set()
        return clear

    monkeypatch.setattr(gate.Gate, "open", noting)

    async def handler(req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope) -> tasks_pb2.GetTasksReply:
        return echo_reply(req)

    address = ipc(tmp_path, "store")
    servers.append(Server(address, handler, max_message_bytes=4 << 20))
    keyless = pynng.Req0(dial=address, send_timeout=5000)  # no seal: refused as unsigned
    try:
        for _ in range(junk_messages):
            await keyless.asend(bytes(1 << 20))
        await asyncio.wait_for(all_refused.wait(), 30)
    finally:
        keyless.close()
    # Each went to a context of its own, which waits for its next request now: none is held.
    assert [alive() for alive in refused] == [None] * junk_messages
    r = make_requester(requesters, address)
    assert [t.id for t in (await get(r, "after")).tasks] == ["after"]


# --- Inbox: a socket's messages taken on the event loop (NNG's receive fd) -------------


def connected(pub: pynng.Pub0) -> asyncio.Event:
    """Set once the PUB has a subscriber's pipe (it drops what no one hears)."""
    event = asyncio.Event()
    loop = asyncio.get_running_loop()
    pub.add_post_pipe_connect_cb(lambda _pipe: loop.call_soon_threadsafe(event.set))
    return event


async def test_inbox_takes_messages_in_order_as_they_arrive(tmp_path: Path) -> None:
    address = ipc(tmp_path, "inbox")
    pub = pynng.Pub0(listen=address)
    ready = connected(pub)
    sub = pynng.Sub0(dial=address, recv_max_size=LIMIT)
    sub.subscribe(b"")
    inbox = transport.Inbox(sub)
    try:
        got: list[bytes] = []

        async def take(n: int) -> None:
            while len(got) < n:
                got.append(await inbox.recv())

        reader = asyncio.create_task(take(3))
        await asyncio.wait_for(ready.wait(), 5)
        assert not reader.done()  # nothing to take yet: it waits on the descriptor
        for i in range(3):
            pub.send(f"m{i}".encode())
        await asyncio.wait_for(reader, 5)
        assert got == [b"m0", b"m1", b"m2"]
    finally:
        inbox.close()
        pub.close()


async def test_inbox_close_ends_a_waiting_recv_with_closed(tmp_path: Path) -> None:
    sub = pynng.Sub0(listen=ipc(tmp_path, "inbox-close"))
    inbox = transport.Inbox(sub)
    waiting = asyncio.create_task(inbox.recv())
    await asyncio.sleep(0)  # one loop pass: it is waiting on the descriptor
    inbox.close()
    with pytest.raises(pynng.Closed):
        await asyncio.wait_for(waiting, 5)
    with pytest.raises(pynng.Closed):
        await inbox.recv()


async def test_inbox_cancelled_wait_leaves_the_descriptor_off_the_loop(tmp_path: Path) -> None:
    address = ipc(tmp_path, "inbox-cancel")
    pub = pynng.Pub0(listen=address)
    ready = connected(pub)
    sub = pynng.Sub0(dial=address, recv_max_size=LIMIT)
    sub.subscribe(b"")
    inbox = transport.Inbox(sub)
    loop = asyncio.get_running_loop()
    try:
        waiting = asyncio.create_task(inbox.recv())
        await asyncio.wait_for(ready.wait(), 5)
        waiting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiting
        # Unregistered: removing it again reports nothing was registered.
        assert loop.remove_reader(int(sub.recv_fd)) is False
        pub.send(b"after")
        assert await asyncio.wait_for(inbox.recv(), 5) == b"after"
    finally:
        inbox.close()
        pub.close()
