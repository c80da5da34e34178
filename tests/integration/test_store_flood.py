"""A peer without the bus key floods the result-store's port (tcp, loopback) with
large junk that names the suite's real key id, as one that read a trailer off the
wire would. The store must refuse it cheaply, close the flooding pipe, and keep
answering sealed requests from the suite meanwhile.

"Never hashed" is observed through the seal: ``Seal.open`` (where the MAC is
computed) is wrapped to note any junk it is handed."""

from __future__ import annotations

import asyncio
import os
import struct
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pynng
import pytest
from support.ports import BLOCK, free_port_block

from taskyard.bus.v1 import leases_pb2, tasks_pb2
from taskyard.core import contract, errors, gate, ids, rpc, seal, transport
from taskyard.result_store.service import serve

pytestmark = pytest.mark.asyncio

JUNK_BYTES = 8 << 20  # over a read's bound (the gRPC limit), under the socket's
MARK = b"JUNK-FLOOD-7d1e"
WAIT = 60.0  # a safety net for waits on events, never a bound under test


def _trailer(kid: bytes, sent_at_ms: int) -> bytes:
    """A seal trailer with the real key id and a MAC of zeros (no key to make one)."""
    return (
        struct.pack(">Q", sent_at_ms)
        + os.urandom(seal.NONCE_BYTES)
        + kid
        + bytes((len(kid), seal.VERSION))
        + bytes(seal.MAC_BYTES)
    )


def junk(kind: int, *, sent_at_ms: int, size: int = JUNK_BYTES) -> bytes:
    """An envelope of ``kind`` whose payload is junk, under a forged trailer."""
    body = transport.encode(kind, MARK + os.urandom(64) + bytes(size))
    return body + _trailer(seal.current().keyring.signer.encode(), sent_at_ms)


class Flooder:
    """A keyless peer: a plain REQ socket (NNG redials a closed pipe by itself)
    sending ``make()`` again and again from a thread until stopped."""

    def __init__(
        self,
        address: str,
        make: Callable[[], bytes],
        loop: asyncio.AbstractEventLoop,
        *,
        first: bytes | None = None,
    ) -> None:
        self.sock = pynng.Req0(send_timeout=1000, recv_timeout=int(WAIT * 1000))
        self.closed_pipes = 0
        self._changed = asyncio.Event()
        self._loop = loop
        self._stop = threading.Event()
        # The pipes open now, under the condition the sending thread waits on after a failure.
        self._pipes = 0
        self._pipes_changed = threading.Condition()
        self.sock.add_post_pipe_connect_cb(self._pipe_added)
        self.sock.add_post_pipe_remove_cb(self._pipe_gone)
        self.sock.dial(address, block=True)
        self.answered = b""
        self._first = first
        self._make = make
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _pipe_added(self, _pipe: Any) -> None:
        with self._pipes_changed:
            self._pipes += 1
            self._pipes_changed.notify_all()

    def _pipe_gone(self, _pipe: Any) -> None:
        with self._pipes_changed:
            self._pipes = max(0, self._pipes - 1)
        transport.call_from_nng_thread(self._loop, self._note)

    def _note(self) -> None:
        self.closed_pipes += 1
        self._changed.set()

    def _run(self) -> None:
        if self._first is not None:  # sent, and its answer awaited, before the flood
            self.sock.send(self._first)
            self.answered = self.sock.recv()
        while not self._stop.is_set():
            try:
                self.sock.send(self._make())
            except pynng.NNGException:
                # Closed under it, or no pipe yet: NNG redials; send again once it has
                # (a send with a pipe on its way waits for it, up to its timeout).
                with self._pipes_changed:
                    self._pipes_changed.wait_for(lambda: self._pipes > 0 or self._stop.is_set())

    async def pipes_closed(self, n: int) -> None:
        while self.closed_pipes < n:
            self._changed.clear()
            await self._changed.wait()

    def close(self) -> None:
        self._stop.set()
        with self._pipes_changed:
            self._pipes_changed.notify_all()
        self.sock.close()
        self._thread.join()


