"""The launcher's two ways of starting a worker process (real processes): forked from
the template where pidfds work, spawned as a fresh interpreter elsewhere. Either way
the worker says hello over its pipe, stops on STOP, and is killed and reaped."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing.connection
import os
import signal
import socket
from collections.abc import AsyncIterator

import psutil
import pytest

from taskyard.core.config import Settings
from taskyard.worker_pool import launcher, pipe

pytestmark = pytest.mark.timeout(60)

METHODS = [
    pytest.param(
        launcher.FORKSERVER,
        marks=pytest.mark.skipif(launcher.start_method() != launcher.FORKSERVER, reason="no pidfds"),
    ),
    launcher.SPAWN,
]


class Worker:
    def __init__(
        self,
        ln: launcher.Launcher,
        started: launcher.Started,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self.launcher, self.started, self.reader, self.writer = ln, started, reader, writer

    @property
    def process(self) -> psutil.Process:
        assert self.started.process.pid is not None
        return psutil.Process(self.started.process.pid)

    async def hello(self) -> None:
        while True:
            frame = await pipe.read(self.reader)
            assert frame is not None, "the pipe closed before the worker said hello"
            if frame[0] == pipe.HELLO:
                return

    async def closed(self) -> None:
        """Until the worker closes its end of the pipe (beats may come first)."""
        while await pipe.read(self.reader) is not None:
            pass

    async def reap(self) -> int | None:
        await self.launcher.reap(self.started.process, self.started.pidfd)
        return self.started.process.exitcode


@contextlib.asynccontextmanager
async def worker(method: str) -> AsyncIterator[Worker]:
    ln = launcher.Launcher(method)
    parent, child = socket.socketpair()
    try:
        settings = Settings(task_modules=("taskyard.examples",), log_level="INFO")
        started = await ln.start(child, settings, "pool-launch", 0)
    finally:
        child.close()
    reader, writer = await asyncio.open_connection(sock=parent)
    try:
        yield Worker(ln, started, reader, writer)
    finally:
        writer.close()
        if started.process.is_alive():
            started.process.kill()
            started.process.join(5)
        ln.close()


def _ignores(pid: int, signum: int) -> bool:
    with open(f"/proc/{pid}/status") as status:
        mask = next(int(line.split()[1], 16) for line in status if line.startswith("SigIgn:"))
    return bool(mask & (1 << (signum - 1)))


@pytest.mark.parametrize("method", METHODS)
async def test_a_worker_stops_on_stop(method: str) -> None:
    async with worker(method) as w:
        await w.hello()
        if method == launcher.FORKSERVER:
            assert w.process.ppid() != os.getpid(), "a forked worker's parent is the template"
            assert w.started.pidfd >= 0
            # The template prepared itself (template.prepare_template): a SIGTERM to the
            # process group does not end it.
            assert _ignores(w.process.ppid(), signal.SIGTERM)
        else:
            assert w.process.ppid() == os.getpid() and w.started.pidfd == -1
        w.writer.write(pipe.pack(pipe.STOP))
        await w.closed()  # it closes its end once stopped
        assert await w.reap() == 0


@pytest.mark.parametrize("method", METHODS)
async def test_a_worker_is_killed_and_reaped(method: str) -> None:
    async with worker(method) as w:
        await w.hello()
        launcher.kill(w.started.process, w.started.pidfd)
        await w.closed()
        assert await w.reap() == -signal.SIGKILL


@pytest.mark.skipif(launcher.start_method() != launcher.FORKSERVER, reason="no pidfds")
async def test_an_ended_forked_worker_without_a_pidfd_is_not_signalled_by_pid(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker forked from the template is reaped by the template as it ends: its
    pid is free from then on, and may be another process's. Without a pidfd, the
    manager kills by pid only while the worker's sentinel says it runs. (A spawned
    worker is the manager's own child: its pid stays its own until joined.)"""
    async with worker(launcher.FORKSERVER) as w:
        await w.hello()
        w.writer.write(pipe.pack(pipe.STOP))
        await w.closed()
        # Ended (its sentinel says so), not yet joined here: the template reaped it.
        assert multiprocessing.connection.wait([w.started.process.sentinel], timeout=30)
        signalled: list[int] = []
        monkeypatch.setattr(os, "kill", lambda pid, sig: signalled.append(pid))
        launcher.kill(w.started.process, -1)
        assert signalled == []
