"""The threads sync task bodies run on (worker_pool.threads): results, blocking
bodies, cancellation before the start, shutdown."""

from __future__ import annotations

import asyncio
import functools
import threading

import pytest

from taskyard.worker_pool.threads import SyncThreads


async def test_results_and_errors_come_back_on_the_loop() -> None:
    pool = SyncThreads(4)
    try:
        ok = pool.submit(lambda: threading.current_thread().name)
        assert (await ok.future).startswith("taskyard-task")
        assert ok.done()

        def boom() -> None:
            raise SystemExit(3)  # a body's SystemExit is its result, not the worker's

        bad = pool.submit(boom)
        with pytest.raises(SystemExit):
            await bad.future
    finally:
        pool.shutdown(cancel=True)


async def test_a_blocked_body_does_not_hold_up_the_next_job() -> None:
    pool = SyncThreads(2)
    release = threading.Event()
    try:
        first = pool.submit(lambda: release.wait(30))
        second = pool.submit(release.set)  # runs only if a second thread takes it
        await second.future
        assert await first.future is True
        assert pool.threads <= 2
    finally:
        release.set()
        pool.shutdown(cancel=True)


async def test_many_short_jobs_stay_within_the_limit() -> None:
    pool = SyncThreads(3)
    try:
        jobs = [pool.submit(functools.partial(int.__mul__, i, 2)) for i in range(500)]
        assert [await j.future for j in jobs] == [i * 2 for i in range(500)]
        assert 1 <= pool.threads <= 3
    finally:
        pool.shutdown(cancel=True)


async def test_a_job_cancelled_before_it_starts_never_runs() -> None:
    pool = SyncThreads(1)
    release = threading.Event()
    ran: list[int] = []
    try:
        busy = pool.submit(lambda: release.wait(30))
        waiting = pool.submit(lambda: ran.append(1))
        ended = waiting.ended()
        assert pool.cancel(waiting)
        assert waiting.done() and waiting.future.cancelled() and ended.done()
        assert not pool.cancel(waiting)
        release.set()
        await busy.future
        after = pool.submit(lambda: ran.append(2))  # the thread took the next job, not the cancelled one
        await after.future
        assert ran == [2]
    finally:
        release.set()
        pool.shutdown(cancel=True)


async def test_ended_waits_for_a_running_body_whatever_became_of_its_future() -> None:
    pool = SyncThreads(1)
    entered, release = threading.Event(), threading.Event()

    def body() -> bool:
        entered.set()
        return release.wait(30)

    try:
        job = pool.submit(body)
        await asyncio.to_thread(entered.wait, 30)
        job.future.cancel()  # the awaiting side gave up (a timeout)
        assert not pool.cancel(job)  # it runs on
        ended = job.ended()
        assert not ended.done() and not job.done()
        release.set()
        await ended
        assert job.done()
    finally:
        release.set()
        pool.shutdown(cancel=True)


async def test_shutdown_cancels_waiting_jobs_and_refuses_new_ones() -> None:
    pool = SyncThreads(1)
    release = threading.Event()
    busy = pool.submit(lambda: release.wait(30))
    waiting = pool.submit(lambda: None)
    pool.shutdown(cancel=True)
    with pytest.raises(RuntimeError):
        pool.submit(lambda: None)
    with pytest.raises(asyncio.CancelledError):
        await waiting.future
    release.set()
    assert await busy.future is True  # a running body is never interrupted


async def test_shutdown_without_cancel_still_runs_what_waits() -> None:
    pool = SyncThreads(1)
    release = threading.Event()
    busy = pool.submit(lambda: release.wait(30))
    waiting = pool.submit(lambda: "ran")
    pool.shutdown()
    release.set()
    await busy.future
    assert await waiting.future == "ran"


async def test_a_body_raising_stopiteration_does_not_strand_the_rest_of_its_batch() -> None:
    pool = SyncThreads(4)
    ran = [threading.Event(), threading.Event()]

    def stops() -> None:
        ran[0].set()
        raise StopIteration

    def returns() -> int:
        ran[1].set()
        return 42

    try:
        bad = pool.submit(stops)
        good = pool.submit(returns)
        for event in ran:  # blocks the loop: both results reach it in one delivery
            assert event.wait(10)
        with pytest.raises(RuntimeError, match="StopIteration"):
            await bad.future
        assert await good.future == 42
    finally:
        pool.shutdown(cancel=True)
