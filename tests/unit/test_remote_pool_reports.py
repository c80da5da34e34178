"""What a worker stream's pool sends the store and the scheduler about its attempts:
a short attempt's start rides on its outcome (no write of its own), a long one's
start goes as a notice, and the scheduler gets one slot notice per request of
outcomes to the store, not one per outcome."""

from __future__ import annotations

import asyncio
from typing import Any

from google.protobuf import struct_pb2

from taskyard.bus.v1 import dispatch_pb2, leases_pb2, task_record_pb2
from taskyard.core import contract
from taskyard.core.config import Settings
from taskyard.core.states import WorkerState
from taskyard.gateway.remote_attempts import public_ref
from taskyard.gateway.remote_pool import RemotePool
from taskyard.worker.v1 import worker_service_pb2 as wpb


class FakeStore:
    """Answers reports; while ``gate`` is clear a report stays in flight."""

    def __init__(self) -> None:
        self.reports: list[leases_pb2.ReportRequest] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.news = asyncio.Event()

    async def call(self, method: Any, request: Any, **options: Any) -> Any:
        assert method is contract.STORE_REPORT
        self.reports.append(request)
        self.news.set()
        await self.gate.wait()
        return leases_pb2.ReportReply()

    async def report_where(self, check: Any) -> leases_pb2.ReportRequest:
        while True:
            for r in self.reports:
                if check(r):
                    return r
            self.news.clear()
            await self.news.wait()


class FakePair:
    def __init__(self) -> None:
        self.notices: list[dispatch_pb2.PoolReport] = []

    def send(self, raw: bytes) -> None:
        notice = contract.POOL_REPORT.open(raw)
        assert notice is not None
        self.notices.append(notice)


def pool_with(store: FakeStore, slots: int = 4) -> tuple[RemotePool, FakePair]:
    hello = wpb.Hello(worker_name="w", slots=slots, tasks=[wpb.TaskDeclaration(name="f")])
    pool = RemotePool(Settings(), hello, tenant="", send=lambda _: None, on_dead=lambda _: None, store=store)
    pair = FakePair()
    pool._pair = pair  # type: ignore[assignment]  # the scheduler's side of the PAIR
    pool.state = WorkerState.RUNNING  # as start() leaves it, without the bus
    return pool, pair


def holding(pool: RemotePool, task_id: str) -> wpb.AttemptRef:
    rec = task_record_pb2.TaskRecord(id=task_id, attempt=1, lease_token=f"lease-{task_id}", name="f")
    pool.attempts.hold(rec)
    return public_ref(rec)


def done(ref: wpb.AttemptRef) -> wpb.Outcome:
    return wpb.Outcome(ref=ref, result=struct_pb2.Value(string_value="ok"))


def test_a_short_attempt_s_start_rides_on_its_outcome() -> None:
    async def scenario() -> None:
        store = FakeStore()
        pool, _ = pool_with(store)
        writer = asyncio.create_task(pool.writer.run())
        ref = holding(pool, "a")
        pool.on_started(ref)
        pool.on_outcome(done(ref))
        report = await store.report_where(lambda r: r.completed)
        assert not any(r.started for r in store.reports)
        (completion,) = report.completed
        assert completion.started_at_us > 0 and completion.ref.worker_id == pool.pool_id
        writer.cancel()

    asyncio.run(scenario())


def test_a_long_attempt_s_start_goes_as_a_notice_before_its_outcome() -> None:
    async def scenario() -> None:
        store = FakeStore()
        pool, _ = pool_with(store)
        writer = asyncio.create_task(pool.writer.run())
        ref = holding(pool, "a")
        pool.on_started(ref)
        started = await store.report_where(lambda r: r.started)  # the hold-back ended
        assert [s.task_id for s in started.started] == ["a"] and not started.completed
        pool.on_outcome(done(ref))
        await store.report_where(lambda r: r.completed)
        assert sum(len(r.started) for r in store.reports) == 1
        writer.cancel()

    asyncio.run(scenario())


def test_one_slot_notice_per_request_of_outcomes() -> None:
    async def scenario() -> None:
        store = FakeStore()
        pool, pair = pool_with(store)
        writer = asyncio.create_task(pool.writer.run())
        refs = [holding(pool, x) for x in "abcd"]
        store.gate.clear()  # the first request stays in flight
        pool.on_outcome(done(refs[0]))
        await store.report_where(lambda r: r.completed)
        for ref in refs[1:]:
            pool.on_outcome(done(ref))
        assert len(pair.notices) == 1  # the others wait for the request they go with
        store.gate.set()
        await store.report_where(lambda r: len(r.completed) == 3)
        first, second = pair.notices
        assert [c.ref.task_id for c in first.completed] == ["a"]
        assert [c.ref.task_id for c in second.completed] == ["b", "c", "d"]
        assert second.free_slots == 4
        writer.cancel()

    asyncio.run(scenario())


def test_a_reports_message_is_one_report_to_the_store() -> None:
    async def scenario() -> None:
        store = FakeStore()
        pool, pair = pool_with(store)
        writer = asyncio.create_task(pool.writer.run())
        refs = [holding(pool, x) for x in "abc"]
        pool.on_reports(
            wpb.Reports(started=[wpb.Started(ref=r) for r in refs], outcomes=[done(r) for r in refs])
        )
        report = await store.report_where(lambda r: r.completed)
        assert [c.ref.task_id for c in report.completed] == ["a", "b", "c"]
        assert all(c.started_at_us > 0 for c in report.completed) and not report.started
        assert [[c.ref.task_id for c in n.completed] for n in pair.notices] == [["a", "b", "c"]]
        writer.cancel()

    asyncio.run(scenario())
