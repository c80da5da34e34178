"""A generator process: takes steps (Jobs) on a pipe, runs each against its own client
and channels, and sends back what it measured (an Outcome).

Open steps send at times fixed before the step began; a task's latency runs from its
scheduled send, so a generator that stalls shows as latency (no coordinated omission),
and how late each send went out is reported apart."""

from __future__ import annotations

import asyncio
import math
import queue
import time
from multiprocessing.connection import Connection

from _compare.child import die_with_runner

from .clients import SyncClient, TaskyardAio, sync_client
from .plan import Job, Kind, Outcome, Target, arrivals

# (scheduled send, end, ok, why) of each task that ended; appended from gRPC's or the
# Redis reader's threads (list.append is atomic) and read once the step has drained.
Record = tuple[float, float, bool, str]


def serve(conn: Connection, target: Target, prefix: str) -> None:
    """The process's body: ready, then one Outcome per Job until None."""
    die_with_runner()
    if target.client == "aio":
        asyncio.run(_serve_aio(conn, target))
        return
    client = sync_client(target, prefix)
    conn.send("ready")
    try:
        while (job := conn.recv()) is not None:
            conn.send(_run_sync(client, job))
    finally:
        client.close()


def _sleep_until(t: float) -> None:
    delay = t - time.monotonic()
    if delay > 0:
        time.sleep(delay)


def _run_sync(client: SyncClient, job: Job) -> Outcome:
    cpu0 = time.process_time()
    records: list[Record] = []
    freed: queue.SimpleQueue[None] = queue.SimpleQueue()
    lags: list[float] = []
    counted_from = job.start_at + job.warmup

    def launch(scheduled: float) -> None:
        def done(ok: bool, why: str) -> None:
            records.append((scheduled, time.monotonic(), ok, why))
            if job.kind is Kind.CLOSED:
                freed.put(None)

        client.send(done)

    sent = 0
    bounded = False
    if job.kind is Kind.OPEN:
        for t in arrivals(job):
            _sleep_until(t)
            now = time.monotonic()
            launch(t)
            sent += 1
            if t >= counted_from:
                lags.append((now - t) * 1000)
    else:
        _sleep_until(job.start_at)
        stop_at = job.start_at + job.duration
        for _ in range(min(job.inflight, job.max_tasks)):
            launch(time.monotonic())
            sent += 1
        # A process given no task in flight (fewer in flight than processes) sends none.
        while job.inflight and sent < job.max_tasks:
            # Every call has a deadline, so one ends (or fails) within it.
            freed.get(timeout=job.drain + 60)
            now = time.monotonic()
            if now >= stop_at:
                break
            launch(now)
            sent += 1
        else:
            bounded = True
    deadline = time.monotonic() + job.drain
    while len(records) < sent and time.monotonic() < deadline:
        time.sleep(0.01)
    return _outcome(job, list(records), sent, lags, time.process_time() - cpu0, bounded)


def _outcome(
    job: Job, records: list[Record], sent: int, lags: list[float], cpu: float, bounded: bool
) -> Outcome:
    """``bounded``: a closed loop's bound on tasks came before the step's end; it then
    counts up to the last task's end (from the step's start when that is within the
    warm-up)."""
    counted_from = job.start_at + job.warmup
    if job.kind is Kind.OPEN:
        window = [r for r in records if r[0] >= counted_from]
        counted = len(lags)  # one lag per counted send
        seconds = job.duration - job.warmup
    else:
        stopped = job.start_at + job.duration
        if bounded and records:
            stopped = math.nextafter(max(r[1] for r in records), math.inf)
        if stopped <= counted_from:
            counted_from = job.start_at
        window = [r for r in records if counted_from <= r[1] < stopped]
        counted = len(window)
        seconds = stopped - counted_from
    errors = [r for r in records if not r[2]]
    return Outcome(
        sent=sent,
        counted=counted,
        latencies_ms=tuple((end - scheduled) * 1000 for scheduled, end, ok, _ in window if ok),
        errors=len(errors),
        unfinished=sent - len(records),
        window=seconds,
        lags_ms=tuple(lags),
        cpu_seconds=cpu,
        first_error=errors[0][3] if errors else "",
    )


async def _serve_aio(conn: Connection, target: Target) -> None:
    client = TaskyardAio(target)
    conn.send("ready")
    loop = asyncio.get_running_loop()
    try:
        while True:
            # The pipe is read on a thread of its own, so the loop is free between steps.
            job = await loop.run_in_executor(None, conn.recv)
            if job is None:
                return
            conn.send(await _run_aio(client, job))
    finally:
        await client.close()


async def _run_aio(client: TaskyardAio, job: Job) -> Outcome:
    cpu0 = time.process_time()
    records: list[Record] = []
    lags: list[float] = []
    counted_from = job.start_at + job.warmup
    running: set[asyncio.Task[None]] = set()

    async def one(scheduled: float) -> None:
        ok, why = await client.one()
        records.append((scheduled, time.monotonic(), ok, why))

    async def sleep_until(t: float) -> None:
        delay = t - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)

    sent = 0
    bounded = False
    if job.kind is Kind.OPEN:
        for t in arrivals(job):
            await sleep_until(t)
            now = time.monotonic()
            task = asyncio.create_task(one(t))
            running.add(task)
            task.add_done_callback(running.discard)
            sent += 1
            if t >= counted_from:
                lags.append((now - t) * 1000)
        if running:
            await asyncio.wait(running, timeout=job.drain)
    else:
        await sleep_until(job.start_at)
        stop_at = job.start_at + job.duration

        async def loop() -> None:
            nonlocal sent, bounded
            while time.monotonic() < stop_at:
                if sent == job.max_tasks:
                    bounded = True
                    return
                sent += 1
                await one(time.monotonic())

        await asyncio.wait_for(
            asyncio.gather(*(loop() for _ in range(job.inflight))), timeout=job.duration + job.drain
        )
    return _outcome(job, list(records), sent, lags, time.process_time() - cpu0, bounded)
