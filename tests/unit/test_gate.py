"""The gate's cheap parts: a kind's bound, the kind read off an envelope's first
bytes, a pipe's refusal budget (the flood itself: tests/integration/test_store_flood.py)."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref
from typing import Any

import pynng
import pytest

from taskyard.bus.v1 import envelope_pb2
from taskyard.core import contract, gate, seal, transport


def test_a_read_is_bounded_by_the_grpc_limit_and_a_write_by_the_socket() -> None:
    limits = gate.store_request_limits(4 << 20)
    assert limits[contract.STORE_GET.kind] == (4 << 20) + gate.ENVELOPE_SLACK_BYTES
    assert contract.STORE_REPORT.kind not in limits
    assert contract.STORE_INSERT.kind not in limits
    assert contract.STORE_LOGS.kind not in limits
    # Flow control's requests are one limit or one page request each.
    for method in (contract.STORE_LIMITS, contract.STORE_LIMIT_CHANGE, contract.STORE_LEASED_FLOW):
        assert limits[method.kind] == (4 << 20) + gate.ENVELOPE_SLACK_BYTES


def test_the_kind_is_read_from_the_first_bytes() -> None:
    raw = transport.encode(contract.STORE_GET.kind, b"x" * 100_000, headers={"traceparent": "00-ab"})
    assert gate.envelope_kind(memoryview(raw)) == contract.STORE_GET.kind
    # proto3 leaves kind 0 out: the next field says so.
    assert gate.envelope_kind(envelope_pb2.Envelope(payload=b"x").SerializeToString()) == 0
    assert gate.envelope_kind(b"\xff" * 64) is None
    assert gate.envelope_kind(b"") is None


def test_a_pipe_spends_its_burst_then_is_forgiven_at_the_rate() -> None:
    budget = gate.Budget(0.0, burst=3, rate=1.0)
    assert [budget.charge(0.0) for _ in range(3)] == [True, True, True]
    assert not budget.charge(0.0)
    assert budget.charge(2.0)  # two seconds forgive two refusals


class _GonePipe:
    """A pipe whose peer went before the gate closed it (NNG answers NoEntry)."""

    id = 7
    closed = 0

    def close(self) -> None:
        self.closed += 1
        raise pynng.exceptions.NoEntry("Entry not found", 12)


class _Msg:
    def __init__(self, pipe: _GonePipe) -> None:
        self.pipe = pipe


def test_closing_a_pipe_that_is_gone_already_is_not_an_error() -> None:
    g = gate.Gate(seal.Seal(seal.Keyring()), seal.ReplayGuard(), "test", police=True, clock=lambda: 0.0)
    pipe = _GonePipe()
    for _ in range(gate.REFUSAL_BURST + 1):
        g._charge(_Msg(pipe), pipe.id)
    assert pipe.closed == 1 and g.pipes_closed == 1
    assert g.screen(pipe.id, memoryview(b"x")) == gate.CLOSED_PIPE
    g.forget(pipe)
    assert g.screen(pipe.id, memoryview(b"x")) == gate.CLOSED_PIPE  # gone: still known as such
    assert pipe.id not in g._budgets and pipe.id not in g._closed


class _TcpPipe:
    def __init__(self, pid: int, address: str) -> None:
        self.id = pid
        self.remote_address = address
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def test_an_address_that_flooded_may_connect_once_a_second() -> None:
    now = [0.0]
    g = gate.Gate(seal.Seal(seal.Keyring()), seal.ReplayGuard(), "test", police=True, clock=lambda: now[0])
    flooding = _TcpPipe(1, "10.0.0.9:40001")
    g._charge(_Msg(flooding), flooding.id, at_once=True)  # type: ignore[arg-type]
    assert flooding.closed == 1
    again = [_TcpPipe(2 + i, f"10.0.0.9:{40002 + i}") for i in range(3)]
    for p in again:
        g.admit(p)
    assert [p.closed for p in again] == [0, 1, 1]  # one at once, then the rate
    other = _TcpPipe(9, "10.0.0.10:40001")
    g.admit(other)
    assert other.closed == 0  # another address is not held to it
    now[0] = 1.0
    late = _TcpPipe(10, "10.0.0.9:40010")
    g.admit(late)
    assert late.closed == 0
    assert g.connections_refused == 2


def test_an_address_penalty_lapses_after_a_quiet_spell() -> None:
    now = [0.0]
    g = gate.Gate(seal.Seal(seal.Keyring()), seal.ReplayGuard(), "test", police=True, clock=lambda: now[0])
    g._charge(_Msg(_TcpPipe(1, "10.0.0.9:40001")), 1, at_once=True)  # type: ignore[arg-type]
    g.admit(_TcpPipe(2, "10.0.0.9:40002"))  # the one connection at once
    now[0] = 0.5
    refused = _TcpPipe(3, "10.0.0.9:40003")
    g.admit(refused)
    assert refused.closed == 1  # a refused connection is not quiet: the spell starts again
    now[0] = 0.5 + gate.ADDRESS_QUIET_SECONDS
    burst = [_TcpPipe(10 + i, f"10.0.0.9:{40010 + i}") for i in range(3)]
    for p in burst:
        g.admit(p)
    assert [p.closed for p in burst] == [0, 0, 0]
    assert g._penalised == {}


KEY = seal.Keyring.parse(seal.generate_keys("k1"))


class _Buffered:
    """A received message as the gate reads it: bytes in ``_buffer``, and its pipe."""

    def __init__(self, data: bytes, pipe: Any) -> None:
        self._buffer = data
        self.pipe = pipe


def _keyed_gate(sealer: seal.Seal | None = None) -> gate.Gate:
    return gate.Gate(sealer or seal.Seal(KEY), seal.ReplayGuard(), "test", police=True)


def _forged(size: int) -> bytes:
    """A body with a fresh trailer under the real key id and a MAC that is not the key's."""
    good = seal.Seal(KEY).seal(b"x" * size)
    return good[: -seal.MAC_BYTES] + bytes(seal.MAC_BYTES)


