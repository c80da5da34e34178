"""The scheduler's PAIR copy of a fast-path lease is a delayed backstop
(Dispatcher.send_backup): it goes only for attempts the pool has not reported done."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pynng
import pytest

from taskyard.bus.v1 import dispatch_pb2, leases_pb2, task_record_pb2
from taskyard.core import contract
from taskyard.scheduler import dispatcher as dispatcher_mod
from taskyard.scheduler.dispatcher import Dispatcher
from taskyard.scheduler.lanes import Lanes
from taskyard.scheduler.pools import Pool


class _Socket:
    def __init__(self) -> None:
        self.sent: list[dispatch_pb2.Dispatch] = []
        self.arrived = asyncio.Event()

    async def asend(self, data: bytes) -> None:
        msg = contract.DISPATCH.open(data)
        assert msg is not None
        self.sent.append(msg)
        self.arrived.set()


def _record(task_id: str) -> task_record_pb2.TaskRecord:
    return task_record_pb2.TaskRecord(id=task_id, name="add", attempt=1, lease_token=f"tok-{task_id}")


async def test_only_attempts_still_in_flight_get_the_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dispatcher_mod, "BACKUP_DELAY", 0.01)
    sock = _Socket()
    pool = Pool(pool_id="p", pair_address="ipc:///x", names=frozenset({"add"}), capacity=8, socket=sock)
    d = Dispatcher(Lanes(), Any, Any, lease_ms=30_000)  # type: ignore[arg-type]
    done, running, again = _record("done"), _record("running"), _record("again")
    for r in (done, running, again):
        pool.inflight[r.id] = 1.0
    d.send_backup(pool, [done, running, again])
    pool.inflight.pop(done.id)  # the pool's slot notice: finished before the delay
    pool.inflight[again.id] = 2.0  # finished, then dispatched anew: not this copy's attempt
    await asyncio.wait_for(sock.arrived.wait(), 5)
    assert [[t.id for t in m.tasks] for m in sock.sent] == [[running.id]]


async def test_no_copy_when_everything_finished(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dispatcher_mod, "BACKUP_DELAY", 0.01)
    sock = _Socket()
    pool = Pool(pool_id="p", pair_address="ipc:///x", names=frozenset({"add"}), capacity=8, socket=sock)
    d = Dispatcher(Lanes(), Any, Any, lease_ms=30_000)  # type: ignore[arg-type]
    rec = _record("a")
    pool.inflight[rec.id] = 1.0
    d.send_backup(pool, [rec])
    pool.inflight.pop(rec.id)
    # The timer has fired once a later one (same delay, scheduled after it) has.
    later = asyncio.Event()
    asyncio.get_running_loop().call_later(0.02, later.set)
    await asyncio.wait_for(later.wait(), 5)
    await asyncio.sleep(0)  # a send it started would have run by now
    assert sock.sent == []


class _Store:
    """Leases hang until the test lets them answer; releases are recorded."""

    def __init__(self) -> None:
        self.leasing = asyncio.Event()
        self.released: list[Any] = []

    async def call_raw(self, method: Any, request: Any, **_: Any) -> bytes:
        self.leasing.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def call(self, method: Any, request: Any, **_: Any) -> Any:
        self.released.append(request)
        return leases_pb2.ReportReply(released=[r.ref.task_id for r in request.released])


async def test_a_closed_dispatcher_sends_no_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dispatcher_mod, "BACKUP_DELAY", 0.01)
    sock = _Socket()
    pool = Pool(pool_id="p", pair_address="ipc:///x", names=frozenset({"add"}), capacity=8, socket=sock)
    store = _Store()
    d = Dispatcher(Lanes(), Any, store, lease_ms=30_000)  # type: ignore[arg-type]
    rec = _record("a")
    pool.inflight[rec.id] = 1.0
    d.send_backup(pool, [rec])
    d.close()  # the term ended while the pool may be running it
    later = asyncio.Event()
    asyncio.get_running_loop().call_later(0.02, later.set)
    await asyncio.wait_for(later.wait(), 5)
    await asyncio.sleep(0)
    assert sock.sent == [] and store.released == []
    d.send_backup(pool, [rec])  # nor one asked for afterwards
    d._send_copy(pool, [rec])
    assert not d._backups and not d._inflight


async def test_a_send_that_fails_on_the_closed_link_hands_nothing_back(tmp_path: Path) -> None:
    """A real PAIR socket that never connected: the send waits in pynng, which a
    cancel does not stop; closing the socket at the term's end fails it. The lease
    stays (the pool may have the attempt): it lapses, or the next leader hands it back."""
    sock = pynng.Pair0(send_timeout=60_000)
    sock.dial(f"ipc://{tmp_path}/nowhere.sock", block=False)
    began = asyncio.Event()
    asend = sock.asend

    async def asend_noting_it_began(data: bytes) -> None:
        began.set()  # its waiter runs once this send yields: waiting inside pynng
        await asend(data)

    sock.asend = asend_noting_it_began
    pool = Pool(pool_id="p", pair_address="ipc:///x", names=frozenset({"add"}), capacity=8, socket=sock)
    store = _Store()
    d = Dispatcher(Lanes(), Any, store, lease_ms=30_000)  # type: ignore[arg-type]
    rec = _record("a")
    pool.inflight[rec.id] = 1.0
    sending = asyncio.create_task(d.send(pool, [rec]))  # a dispatch's send, after its lease
    await asyncio.wait_for(began.wait(), 5)
    d.close()
    sock.close()
    await asyncio.gather(sending, return_exceptions=True)
    assert store.released == []


async def test_a_failed_copy_mid_term_hands_nothing_back(tmp_path: Path) -> None:
    sock = pynng.Pair0(send_timeout=50)
    sock.dial(f"ipc://{tmp_path}/nowhere.sock", block=False)
    pool = Pool(pool_id="p", pair_address="ipc:///x", names=frozenset({"add"}), capacity=8, socket=sock)
    store = _Store()
    d = Dispatcher(Lanes(), Any, store, lease_ms=30_000)  # type: ignore[arg-type]
    try:
        d._send_copy(pool, [_record("copy")])
        (copy,) = d._inflight
        await copy
        assert store.released == []
        await d.send(pool, [_record("first")])  # a first send, unreachable: handed back
        assert len(store.released) == 1
    finally:
        sock.close()


async def test_closing_cancels_the_leases_in_flight() -> None:
    sock = _Socket()
    pool = Pool(pool_id="p", pair_address="ipc:///x", names=frozenset({"add"}), capacity=8, socket=sock)
    store = _Store()
    registry = type("Registry", (), {"pools": {"p": pool}})()
    lanes = Lanes()
    d = Dispatcher(lanes, registry, store, lease_ms=30_000)
    lanes.push_all([dispatcher_mod.ref_of(_record("a"))])
    d.dispatch_once()
    await asyncio.wait_for(store.leasing.wait(), 5)
    (inflight,) = d._inflight
    d.close()
    with pytest.raises(asyncio.CancelledError):
        await inflight
    assert sock.sent == [] and store.released == []
    lanes.push_all([dispatcher_mod.ref_of(_record("b"))])
    d.dispatch_once()  # a closed dispatcher leases nothing more
    assert not d._inflight