@pytest.fixture
async def store(store_settings: Any) -> AsyncIterator[tuple[Any, rpc.Requester]]:
    start = free_port_block(BLOCK + 1)
    settings = store_settings.model_copy(
        update={"transport": "tcp", "host": "127.0.0.1", "discovery_port": start, "base_port": start + 1}
    )
    stop = asyncio.Event()
    task = asyncio.create_task(serve(settings, stop))
    req = rpc.Requester(settings.store_address, max_message_bytes=16 << 20, timeout=10)
    while True:
        try:
            await req.call(contract.STORE_GET, tasks_pb2.GetTasksRequest(ids=[]), timeout=0.5)
            break
        except errors.TaskyardError:
            if task.done():
                task.result()
    try:
        yield settings, req
    finally:
        req.close()
        stop.set()
        await asyncio.wait_for(task, 10)


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of junk messages handed to the MAC (Seal.open)."""
    seen: list[int] = []
    original = seal.Seal.open

    def noting(self: seal.Seal, raw: bytes, guard: Any, where: str = "") -> bytes | None:
        if MARK in bytes(raw[:256]):
            seen.append(len(raw))
        return original(self, raw, guard, where)

    monkeypatch.setattr(seal.Seal, "open", noting)
    return seen


async def _reads_answered(req: rpc.Requester, n: int) -> None:
    for _ in range(n):
        got = await req.call(contract.STORE_GET, tasks_pb2.GetTasksRequest(ids=[ids.new_task_id()]))
        assert list(got.tasks) == []


@pytest.mark.parametrize(
    "why",
    [
        "stale",  # a send time outside the window: the trailer alone refuses it
        "oversize",  # a read can carry no more than a gRPC request: its size refuses it
        "too_large",  # over the port's receive limit: NNG refuses it from its length prefix
    ],
)
async def test_junk_that_fails_the_cheap_checks_is_never_hashed_and_its_pipe_is_closed(
    store: tuple[Any, rpc.Requester], hashed: list[int], why: str
) -> None:
    settings, req = store
    refusals = seal.current().refusals
    before = refusals.counts().get(why, 0)
    if why == "stale":

        def make() -> bytes:
            return junk(contract.STORE_REPORT.kind, sent_at_ms=1)
    elif why == "oversize":

        def make() -> bytes:
            return junk(contract.STORE_GET.kind, sent_at_ms=int(time.time() * 1000))
    else:
        over = gate.store_receive_limit(settings.max_message_bytes) + 1

        def make() -> bytes:
            return junk(contract.STORE_REPORT.kind, sent_at_ms=int(time.time() * 1000), size=over)

    flood = Flooder(settings.store_address, make, asyncio.get_running_loop())
    try:
        # Twice: the store closes the pipe, NNG redials, and the new pipe is closed too.
        await asyncio.wait_for(flood.pipes_closed(2), WAIT)
        await _reads_answered(req, 20)  # the suite's own reads, while the flood goes on
        assert flood.closed_pipes >= 2
    finally:
        flood.close()
    assert hashed == []
    if why != "too_large":  # NNG drops that one itself: the seal never sees it
        assert refusals.counts().get(why, 0) > before


async def test_junk_that_passes_the_cheap_checks_costs_its_pipe_and_reads_go_on(
    store: tuple[Any, rpc.Requester], hashed: list[int]
) -> None:
    """A fresh trailer with the real key id on a write's kind can only be refused by
    its MAC: that is computed (off the event loop), the pipe is closed after a few,
    and the suite's reads are answered throughout."""
    settings, req = store
    refusals = seal.current().refusals
    before = refusals.counts().get("bad_mac", 0)

    def make() -> bytes:
        return junk(contract.STORE_REPORT.kind, sent_at_ms=int(time.time() * 1000))

    flood = Flooder(settings.store_address, make, asyncio.get_running_loop())
    try:
        await asyncio.wait_for(flood.pipes_closed(1), WAIT)
        reads = asyncio.create_task(_reads_answered(req, 20))
        await asyncio.wait_for(asyncio.gather(reads, flood.pipes_closed(flood.closed_pipes + 1)), WAIT)
        # A sealed write from the suite is still carried out amid the flood.
        reply = await req.call(contract.STORE_RENEW, leases_pb2.RenewLeasesRequest())
        assert reply is not None
    finally:
        flood.close()
    assert refusals.counts().get("bad_mac", 0) > before
    # Each pipe is closed once its refusal budget is spent: a bounded number of
    # MACs per pipe, whatever the flood's length (busy refusals are never hashed).
    assert 0 < len(hashed) <= (flood.closed_pipes + 1) * 5


async def test_a_copied_sealed_message_earns_no_pass_for_the_junk_after_it(
    store: tuple[Any, rpc.Requester], hashed: list[int]
) -> None:
    """A keyless peer first sends a copy of a sealed request (one the suite sealed for
    another store, taken off the wire): it verifies here, and is answered. The large
    forged writes it sends next on that connection are still refused by their MAC,
    and the connection is closed, after a bounded number of hashes."""
    settings, req = store
    copied = seal.current().seal(
        transport.encode(contract.STORE_GET.kind, tasks_pb2.GetTasksRequest(ids=[]).SerializeToString())
    )

    def make() -> bytes:
        return junk(contract.STORE_REPORT.kind, sent_at_ms=int(time.time() * 1000))

    flood = Flooder(settings.store_address, make, asyncio.get_running_loop(), first=copied)
    try:
        await asyncio.wait_for(flood.pipes_closed(1), WAIT)
        assert flood.answered  # the copy was taken for the suite's, before the junk
        await _reads_answered(req, 5)
    finally:
        flood.close()
    # The first connection's junk is hashed once (its large body failing its MAC closes
    # it at once); each redialled one is a stranger's, closed after one too.
    assert 0 < len(hashed) <= flood.closed_pipes + 1