async def test_busy_closes_the_pipe_but_does_not_penalise_its_address() -> None:
    g = _keyed_gate()
    g._hashing = 99  # another stranger's large body is being hashed
    first = _TcpPipe(1, "10.0.0.9:40001")
    assert await g.open(_Buffered(seal.Seal(KEY).seal(b"x" * gate.LARGE_BODY_BYTES), first)) is None
    assert first.closed == 1
    again = [_TcpPipe(2 + i, f"10.0.0.9:{40002 + i}") for i in range(3)]
    for p in again:
        g.admit(p)
    assert [p.closed for p in again] == [0, 0, 0]
    assert g.connections_refused == 0


async def test_a_trusted_pipe_that_sends_a_bad_mac_is_charged() -> None:
    g = _keyed_gate()
    pipe = _TcpPipe(1, "10.0.0.9:40001")
    assert await g.open(_Buffered(seal.Seal(KEY).seal(b"hello"), pipe)) == b"hello"
    for _ in range(gate.REFUSAL_BURST + 1):
        assert await g.open(_Buffered(_forged(10), pipe)) is None
    assert pipe.closed == 1 and g.pipes_closed == 1
    # and a large one closes it at once
    other = _TcpPipe(2, "10.0.0.8:40001")
    assert await g.open(_Buffered(seal.Seal(KEY).seal(b"hi"), other)) == b"hi"
    assert await g.open(_Buffered(_forged(gate.LARGE_BODY_BYTES), other)) is None
    assert other.closed == 1


class _Socket:
    def __init__(self) -> None:
        self._pipes: dict[int, Any] = {}
        self._pipe_notify_lock = threading.Lock()


async def test_what_a_gone_pipe_queued_is_dropped_unhashed_and_leaves_nothing() -> None:
    g = _keyed_gate()
    sock = _Socket()
    pipe = _TcpPipe(5, "10.0.0.9:40001")
    pipe.socket = sock  # type: ignore[attr-defined]
    g.forget(pipe)  # gone, with a message of its still queued
    sock._pipes[pipe.id] = pipe  # pynng lists the pipe again when that message is read
    before = g.seal.refusals.counts().get(gate.CLOSED_PIPE, 0)
    assert await g.open(_Buffered(_forged(10), pipe)) is None
    assert g.macs == 0
    assert g._budgets == {} and g._proven == set() and g._closed == set()
    assert sock._pipes == {}
    assert g.seal.refusals.counts().get(gate.CLOSED_PIPE, 0) == before + 1
    # A verified message from a gone pipe (it passed its screen just before) trusts nothing.
    assert g._verified(_Buffered(b"", pipe), pipe.id, b"clear") == b"clear"
    assert g._proven == set()
    for pid in range(100, 100 + gate.GONE_PIPES + 10):
        g.forget(_TcpPipe(pid, "10.0.0.9:1"))
    assert len(g._gone) == gate.GONE_PIPES


class _HeldSeal(seal.Seal):
    """A seal whose MAC waits for the test before hashing, and says when it is done."""

    def __init__(self) -> None:
        super().__init__(KEY)
        self.started = threading.Event()
        self.proceed = threading.Event()
        self.done = threading.Event()
        self.result: bytes | None = None

    def open(self, raw: bytes, guard: Any, where: str = "") -> bytes | None:
        self.started.set()
        self.proceed.wait(60)
        try:
            clear = super().open(raw, guard, where)
            self.result = bytes(clear) if clear is not None else None
            return clear
        finally:
            self.done.set()


class _Watched(gate.Gate):
    """A gate that says when a thread's hash, slot release included, is over."""

    def __init__(self, sealer: seal.Seal) -> None:
        super().__init__(sealer, seal.ReplayGuard(), "test", police=True)
        self.hashed = threading.Event()

    def _hash(self, msg: Any, stranger: bool) -> bytes | None:
        try:
            return super()._hash(msg, stranger)
        finally:
            self.hashed.set()


async def test_a_message_being_hashed_outlives_a_cancelled_caller() -> None:
    held = _HeldSeal()
    g = _Watched(held)
    data = b"y" * (8 << 20)
    msg = pynng.Message(held.seal(data))
    alive = weakref.ref(msg)
    task = asyncio.create_task(g.open(msg))
    del msg
    await asyncio.to_thread(held.started.wait, 60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    del task
    gc.collect()
    # The thread still reads NNG's buffer: the message (which frees it) must live.
    assert alive() is not None
    held.proceed.set()
    await asyncio.to_thread(held.done.wait, 60)
    assert held.result == data
    await asyncio.to_thread(g.hashed.wait, 60)
    assert g._hashing == 0  # the strangers' slot is released by the thread
