"""The manager's watchdog rules with an injected clock (``watch_once(now=...)``):
which silence kills a worker, memory recycling, the cancel deadline."""

from __future__ import annotations

import json
import time
from typing import Any

from taskyard.bus.v1 import task_record_pb2
from taskyard.core.config import Settings
from taskyard.worker_pool import pipe
from taskyard.worker_pool.handles import Held, WorkerHandle
from taskyard.worker_pool.manager import Manager
from taskyard.worker_pool.processes import Workers
from taskyard.worker_pool.watchdog import Watchdog


class FakeProcess:
    pid = 4242
    sentinel = -1

    def __init__(self) -> None:
        self.killed = 0

    def is_alive(self) -> bool:
        return not self.killed

    def kill(self) -> None:
        self.killed += 1


class FakeWriter:
    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.frames.append(data)


def make(**settings: Any) -> tuple[Watchdog, Workers, WorkerHandle]:
    base = {
        "worker_idle_silence": 60.0,
        "worker_start_silence": 120.0,
        "worker_busy_silence_factor": 2.0,
        "cancel_deadline": 10.0,
        "worker_max_memory_mib": 100,
    }
    m = Manager(Settings(**{**base, **settings}), pool_id="pool-w")
    w = WorkerHandle(0, FakeProcess(), None, FakeWriter(), spawned_at=0.0)  # type: ignore[arg-type]
    w.ready = True
    m.workers.handles[0] = w
    return m.watchdog, m.workers, w


def hold(w: WorkerHandle, task_id: str, *, timeout: float, since: float) -> Held:
    h = Held(task_record_pb2.AttemptRef(task_id=task_id, attempt=1), timeout=timeout, since=since)
    w.held[(task_id, 1)] = h
    return h


def killed(w: WorkerHandle) -> int:
    return w.process.killed  # type: ignore[attr-defined]


def test_never_beaten_worker_is_killed_after_the_start_silence() -> None:
    dog, _, w = make()
    dog.watch_once(now=119.0)
    assert not killed(w)
    dog.watch_once(now=121.0)
    assert killed(w) == 1 and "never beat" in w.killed_for
    dog.watch_once(now=200.0)  # once is enough: the death path takes over
    assert killed(w) == 1


def test_idle_silence() -> None:
    dog, _, w = make()
    w.last_beat = 10.0
    dog.watch_once(now=69.0)
    assert not killed(w)
    dog.watch_once(now=71.0)
    assert killed(w) and "idle and silent" in w.killed_for


def test_busy_silence_is_twice_the_longest_timeout_from_the_dispatch() -> None:
    dog, _, w = make()
    w.last_beat = 0.0
    hold(w, "a", timeout=1.0, since=5.0)
    hold(w, "b", timeout=3.0, since=6.0)
    dog.watch_once(now=10.9)  # 5.9 s since it became busy: under 2 x 3 s
    assert not killed(w)
    dog.watch_once(now=11.1)
    assert killed(w) and "busy and silent" in w.killed_for


def test_a_beating_busy_worker_is_never_killed() -> None:
    dog, _, w = make()
    hold(w, "a", timeout=1.0, since=0.0)
    for t in range(1, 100):
        w.last_beat = float(t) - 0.5
        dog.watch_once(now=float(t))
    assert not killed(w)


def test_memory_limit_recycles_after_the_held_work() -> None:
    dog, workers, w = make()
    hold(w, "a", timeout=10.0, since=0.0)
    workers.on_beat(w, json.dumps({"rss_bytes": 150 * 1024 * 1024, "running": 1}).encode())
    assert w.recycling.startswith("resident memory 150 MiB") and not w.live
    assert workers.free_slots() == 0
    assert w.writer.frames == []  # type: ignore[attr-defined]
    w.held.clear()  # the attempt ended
    dog.watch_once(now=1.0)
    assert w.writer.frames == [pipe.pack(pipe.STOP)]  # type: ignore[attr-defined]
    assert not killed(w)


def test_cancel_deadline_kills_and_marks_the_attempt() -> None:
    dog, _, w = make()
    w.last_beat = 0.0
    h = hold(w, "a", timeout=300.0, since=0.0)
    other = hold(w, "b", timeout=300.0, since=0.0)
    t0 = time.monotonic()
    assert dog.cancel_attempts(["a", "zzz"]) == 1
    assert h.cancel_deadline >= t0 + 10.0 and not other.cancel_deadline
    assert w.writer.frames  # type: ignore[attr-defined]
    w.last_beat = h.cancel_deadline + 1.0
    dog.watch_once(now=h.cancel_deadline - 0.1)
    assert not killed(w)
    dog.watch_once(now=h.cancel_deadline + 0.1)
    assert killed(w) and h.cancel_kill and not other.cancel_kill
