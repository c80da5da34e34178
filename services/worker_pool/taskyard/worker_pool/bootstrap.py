"""A worker process: its start (signals, logging, the bus seal, the task modules,
the manager watch) and its loop, which reads frames from the manager's pipe and
writes the Runner's reports back, batched per loop iteration.

A worker is forked from the pool's template (template.py) or, where the
template is not used, spawned as a fresh interpreter; ``main`` is the same for
both."""
# Length: _serve is the worker's frame loop and the report flush it schedules, which share its state.

from __future__ import annotations

import asyncio
import logging
import os
import select
import signal
import socket
import sys
import threading
import time

from taskyard.bus.v1 import dispatch_pb2
from taskyard.core import bus_tls, lifecycle, retry, seal, tracing
from taskyard.core.config import PoolSettings
from taskyard.worker_pool import beats, children, context, pipe, registry, tasklogs
from taskyard.worker_pool.attempts import worker_id
from taskyard.worker_pool.worker import Runner

log = logging.getLogger(__name__)


# How often the manager watch looks at its parent when it has no pidfd to wait on.
WATCH_PERIOD = 0.5


def _watch_manager(manager_pid: int, ppid: int) -> None:
    """Exit when the manager is gone even if the loop is wedged by a CPU-bound async task.

    A forked worker's parent is the template, not the manager, and the template
    outlives the manager while a worker holds its alive pipe: the manager itself
    is watched (a pidfd is readable once it has exited, zombie or not). The parent
    is watched too: a worker whose template died is an orphan the manager already
    counts as dead."""
    pidfd = _pidfd(manager_pid) if manager_pid != ppid else -1
    while True:
        if pidfd >= 0:
            if select.select([pidfd], [], [], WATCH_PERIOD)[0]:
                os._exit(1)
        else:
            time.sleep(WATCH_PERIOD)
        if os.getppid() != ppid:
            os._exit(1)


def _pidfd(pid: int) -> int:
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        os._exit(1)  # the manager is already gone
    except (AttributeError, OSError):
        return -1  # no pidfd here: the parent watch is what remains


def main(sock: socket.socket, settings: PoolSettings, pool_id: str, index: int, manager_pid: int = 0) -> None:
    """Entry point of a worker process (forked from the template, or spawned).

    ``manager_pid`` is the manager's (0: the parent is the manager)."""
    registry._mark_worker_process()
    # The manager stops workers over the pipe, not by signal: Ctrl-C on the
    # terminal or a SIGTERM to the process group must not bypass the drain.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    lifecycle.setup_logging(f"worker-pool.w{index}", settings.log_level)
    # The manager's seal does not carry over (the template never had one), its settings do (without
    # keys in them, the inherited environment's keys apply, as in the manager).
    if settings.bus_keys or settings.bus_keys_file:
        seal.install(seal.for_settings(settings, role="worker-pool"))
    # The files were read and checked by the manager; the template read none.
    bus_tls.install(bus_tls.BusTls.from_settings(settings))
    ppid = os.getppid()
    threading.Thread(
        target=_watch_manager, args=(manager_pid or ppid, ppid), name="manager-watch", daemon=True
    ).start()
    # Attempts' spans are exported from here (OTEL_* is inherited), under the pool's name.
    tracing.configure("worker-pool")
    try:
        registry.load_modules(settings.task_modules)
    except Exception:
        log.exception("worker %d could not import the task modules %s", index, settings.task_modules)
        sys.stderr.flush()
        os._exit(2)
    code = 0
    try:
        lifecycle.run(_serve(sock, settings, worker_id(pool_id, index, os.getpid())))
    except Exception:
        log.exception("worker %d failed", index)
        code = 1
    # Spans still queued go out now: os._exit skips every exit hook.
    tracing.shutdown(timeout_ms=2_000)
    sys.stderr.flush()
    # Never wait for abandoned task threads (timed-out sync tasks).
    os._exit(code)


async def _serve(sock: socket.socket, settings: PoolSettings, worker: str) -> None:
    reader, writer = await asyncio.open_connection(sock=sock, limit=2**20)
    loop = asyncio.get_running_loop()
    scheduled = False

    def flush() -> None:
        nonlocal scheduled
        scheduled = False
        log_frames = logbuf.frames()  # a task's lines go ahead of its completion
        if log_frames and not writer.is_closing():
            writer.writelines(log_frames)
        report = runner.take_report()
        if report is not None and not writer.is_closing():
            writer.write(pipe.pack(pipe.REPORT, report.SerializeToString()))
        runner.notify_flushed()

    def on_change() -> None:
        nonlocal scheduled
        if not scheduled:
            scheduled = True
            loop.call_soon(flush)

    logbuf = tasklogs.LogBuffer.for_worker(settings, loop, on_change)
    sink: context.Sink = logbuf
    runner = Runner(
        concurrency=settings.concurrency,
        default_timeout=settings.task_timeout,
        default_max_retries=settings.max_retries,
        max_result_bytes=settings.max_result_bytes,
        worker=worker,
        on_change=on_change,
        timeout_grace=settings.timeout_grace,
        cancel_grace=settings.cancel_grace,
        on_recycle=lambda reason: writer.write(pipe.pack(pipe.RECYCLE, reason.encode())),
        sink=sink,
    )
    runner.retry_policy = retry.RetryPolicy.from_settings(settings)
    children.install(settings, loop)  # ctx.submit / ctx.asubmit
    writer.write(pipe.pack(pipe.HELLO))
    beating = loop.create_task(beats.beat_loop(writer, runner.tasks, settings.worker_heartbeat_interval))
    try:
        while True:
            frame = await pipe.read(reader, settings.max_message_bytes + 1024)
            if frame is None:
                log.info("manager pipe closed: exiting")
                return  # nobody to report to; main() exits at once
            kind, body = frame
            if kind == pipe.DISPATCH:
                batch = dispatch_pb2.Dispatch()
                batch.ParseFromString(body)
                for record in batch.tasks:
                    runner.submit(record)
            elif kind == pipe.CANCEL:
                for key in beats.parse_cancel(body):
                    runner.cancel(key)
            elif kind == pipe.STOP:
                beating.cancel()
                await runner.stop(grace=max(0.5, settings.shutdown_timeout / 2))
                flush()
                await writer.drain()
                writer.close()
                return
            else:
                log.warning("unknown frame %r from the manager", kind)
    finally:
        beating.cancel()
        runner.close()
