"""The worker's reports: task-controlled text the store would refuse
(NUL, lone surrogates), poison report entries, Cancelled without a request, a cancel
requested before a shutdown (unit level; the end-to-end NUL case is in
tests/acceptance/test_poison_reports.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from support.fake_scheduler import make_record

from taskyard.bus.v1 import dispatch_pb2, leases_pb2, task_record_pb2
from taskyard.core import contract, errors
from taskyard.core.retry import RetryPolicy
from taskyard.v1 import task_pb2
from taskyard.worker_pool import poison, registry, task
from taskyard.worker_pool.attempts import Cancelled, failure_of
from taskyard.worker_pool.reports import ReportForwarder
from taskyard.worker_pool.worker import Runner

registry.load_modules(["taskyard.examples"])


@pytest.fixture
def bad_tasks() -> Iterator[None]:
    @task(name="unit.nul_failure")
    def nul_failure() -> None:
        raise ValueError("a\x00b")

    @task(name="unit.surrogate_failure")
    def surrogate_failure() -> None:
        raise ValueError("bad \udc80 name")

    @task(name="unit.unasked_cancel")
    async def unasked_cancel() -> None:
        raise Cancelled("stopping on my own")

    yield
    for name in ("nul_failure", "surrogate_failure", "unasked_cancel"):
        registry.unregister(f"unit.{name}")


async def execute(name: str) -> leases_pb2.Completion:
    runner = Runner(concurrency=1, default_timeout=30, worker="w")
    try:
        return await runner.execute(make_record(name))
    finally:
        runner.close()


async def test_a_nul_in_a_failure_is_escaped(bad_tasks: None) -> None:
    c = await execute("unit.nul_failure")
    assert not c.success and c.failure.type == "ValueError"
    assert c.failure.message == "a\\u0000b"
    assert "\x00" not in c.failure.traceback and "a\\u0000b" in c.failure.traceback


async def test_a_lone_surrogate_in_a_failure_does_not_lose_it(bad_tasks: None) -> None:
    c = await execute("unit.surrogate_failure")
    assert not c.success and c.failure.message == "bad \\udc80 name"
    c.SerializeToString()  # a protobuf string of valid UTF-8


def test_failure_of_escapes_the_type_name_and_survives_a_broken_str() -> None:
    class Odd(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    f = failure_of(Odd(), 1, type_name="T\x00")
    assert f.type == "T\\u0000" and f.message.startswith("<unprintable Odd")


async def test_cancelled_without_a_request_is_not_retried(bad_tasks: None) -> None:
    c = await execute("unit.unasked_cancel")
    assert not c.success and not c.retryable and c.failure.type == "Cancelled"


async def test_a_cancel_requested_before_a_shutdown_is_reported_as_cancelled() -> None:
    runner = Runner(concurrency=2, default_timeout=30, worker="w", cancel_grace=30)
    cancelled, other = make_record("sleep", 30), make_record("sleep", 30)
    runner.submit(cancelled)
    runner.submit(other)
    for _ in range(3):
        await asyncio.sleep(0)
    runner.cancel((cancelled.id, cancelled.attempt))  # flag set; asyncio step not yet due
    await runner.stop(grace=2)
    report = runner.take_report()
    assert report is not None
    assert [r.ref.task_id for r in report.released] == [other.id]
    (c,) = report.completed
    assert c.ref.task_id == cancelled.id and c.cancel_step == task_pb2.CANCEL_STEP_ASYNCIO
    runner.close()


# ------------------------------------------------------------ the forwarder


def ref(task_id: str) -> task_record_pb2.AttemptRef:
    return task_record_pb2.AttemptRef(task_id=task_id, attempt=1, lease_token="t")


class FakeStore:
    """Refuses (INVALID_ARGUMENT) any request holding an entry for task "bad";
    fails the first ``transient`` requests with UNAVAILABLE."""

    def __init__(self, transient: int = 0) -> None:
        self.transient = transient
        self.sent: list[leases_pb2.ReportRequest] = []
        self.stored: list[str] = []

    async def call(self, method: contract.Method[Any, Any], req: Any, **_: Any) -> leases_pb2.ReportReply:
        copy = leases_pb2.ReportRequest()
        copy.CopyFrom(req)
        self.sent.append(copy)
        if self.transient:
            self.transient -= 1
            raise errors.unavailable("store restarting")
        ids = [r.task_id for r in req.started] + [c.ref.task_id for c in req.completed]
        ids += [r.ref.task_id for r in req.released] + [d.ref.task_id for d in req.died]
        if "bad" in ids:
            raise errors.invalid([], "rejected by the database: invalid byte sequence")
        self.stored += ids
        return leases_pb2.ReportReply()


def report(**kw: Any) -> dispatch_pb2.PoolReport:
    return dispatch_pb2.PoolReport(**kw)


async def test_a_refused_entry_is_dropped_and_the_others_stored() -> None:
    store = FakeStore()
    fwd = ReportForwarder(store, RetryPolicy())  # type: ignore[arg-type]
    fwd.submit(
        report(
            started=[ref("a"), ref("bad")],
            completed=[leases_pb2.Completion(ref=ref("a"), success=True, result_json=b"1")],
            died=[leases_pb2.Death(ref=ref("c"))],
        )
    )
    fwd.submit(report(completed=[leases_pb2.Completion(ref=ref("bad"), success=True)]))
    await asyncio.wait_for(fwd.idle.wait(), 5)
    # Starts first, then completions, then deaths: the store's own order.
    assert store.stored == ["a", "a", "c"]
    assert fwd.dropped == 2
    # Later reports flow normally again, in one request.
    before = len(store.sent)
    fwd.submit(report(completed=[leases_pb2.Completion(ref=ref("d"), success=True)]))
    await asyncio.wait_for(fwd.idle.wait(), 5)
    assert store.stored[-1] == "d" and len(store.sent) == before + 1


async def test_transient_errors_are_still_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("taskyard.worker_pool.reports.RETRY_PAUSE", (0.01, 0.01))
    store = FakeStore(transient=2)
    fwd = ReportForwarder(store, RetryPolicy())  # type: ignore[arg-type]
    fwd.submit(report(completed=[leases_pb2.Completion(ref=ref("a"), success=True)]))
    await asyncio.wait_for(fwd.idle.wait(), 5)
    assert store.stored == ["a"] and fwd.dropped == 0 and len(store.sent) == 3


async def test_reports_merged_while_the_store_was_away_go_in_parts_under_the_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The store's port refuses a message past half of max_message_bytes: what
    piled up during an outage must not be sent as one request it refuses for ever."""
    monkeypatch.setattr("taskyard.worker_pool.reports.RETRY_PAUSE", (0.01, 0.01))
    store = FakeStore(transient=1)
    cap = 10_000
    fwd = ReportForwarder(store, RetryPolicy(), batch_bytes=cap)  # type: ignore[arg-type]
    names = [f"t{i}" for i in range(40)]
    for name in names:
        fwd.submit(report(started=[ref(name)]))
        fwd.submit(
            report(completed=[leases_pb2.Completion(ref=ref(name), success=True, result_json=b"x" * 1000)])
        )
    await asyncio.wait_for(fwd.idle.wait(), 5)
    assert all(req.ByteSize() <= cap for req in store.sent[1:]), [r.ByteSize() for r in store.sent]
    assert len(store.sent) > 2
    # Every entry once, every start before its completion.
    assert sorted(store.stored) == sorted(names * 2)
    for name in names:
        first = store.stored.index(name)
        assert store.stored.index(name, first + 1) > first


def test_poison_codes() -> None:
    assert poison.is_poison(errors.invalid([], "x"))
    assert poison.is_poison(errors.internal("x"))
    assert not poison.is_poison(errors.unavailable("x"))
    assert not poison.is_poison(errors.TaskyardError(errors.Code.DEADLINE_EXCEEDED, "T", "x"))
    assert poison.storable("ok") == "ok"


async def test_an_ended_attempt_forgets_its_child_counter(monkeypatch: pytest.MonkeyPatch) -> None:
    from taskyard.core.config import Settings
    from taskyard.worker_pool import children

    kids = children.Children(Settings(), asyncio.get_running_loop())
    monkeypatch.setattr(children, "_installed", kids)
    record = make_record("add", 1, 2)
    key = (record.id, record.attempt)
    kids._seq[key] = iter(range(3))  # type: ignore[assignment]  # as a child submit leaves it
    runner = Runner(concurrency=1, default_timeout=30, worker="w")
    runner.submit(record)
    await asyncio.wait_for(asyncio.gather(*runner.tasks.values()), 5)
    assert key not in kids._seq
    runner.close()
