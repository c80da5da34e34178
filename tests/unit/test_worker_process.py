"""A spawned worker process driven directly over its socketpair."""

from __future__ import annotations

import asyncio
import multiprocessing
import socket
from collections.abc import AsyncIterator
from typing import Any

import psutil
import pytest
from support.fake_scheduler import make_record

from taskyard.bus.v1 import dispatch_pb2
from taskyard.core.config import Settings
from taskyard.worker_pool import bootstrap, pipe

pytestmark = pytest.mark.timeout(30)


def test_frames_roundtrip() -> None:
    async def go() -> Any:
        a, b = socket.socketpair()
        _ra, wa = await asyncio.open_connection(sock=a)
        rb, wb = await asyncio.open_connection(sock=b)
        wa.write(pipe.pack(pipe.DISPATCH, b"xyz") + pipe.pack(pipe.STOP))
        got = [await pipe.read(rb), await pipe.read(rb)]
        wa.close()
        got.append(await pipe.read(rb))
        wb.close()
        return got

    assert asyncio.run(go()) == [(b"D", b"xyz"), (b"S", b""), None]


class Proc:
    def __init__(self, concurrency: int = 2) -> None:
        self.settings = Settings(
            task_modules=("taskyard.examples",), concurrency=concurrency, task_timeout=30
        )
        parent, child = socket.socketpair()
        self.process = multiprocessing.get_context("spawn").Process(
            target=bootstrap.main, args=(child, self.settings, "pool-t", 0)
        )
        self.process.start()
        child.close()
        self._parent = parent
        self.reader: asyncio.StreamReader
        self.writer: asyncio.StreamWriter

    async def connect(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(sock=self._parent)
        assert await pipe.read(self.reader) == (pipe.HELLO, b"")

    def dispatch(self, *records: Any) -> None:
        self.writer.write(pipe.pack(pipe.DISPATCH, dispatch_pb2.Dispatch(tasks=records).SerializeToString()))

    async def report(self) -> dispatch_pb2.PoolReport | None:
        frame = await asyncio.wait_for(pipe.read(self.reader), 10)
        while frame is not None and frame[0] == pipe.BEAT:  # heartbeats interleave with reports
            frame = await asyncio.wait_for(pipe.read(self.reader), 10)
        if frame is None:
            return None
        assert frame[0] == pipe.REPORT
        r = dispatch_pb2.PoolReport()
        r.ParseFromString(frame[1])
        return r


@pytest.fixture
async def proc() -> AsyncIterator[Proc]:
    p = Proc()
    await p.connect()
    yield p
    p.process.kill()
    p.process.join(5)


async def test_started_then_completed_batched(proc: Proc) -> None:
    recs = [make_record("add", i, i) for i in range(2)]
    proc.dispatch(*recs)
    started: set[str] = set()
    completed: dict[str, bytes] = {}
    while len(completed) < 2:
        r = await proc.report()
        assert r is not None
        for ref in r.started:
            started.add(ref.task_id)
            assert ref.worker_id == f"pool-t/w0:{proc.process.pid}"
        for c in r.completed:
            assert c.ref.task_id in started  # never completed before started was sent
            completed[c.ref.task_id] = c.result_json
    assert completed == {recs[0].id: b"0", recs[1].id: b"2"}


async def test_stop_releases_and_exits(proc: Proc) -> None:
    a, b = make_record("sleep", 30), make_record("busy", 30)
    proc.dispatch(a, b)
    started: set[str] = set()
    while len(started) < 2:
        r = await proc.report()
        assert r is not None
        started.update(ref.task_id for ref in r.started)
    proc.writer.write(pipe.pack(pipe.STOP))
    released = {}
    while (r := await proc.report()) is not None:
        released.update({x.ref.task_id: x.resume_requested for x in r.released})
    assert released == {a.id: True, b.id: True}
    await asyncio.to_thread(proc.process.join, 5)
    assert proc.process.exitcode == 0


async def test_exits_when_the_manager_pipe_closes(proc: Proc) -> None:
    proc.dispatch(make_record("sleep", 30))
    r = await proc.report()
    assert r is not None and r.started
    proc.writer.close()
    _, alive = await asyncio.to_thread(psutil.wait_procs, [psutil.Process(proc.process.pid)], 5)
    assert not alive
