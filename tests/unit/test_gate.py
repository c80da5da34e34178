"""The gate's cheap parts: a kind's bound, the kind read off an envelope's first
bytes, a pipe's refusal budget (the flood itself: tests/integration/test_store_flood.py)."""

from __future__ import annotations

import pynng

from taskyard.bus.v1 import envelope_pb2
from taskyard.core import contract, gate, seal, transport


def test_a_read_is_bounded_by_the_grpc_limit_and_a_write_by_the_socket() -> None:
    limits = gate.store_request_limits(4 << 20)
    assert limits[contract.STORE_GET.kind] == (4 << 20) + gate.ENVELOPE_SLACK_BYTES
    assert contract.STORE_REPORT.kind not in limits
    assert contract.STORE_INSERT.kind not in limits
    assert contract.STORE_LOGS.kind not in limits


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
    assert g.screen(pipe.id, memoryview(b"x")) == ""


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
