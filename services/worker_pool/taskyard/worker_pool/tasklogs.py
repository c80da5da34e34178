"""A worker process's buffer of what its running tasks say (the ``context.Sink``).

Task bodies add log lines and context updates from the loop or from executor
threads; the worker's flush (once per loop iteration, see worker.py) takes them
as ``bus.v1.LogBatch`` frames for the manager, before the PoolReport of the same
iteration, so a task's lines always travel ahead of its completion.

Bounded: a line over ``max_line_bytes`` is cut with a marker; at most
``max_lines`` wait here. When full, a sync task's thread waits up to
``block_seconds`` for room (back-pressure), the event loop never waits: the
line is dropped, counted, and reported as one "dropped" marker per attempt.
Context updates are coalesced per key between two flushes (the last wins).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from taskyard.bus.v1 import logs_pb2

TRUNCATED_MARKER = " … [truncated {n} bytes]"
# Lines per pipe frame: a frame stays far below the pipe's size limit.
LINES_PER_FRAME = 2000

AttemptKey = tuple[str, int]


def cut_line(message: str, max_bytes: int) -> str:
    """``message`` shortened to at most ``max_bytes`` UTF-8 bytes plus a marker saying so."""
    data = message.encode("utf-8", "replace")
    if len(data) <= max_bytes:
        return message if "\x00" not in message else message.replace("\x00", "\\u0000")
    kept = data[:max_bytes].decode("utf-8", "ignore")
    out = kept + TRUNCATED_MARKER.format(n=len(data) - len(kept.encode()))
    return out.replace("\x00", "\\u0000")  # PostgreSQL text refuses NUL


def fitting(lines: list[logs_pb2.LogLine], max_lines: int, max_bytes: int) -> int:
    """How many of the first ``lines`` fit in one message (at least one): at most
    ``max_lines`` lines of at most ``max_bytes`` bytes in all."""
    total = 0
    for i, line in enumerate(lines[:max_lines]):
        total += line.ByteSize() + 8  # field tag and length prefix
        if total > max_bytes and i > 0:
            return i
    return min(len(lines), max_lines)


class LogBuffer:
    """Thread-safe; ``wake`` is called (from any thread) when a flush is wanted."""

    def __init__(
        self,
        *,
        max_line_bytes: int = 16 * 1024,
        max_lines: int = 50_000,
        block_seconds: float = 1.0,
        wake: Callable[[], None] | None = None,
        loop_thread: int | None = None,
        frame_bytes: int = 8 * 1024 * 1024,
    ) -> None:
        # The manager refuses a pipe frame over its max_message_bytes (and kills the worker).
        self.frame_bytes = max(1, frame_bytes)
        self.max_line_bytes = max(64, max_line_bytes)
        self.max_lines = max(1, max_lines)
        self.block_seconds = max(0.0, block_seconds)
        self._wake = wake or (lambda: None)
        # The event loop's thread: the one that must never block here.
        self.loop_thread = loop_thread if loop_thread is not None else threading.get_ident()
        self._cond = threading.Condition()
        self._lines: list[logs_pb2.LogLine] = []
        self._context: dict[AttemptKey, dict[tuple[str, ...], Any]] = {}
        self._dropped: dict[AttemptKey, int] = {}
        self._wake_pending = False
        self.dropped_total = 0

    def __len__(self) -> int:
        with self._cond:
            return len(self._lines)

    def set_wake(self, wake: Callable[[], None], loop_thread: int) -> None:
        self._wake = wake
        self.loop_thread = loop_thread

    # ---------------------------------------------------------------- Sink
    def add_log(self, task_id: str, attempt: int, type_: str, message: str, at_us: int) -> None:
        line = logs_pb2.LogLine(
            task_id=task_id,
            attempt=attempt,
            at_us=at_us,
            type=cut_line(type_, 64),
            message=cut_line(message, self.max_line_bytes),
        )
        with self._cond:
            if len(self._lines) >= self.max_lines and threading.get_ident() != self.loop_thread:
                self._ask_flush()
                self._cond.wait_for(lambda: len(self._lines) < self.max_lines, self.block_seconds)
            if len(self._lines) >= self.max_lines:
                key = (task_id, attempt)
                self._dropped[key] = self._dropped.get(key, 0) + 1
                self.dropped_total += 1
            else:
                self._lines.append(line)
            self._ask_flush()

    def set_context(self, task_id: str, attempt: int, path: tuple[str, ...], value: Any) -> None:
        with self._cond:
            updates = self._context.setdefault((task_id, attempt), {})
            # This write replaces whatever was set below ``path`` since the last flush.
            n = len(path)
            for old in [p for p in updates if len(p) >= n and p[:n] == path]:
                del updates[old]
            updates[path] = value
            self._ask_flush()

    def _ask_flush(self) -> None:
        """Under the lock: one wake per flush, however many lines arrive."""
        if not self._wake_pending:
            self._wake_pending = True
            self._wake()

    # --------------------------------------------------------------- flush
    def take(self) -> list[logs_pb2.LogBatch]:
        """Everything waiting, as frames of at most LINES_PER_FRAME lines and about
        ``frame_bytes`` bytes (in order)."""
        with self._cond:
            lines, self._lines = self._lines, []
            context, self._context = self._context, {}
            dropped, self._dropped = self._dropped, {}
            self._wake_pending = False
            self._cond.notify_all()
        if not (lines or context or dropped):
            return []
        batches: list[logs_pb2.LogBatch] = []
        while lines:
            n = fitting(lines, LINES_PER_FRAME, self.frame_bytes)
            batches.append(logs_pb2.LogBatch(lines=lines[:n]))
            lines = lines[n:]
        batches = batches or [logs_pb2.LogBatch()]
        last = batches[-1]
        for (task_id, attempt), updates in context.items():
            patch = [[list(path), value] for path, value in updates.items()]
            last.context.append(
                logs_pb2.ContextUpdate(
                    task_id=task_id, attempt=attempt, patch_json=json.dumps(patch).encode()
                )
            )
        for (task_id, attempt), count in dropped.items():
            last.dropped.append(logs_pb2.DroppedLines(task_id=task_id, attempt=attempt, count=count))
        return batches

    # ------------------------------------------------------------ in a worker
    @classmethod
    def for_worker(cls, settings: Any, loop: Any, on_change: Callable[[], None]) -> LogBuffer:
        """The buffer of a worker process whose flush is ``on_change`` (loop-only)."""
        loop_thread = threading.get_ident()

        def wake() -> None:
            if threading.get_ident() == loop_thread:
                on_change()
            else:
                loop.call_soon_threadsafe(on_change)

        return cls(
            max_line_bytes=settings.log_max_line_bytes,
            max_lines=settings.log_buffer_lines,
            block_seconds=settings.log_block_seconds,
            wake=wake,
            loop_thread=loop_thread,
            frame_bytes=max(1, settings.max_message_bytes // 2),
        )

    def frames(self) -> list[bytes]:
        """Pipe frames (``pipe.LOGS``) of everything waiting, to write before the report."""
        from taskyard.worker_pool import pipe

        return [pipe.pack(pipe.LOGS, b.SerializeToString()) for b in self.take()]
