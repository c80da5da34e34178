"""A pool's PAIR listener on real NNG sockets: several peers may connect, a sealed
hello admits one, what fails the seal closes its pipe, and slot notices go to the
admitted peers only (core/pair_peers.py)."""

from __future__ import annotations

import asyncio
import weakref
from pathlib import Path
from typing import Any

import pynng
import pytest
from support.waiting import wait_until_async

from taskyard.bus.v1 import dispatch_pb2
from taskyard.core import contract, transport
from taskyard.core import pair_peers as peers_mod
from taskyard.core.pair_peers import SchedulerPeers
from taskyard.scheduler import pools

pytestmark = pytest.mark.asyncio

MAX_BYTES = 1 << 20
PAIR1_PROTOCOL = 0x11  # NNG_PAIR1_SELF


class _Raw:
    """A keyless peer: a plain pynng PAIR socket that records its pipes' lives."""

    def __init__(self, address: str, *, redial_ms: int | None = None) -> None:
        # ``redial_ms``: how long a closed pipe waits before NNG dials again (its
        # default is soon, so a refused peer comes back and is refused again).
        self.sock = pynng.Pair1(recv_timeout=200, reconnect_time_min=redial_ms, reconnect_time_max=redial_ms)
        self.connected = 0
        self.closed = 0
        # Set before the callbacks exist: NNG may call them as soon as the dial starts.
        self._ids: set[int] = set()
        self.sock.add_post_pipe_connect_cb(self._up)
        self.sock.add_post_pipe_remove_cb(self._down)
        self.sock.dial(address, block=False)

    def _up(self, pipe: Any) -> None:
        self._ids.add(pipe.id)
        self.connected += 1

    def _down(self, pipe: Any) -> None:
        if pipe.id in self._ids:
            self.closed += 1


async def _listener(address: str) -> tuple[SchedulerPeers, list[str]]:
    lost: list[str] = []
    sock = transport.open_pair(max_message_bytes=MAX_BYTES, listen=address, several=True)
    peers = SchedulerPeers(sock, where=address, on_lost=lambda: lost.append("lost"))
    peers.attach(asyncio.get_running_loop())
    return peers, lost


async def test_a_squatter_neither_keeps_the_scheduler_out_nor_hears_slot_notices(tmp_path: Path) -> None:
    address = f"ipc://{tmp_path}/pool.pair"
    peers, lost = await _listener(address)
    squatter = _Raw(address)
    scheduler: Any = None
    try:
        await wait_until_async(lambda: squatter.connected == 1, 5, "the squatter to connect first")
        scheduler = pools.open_link(address, max_message_bytes=MAX_BYTES)
        first = await asyncio.wait_for(peers.arecv(), 5)  # the scheduler's hello, admitted
        assert contract.DISPATCH.open(first) == dispatch_pb2.Dispatch()
        assert peers.admitted == 1

        notice = contract.POOL_REPORT.encode(dispatch_pb2.PoolReport(free_slots=1))
        assert peers.send(notice) == 1
        heard = contract.POOL_REPORT.open(await asyncio.wait_for(scheduler.arecv(), 5))
        assert heard is not None and heard.free_slots == 1
        with pytest.raises(pynng.Timeout):
            await squatter.sock.arecv()  # nothing reaches the unadmitted peer

        # It said nothing: dropped once its time for a hello is over.
        await wait_until_async(
            lambda: squatter.closed >= 1, peers_mod.HELLO_TIMEOUT + 5, "the squatter's drop"
        )
        assert peers.dropped >= 1 and peers.admitted == 1 and lost == []
    finally:
        squatter.sock.close()
        if scheduler is not None:
            scheduler.close()
        peers.close()


async def test_an_unsealed_message_closes_its_pipe_at_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    address = f"ipc://{tmp_path}/pool.pair"
    peers, lost = await _listener(address)
    squatter = _Raw(address)
    receiving = asyncio.ensure_future(peers.arecv())
    try:
        await wait_until_async(lambda: squatter.connected == 1, 5, "the squatter to connect")
        await squatter.sock.asend(contract.DISPATCH.encode(dispatch_pb2.Dispatch()))  # no seal
        await wait_until_async(lambda: peers.dropped == 1, 10, "its drop")
        # For what it sent, not for its silence.
        assert "a message that fails the seal (unsigned)" in caplog.text
        assert "no sealed hello" not in caplog.text
        assert not receiving.done() and peers.admitted == 0 and lost == []
    finally:
        receiving.cancel()
        squatter.sock.close()
        peers.close()


async def test_an_admitted_peer_that_goes_away_is_reported_lost(tmp_path: Path) -> None:
    address = f"ipc://{tmp_path}/pool.pair"
    peers, lost = await _listener(address)
    scheduler = pools.open_link(address, max_message_bytes=MAX_BYTES)
    try:
        await asyncio.wait_for(peers.arecv(), 5)
        scheduler.close()
        await wait_until_async(lambda: lost == ["lost"], 5, "the scheduler's pipe to go")
        assert peers.admitted == 0
    finally:
        peers.close()


