"""The dispatcher's hooks into flow control: a lease the store refused frees its
units, a lease whose outcome is unknown keeps them, a failed send frees only what
the store handed back."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pynng
from support.admission import Harness, concurrency

from taskyard.bus.v1 import leases_pb2, views_pb2
from taskyard.core import contract, errors
from taskyard.scheduler.dispatcher import Dispatcher
from taskyard.scheduler.pools import Pool


class _Socket:
    def __init__(self, *, fails: bool) -> None:
        self.fails = fails
        self.sent = 0

    async def asend(self, data: bytes) -> None:
        if self.fails:
            raise pynng.Closed("closed", 7)
        self.sent += 1


class _Store:
    """Leases what ``lease`` allows (None: the call fails); releases what ``release`` allows."""

    def __init__(self, *, lease: set[str] | None, release: set[str] | None = None) -> None:
        self.lease, self.release = lease, release or set()
        self.leased = asyncio.Event()
        self.reported = asyncio.Event()

    async def call_raw(self, method: Any, request: leases_pb2.LeaseTasksRequest, **_: Any) -> bytes:
        assert method is contract.STORE_LEASE
        self.leased.set()
        if self.lease is None:
            raise errors.TaskyardError(errors.Code.UNAVAILABLE, "UNAVAILABLE", "store gone")
        heads = views_pb2.TaskRecordHeads()
        for lease in request.leases:
            if lease.task_id in self.lease:
                heads.tasks.add(id=lease.task_id, name="add", attempt=1, lease_token=lease.lease_token)
        return heads.SerializeToString()

    async def call(self, method: Any, request: leases_pb2.ReportRequest, **_: Any) -> leases_pb2.ReportReply:
        assert method is contract.STORE_REPORT
        self.reported.set()
        return leases_pb2.ReportReply(
            released=[r.ref.task_id for r in request.released if r.ref.task_id in self.release]
        )


async def _setup(store: _Store, *, send_fails: bool = False) -> tuple[Harness, Dispatcher, Pool]:
    h = Harness(concurrency("one", 2, per_key=False))
    await h.load_async()
    pool = Pool(
        pool_id="p",
        pair_address="ipc:///x",
        names=frozenset({"add"}),
        capacity=8,
        socket=_Socket(fails=send_fails),
    )
    registry = cast(Any, type("Registry", (), {})())
    registry.pools = {"p": pool}
    d = Dispatcher(h.lanes, registry, cast(Any, store), lease_ms=30_000, flow=h.flow)
    return h, d, pool


async def _dispatched(d: Dispatcher, store: _Store) -> None:
    d.dispatch_once()
    await asyncio.wait_for(store.leased.wait(), 5)
    while d._inflight:  # the lease-and-send tasks, to their end
        await asyncio.gather(*d._inflight)


async def test_a_lease_the_store_refused_frees_its_units() -> None:
    store = _Store(lease={"a"})
    h, d, _pool = await _setup(store)
    h.submit("a", ("one", "", 1))
    h.submit("b", ("one", "", 1))  # cancelled meanwhile: its lease is refused
    await _dispatched(d, store)
    assert h.flow.admission.held(("one", "")) == 1


async def test_a_lease_whose_outcome_is_unknown_keeps_its_units_until_the_store_says() -> None:
    store = _Store(lease=None)
    h, d, _pool = await _setup(store)
    h.submit("a", ("one", "", 1))
    d.dispatch_once()
    await asyncio.wait_for(store.leased.wait(), 5)
    task = next(iter(d._inflight))
    task.cancel()  # past the failure, before its retry's sleep ends
    await asyncio.gather(task, return_exceptions=True)
    assert h.flow.admission.held(("one", "")) == 1
    h.clock.now += 1
    await h.flow.resync()  # the store has no lease of it: free
    assert h.flow.admission.held(("one", "")) == 0


async def test_a_failed_send_frees_only_what_the_store_handed_back() -> None:
    store = _Store(lease={"a", "b"}, release={"a"})  # b had reached its pool and started
    h, d, _pool = await _setup(store, send_fails=True)
    h.submit("a", ("one", "", 1))
    h.submit("b", ("one", "", 1))
    await _dispatched(d, store)
    assert store.reported.is_set()
    assert h.flow.admission.held(("one", "")) == 1
    assert "a" in h.lanes and "b" not in h.lanes
