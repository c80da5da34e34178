"""A pool's contact with the stores: a report unanswered for its patience, or one that
fails, cuts the pool off (and asks for a heartbeat at once); only an answered
heartbeat ends it; the flips are told to whoever watches (the slot notice)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from taskyard.bus.v1 import dispatch_pb2, leases_pb2, task_record_pb2
from taskyard.core import contract, errors
from taskyard.core.retry import RetryPolicy
from taskyard.worker_pool.contact import StoreContact
from taskyard.worker_pool.reports import ReportForwarder

pytestmark = pytest.mark.asyncio


class HeldStore:
    """Answers a report only once ``answer`` is set (a route that holds the bytes)."""

    def __init__(self) -> None:
        self.answer = asyncio.Event()
        self.calls = 0

    async def call(self, method: contract.Method[Any, Any], req: Any, **_: Any) -> leases_pb2.ReportReply:
        self.calls += 1
        await self.answer.wait()
        return leases_pb2.ReportReply()


class FailingStore:
    def __init__(self) -> None:
        self.calls = 0
        self.thrice = asyncio.Event()

    async def call(self, method: contract.Method[Any, Any], req: Any, **_: Any) -> leases_pb2.ReportReply:
        self.calls += 1
        if self.calls >= 3:
            self.thrice.set()
        raise errors.unavailable("no reply within 5.0s")


def _outcome() -> dispatch_pb2.PoolReport:
    ref = task_record_pb2.AttemptRef(task_id="a", attempt=1, lease_token="t")
    return dispatch_pb2.PoolReport(completed=[leases_pb2.Completion(ref=ref, success=True)])


async def test_a_report_left_unanswered_cuts_the_pool_off_until_a_heartbeat_is_answered() -> None:
    flips: list[bool] = []
    contact = StoreContact(patience=0.05)
    contact.watch(lambda: flips.append(contact.cut_off))
    store = HeldStore()
    fwd = ReportForwarder(store, RetryPolicy(), contact=contact)  # type: ignore[arg-type]
    fwd.submit(_outcome())

    await asyncio.wait_for(contact.beat_now.wait(), 5)  # cut off: a heartbeat is wanted now
    assert contact.cut_off and flips == [True]

    store.answer.set()  # the report gets through; that alone does not end it
    await asyncio.wait_for(fwd.idle.wait(), 5)
    assert contact.cut_off

    contact.heard()  # a heartbeat answered
    assert not contact.cut_off and flips == [True, False]


async def test_a_failed_report_cuts_the_pool_off_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("taskyard.worker_pool.reports.RETRY_PAUSE", (0.01, 0.01))
    flips: list[bool] = []
    contact = StoreContact(patience=30.0)
    contact.watch(lambda: flips.append(contact.cut_off))
    store = FailingStore()
    fwd = ReportForwarder(store, RetryPolicy(), contact=contact)  # type: ignore[arg-type]
    fwd.submit(_outcome())
    await asyncio.wait_for(store.thrice.wait(), 5)  # retried, failing each time: told once
    assert contact.cut_off and contact.beat_now.is_set() and flips == [True]