async def test_a_keyless_peer_gets_a_few_pending_pipes_and_the_rest_are_closed_as_they_connect() -> None:
    # On tcp, where the pool's port is reached by strangers: the cap is per host.
    sock = transport.open_pair(max_message_bytes=MAX_BYTES, listen="tcp://127.0.0.1:0", several=True)
    address = transport.listen_address(sock)
    # No hello timeout meanwhile: what closes a pipe here is the cap alone.
    peers = SchedulerPeers(sock, where=address, on_lost=lambda: None, hello_timeout=600)
    peers.attach(asyncio.get_running_loop())
    many = peers_mod.PENDING_PER_HOST + 6
    # Refused ones would dial again and again (and be refused again): not while counted.
    squatters = [_Raw(address, redial_ms=600_000) for _ in range(many)]
    try:
        # Every one connects once; all but the cap's worth are closed at once,
        # before NNG reads anything from them.
        await wait_until_async(
            lambda: peers.refused == many - peers_mod.PENDING_PER_HOST,
            10,
            lambda: f"the pipes past the cap closed (refused {peers.refused}, pending {peers.pending})",
        )
        assert peers.pending == peers_mod.PENDING_PER_HOST and peers.admitted == 0 and peers.dropped == 0
        assert sock.recv_buffer_size == transport.PAIR_LISTEN_BUFFER
    finally:
        for squatter in squatters:
            squatter.sock.close()
        peers.close()


async def test_a_scheduler_says_hello_while_its_loop_is_stalled(tmp_path: Path) -> None:
    # The pool side is read synchronously on this very loop: the loop is stalled for
    # as long as it waits, and the hello must come without it.
    address = f"ipc://{tmp_path}/pool.pair"
    pool_side = transport.open_pair(max_message_bytes=MAX_BYTES, listen=address, several=True)
    pool_side.recv_timeout = 5000
    scheduler = pools.open_link(address, max_message_bytes=MAX_BYTES)
    try:
        first = pool_side.recv()  # blocks the loop: the scheduler's loop included
        assert first == pools.HELLO
    finally:
        scheduler.close()
        pool_side.close()


async def test_a_keyless_peer_that_declares_a_message_past_the_limit_is_closed_unread() -> None:
    sock = transport.open_pair(max_message_bytes=MAX_BYTES, listen="tcp://127.0.0.1:0", several=True)
    address = transport.listen_address(sock)
    peers = SchedulerPeers(sock, where=address, on_lost=lambda: None, hello_timeout=600)
    peers.attach(asyncio.get_running_loop())
    host, port = address.removeprefix("tcp://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        # NNG's handshake as a pair1 peer, then a length prefix far past the limit.
        writer.write(b"\x00SP\x00" + PAIR1_PROTOCOL.to_bytes(2, "big") + b"\x00\x00")
        assert await asyncio.wait_for(reader.readexactly(8), 10)  # the pool's handshake
        await wait_until_async(lambda: peers.pending == 1, 10, "the connection pending")
        writer.write((1 << 40).to_bytes(8, "big"))
        assert await asyncio.wait_for(reader.read(), 10) == b""  # closed, nothing read or held
        await wait_until_async(lambda: peers.pending == 0, 10, "its place given back")
    finally:
        writer.close()
        peers.close()


async def test_a_refused_message_is_not_kept_while_the_next_one_is_awaited(tmp_path: Path) -> None:
    """What fails the seal is freed as it is refused: the receive loop does not keep it
    while it waits for the next message (each may be as large as the receive limit)."""
    address = f"ipc://{tmp_path}/pool.pair"
    peers, lost = await _listener(address)
    received: list[weakref.ref[pynng.Message]] = []
    take = peers.sock.arecv_msg

    async def noting() -> pynng.Message:
        msg = await take()
        received.append(weakref.ref(msg))
        return msg

    peers.sock.arecv_msg = noting
    squatter = _Raw(address)
    receiving = asyncio.ensure_future(peers.arecv())
    try:
        await wait_until_async(lambda: squatter.connected == 1, 5, "the squatter to connect")
        # Half a MiB of zeros under the dispatch kind, unsealed: refused by its seal, never parsed.
        await squatter.sock.asend(contract.DISPATCH.encode(bytes(MAX_BYTES // 2)))
        await wait_until_async(lambda: peers.dropped == 1, 10, "its drop")
        # The loop waits for the next message now, holding nothing of the refused one.
        assert len(received) == 1 and received[0]() is None
        assert not receiving.done() and lost == []
    finally:
        receiving.cancel()
        squatter.sock.close()
        peers.close()
