"""A worker stream's StoreWriter: a report is tried until the store answers (the
store has custody of results), log lines a few times, then dropped and counted;
the pauses between tries are jittered and capped (core.retry.Backoff)."""

from __future__ import annotations

import asyncio
from typing import Any

from taskyard.bus.v1 import leases_pb2
from taskyard.core import contract, errors
from taskyard.gateway.outcomes import LOG_TRIES, StoreWriter
from taskyard.worker.v1 import worker_service_pb2 as wpb


class FailingStore:
    """Fails the first ``failures`` calls of each method with UNAVAILABLE, then answers."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls: dict[str, int] = {}

    async def call(self, method: Any, request: Any, **options: Any) -> Any:
        n = self.calls[method.name] = self.calls.get(method.name, 0) + 1
        if n <= self.failures:
            raise errors.unavailable("store away")
        return leases_pb2.ReportReply() if method is contract.STORE_REPORT else None


class Pauses:
    """A sleep that only records how long it was asked to pause."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)


async def writer_for(store: FailingStore, pauses: Pauses) -> tuple[StoreWriter, asyncio.Task[None]]:
    writer = StoreWriter(store, sleep=pauses)
    return writer, asyncio.create_task(writer.run())


async def test_a_report_is_tried_until_the_store_answers() -> None:
    store, pauses = FailingStore(failures=12), Pauses()
    writer, pump = await writer_for(store, pauses)
    try:
        await writer.report_answered(leases_pb2.ReportRequest())
    finally:
        pump.cancel()
    assert store.calls[contract.STORE_REPORT.name] == 13
    assert len(pauses.seconds) == 12
    assert all(0.05 <= s <= 2.0 for s in pauses.seconds)
    assert len(set(pauses.seconds)) > 1  # jittered, not a fixed ladder


async def test_log_lines_are_dropped_after_a_few_tries_with_no_pause_after_the_last() -> None:
    store, pauses = FailingStore(failures=LOG_TRIES), Pauses()
    writer, pump = await writer_for(store, pauses)
    try:
        writer.logs(
            wpb.AttemptRef(task_id="t", attempt=1), [wpb.LogLine(message="a"), wpb.LogLine(message="b")]
        )
        await writer.flushed()
    finally:
        pump.cancel()
    assert store.calls[contract.STORE_LOGS.name] == LOG_TRIES
    assert len(pauses.seconds) == LOG_TRIES - 1
    assert writer.dropped_lines == 2
