"""The running attempt as seen by a task body: identity, logs, progress, context, cancel flag.

A task gets its context with ``taskyard.worker_pool.current_task()`` (a contextvar
the runner sets around the body; sync tasks see it in their thread because the
runner copies the context into it) or by declaring a parameter annotated
``TaskContext`` (``def f(x, ctx: TaskContext)``), which the runner fills in.

Everything a task says goes to a ``Sink`` (the worker process's log buffer, see
``tasklogs``), which batches it to the manager and on to the result-store. The
sink is thread-safe and never blocks the event loop: sync tasks in threads may
wait a little for room, async ones never do (lines over the bound are counted
and reported as dropped).
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    # At run time this module needs only the standard library; children.py (the
    # lanes' transport) is imported when a body submits a child.
    from taskyard.worker_pool import children

__all__ = [
    "NotInTaskError",
    "Sink",
    "TaskContext",
    "context_param",
    "current",
    "split_key",
]


class NotInTaskError(RuntimeError):
    """``current()`` was called outside a task body."""


class Sink(Protocol):
    """Where a context sends what its task says (thread-safe)."""

    def add_log(self, task_id: str, attempt: int, type_: str, message: str, at_us: int) -> None: ...

    def set_context(self, task_id: str, attempt: int, path: tuple[str, ...], value: Any) -> None: ...


class _NullSink:
    """For contexts built outside a worker (tests, direct calls): keeps nothing."""

    def add_log(self, task_id: str, attempt: int, type_: str, message: str, at_us: int) -> None:
        pass

    def set_context(self, task_id: str, attempt: int, path: tuple[str, ...], value: Any) -> None:
        pass


_current: contextvars.ContextVar[TaskContext] = contextvars.ContextVar("taskyard_task_context")


def split_key(key: str) -> tuple[str, ...]:
    """``"a.b.c"`` -> ``("a", "b", "c")``; empty parts are refused (a typo, not a key)."""
    if not isinstance(key, str) or not key:
        raise ValueError("a context key is a non-empty string")
    parts = tuple(key.split("."))
    if any(not p for p in parts):
        raise ValueError(f"context key {key!r} has an empty part")
    return parts


def _now_us() -> int:
    return time.time_ns() // 1000


class _TaskLogAdapter(logging.LoggerAdapter):  # type: ignore[type-arg]
    """A logger whose records become the task's log lines (type = level name lowercased).

    Every level is recorded (the task's log is the task's own; the worker's
    logging configuration does not filter it).
    """

    def __init__(self, logger: logging.Logger, ctx: TaskContext) -> None:
        super().__init__(logger, {})
        self._ctx = ctx

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        if not isinstance(level, int):
            raise TypeError("level must be an integer")
        if self.isEnabledFor(level):
            text = _format(msg, args)
            exc = kwargs.get("exc_info")
            if exc:
                formatted = logging.Formatter().formatException(
                    exc if isinstance(exc, tuple) else _exc_info(exc)
                )
                text = f"{text}\n{formatted}"
            self._ctx.log(text, type=logging.getLevelName(level).lower())

    def isEnabledFor(self, level: int) -> bool:
        return True

    # LoggerAdapter.debug/info/... call self.log; exception() passes exc_info=True.


def _format(msg: object, args: tuple[Any, ...]) -> str:
    """``msg % args`` as logging.LogRecord.getMessage does it (one mapping argument
    is the mapping); a bad format never raises into the task body: the raw message
    and its arguments are logged instead, as logging does (less the traceback)."""
    text = str(msg)
    if not args:
        return text
    if len(args) == 1 and isinstance(args[0], Mapping) and args[0]:
        args = args[0]  # type: ignore[assignment]  # log.info("%(x)s", {"x": 1})
    try:
        return text % args
    except Exception as exc:
        return f"{text} {args!r} (log formatting failed: {type(exc).__name__}: {exc})"


def _exc_info(exc: object) -> Any:
    if isinstance(exc, BaseException):
        return (type(exc), exc, exc.__traceback__)
    return sys.exc_info()


class TaskContext:
    """One attempt of one task, as its body sees it."""

    def __init__(
        self,
        *,
        task_id: str,
        name: str,
        attempt: int,
        root_id: str = "",
        parent_id: str = "",
        context: Mapping[str, Any] | None = None,
        sink: Sink | None = None,
        cancelled: bool = False,
        charged_attempt: int = 0,
    ) -> None:
        self.task_id = task_id
        self.name = name
        self.attempt = attempt
        # The attempt as the retry budget counts it (re-runs that spent no retry
        # share it): what keys a child's request id, so a re-run makes no twins.
        self.charged_attempt = charged_attempt or attempt
        # A task that is its own root has root_id == task_id.
        self.root_id = root_id or task_id
        self.parent_id = parent_id
        self._sink: Sink = sink if sink is not None else _NullSink()
        self._lock = threading.Lock()
        # A deep copy through JSON (only when there is something to copy: every
        # attempt builds one of these).
        self._context: dict[str, Any] = json.loads(json.dumps(dict(context))) if context else {}
        # The flag, and an Event made only for a body that waits on it: most never do.
        self._cancelled = bool(cancelled)
        self._cancel_event: threading.Event | None = None
        self._cancel_callbacks: list[Callable[[], None]] = []
        self._logger: _TaskLogAdapter | None = None

    def __repr__(self) -> str:
        return f"TaskContext({self.name!r}, id={self.task_id}, attempt={self.attempt})"

    # ------------------------------------------------------------------ logs
    def log(self, message: object, type: str = "info") -> None:
        """Append one line to the task's log (stored in order, offsets 0, 1, 2, ...)."""
        kind = str(type).strip().lower() or "info"
        self._sink.add_log(self.task_id, self.attempt, kind, str(message), _now_us())

    @property
    def logger(self) -> logging.LoggerAdapter:  # type: ignore[type-arg]
        """A ``logging.Logger``-compatible object whose records become log lines."""
        if self._logger is None:
            self._logger = _TaskLogAdapter(logging.getLogger(f"taskyard.task.{self.name}"), self)
        return self._logger

    def progress(self, fraction: float, message: str = "") -> None:
        """Record progress (0.0 .. 1.0) in the context under "progress" and as a log line."""
        value = float(fraction)
        if not 0.0 <= value <= 1.0:
            raise ValueError("progress is a fraction between 0.0 and 1.0")
        entry: dict[str, Any] = {"fraction": value, "message": str(message), "at_us": _now_us()}
        self.set_context("progress", entry)
        self.log(f"{value:.0%} {message}".rstrip(), type="progress")

    # --------------------------------------------------------------- context
    def set_context(self, key: str, value: Any) -> None:
        """Set ``key`` (dotted for nesting: "a.b.c") in the task's persisted context.

        Updates are merged into tasks.context; several writes to a key between two
        flushes cost one (the last wins). The value must be JSON.
        """
        path = split_key(key)
        try:
            text = json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"context value for {key!r} is not JSON: {exc}") from exc
        # Two copies: later nested writes change ours, never what waits to be sent.
        value = json.loads(text)
        with self._lock:
            node: MutableMapping[str, Any] = self._context
            for part in path[:-1]:
                child = node.get(part)
                if not isinstance(child, dict):
                    child = node[part] = {}
                node = child
            node[path[-1]] = value
        self._sink.set_context(self.task_id, self.attempt, path, json.loads(text))

    def get_context(self, key: str | None = None, default: Any = None) -> Any:
        """The context as this attempt knows it (a copy), or one dotted key of it."""
        with self._lock:
            node: Any = self._context
            if key is not None:
                for part in split_key(key):
                    if not isinstance(node, dict) or part not in node:
                        return default
                    node = node[part]
            return json.loads(json.dumps(node))

    # ---------------------------------------------------------------- cancel
    @property
    def cancelled(self) -> bool:
        """True once a cancel of this task was requested (poll it in long loops)."""
        return self._cancelled

    def wait_cancelled(self, timeout: float | None = None) -> bool:
        """Block (a sync task's thread) until cancelled or ``timeout``; returns ``cancelled``."""
        with self._lock:
            if self._cancelled:
                return True
            if self._cancel_event is None:
                self._cancel_event = threading.Event()
            event = self._cancel_event
        return event.wait(timeout)

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (from whichever thread requests the cancel) when cancelled."""
        with self._lock:
            if not self._cancelled:
                self._cancel_callbacks.append(callback)
                return
        callback()

    def _request_cancel(self) -> None:
        """Hook for the worker: a cancel of this task arrived. Thread-safe, idempotent."""
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            event = self._cancel_event
            callbacks, self._cancel_callbacks = self._cancel_callbacks, []
        if event is not None:
            event.set()
        for cb in callbacks:
            try:
                cb()
            except Exception:
                logging.getLogger(__name__).exception("cancel callback of %s failed", self)

    # ------------------------------------------------------------------ children
    # Implemented in children.py: straight to the scheduler's lane, parent_id set,
    # root_id from the parent's root (the store). Options as TaskSpec fields:
    # priority, queue, depends_on, request_id, idempotency_key, labels, max_retries.
    def submit(self, name: str, *args: Any, options: Mapping[str, Any] | None = None, **kwargs: Any) -> str:
        """Submit a child task (from a sync body) and return its id."""
        from . import children

        return children.installed().submit(self._child(name, args, kwargs, options))

    async def asubmit(
        self, name: str, *args: Any, options: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> str:
        """Submit a child task (from an async body) and return its id."""
        from . import children

        return await children.installed().asubmit(self._child(name, args, kwargs, options))

    def _child(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], options: Mapping[str, Any] | None
    ) -> children.Child:
        from taskyard.core import telemetry

        from . import children

        parent = children.Parent(task_id=self.task_id, attempt=self.attempt, charged=self.charged_attempt)
        return children.Child(
            parent=parent,
            name=name,
            args=args,
            kwargs=kwargs,
            options=options or {},
            trace=telemetry.inject(),
        )

    # ------------------------------------------------------------- contextvar
    def _enter(self) -> contextvars.Token[TaskContext]:
        return _current.set(self)

    @staticmethod
    def _exit(token: contextvars.Token[TaskContext]) -> None:
        _current.reset(token)


def current() -> TaskContext:
    """The context of the attempt running in this task body (or its thread)."""
    ctx = _current.get(None)
    if ctx is None:
        raise NotInTaskError(
            "no task is running here: current_task() works only inside a task body run by a worker"
        )
    return ctx


def current_or_none() -> TaskContext | None:
    return _current.get(None)


_PARAM_CACHE: dict[Callable[..., Any], str | None] = {}


def context_param(fn: Callable[..., Any]) -> str | None:
    """The name of ``fn``'s parameter annotated ``TaskContext`` (the runner fills it), if any."""
    try:
        return _PARAM_CACHE[fn]
    except (KeyError, TypeError):
        pass
    found: str | None = None
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        params = []  # type: ignore[assignment]
    for p in params:
        ann = p.annotation
        named = ann is TaskContext or (isinstance(ann, str) and ann.rsplit(".", 1)[-1] == "TaskContext")
        if named and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            found = p.name
            break
    with contextlib.suppress(TypeError):  # unhashable callables are not cached
        _PARAM_CACHE[fn] = found
    return found


def for_record(record: Any, sink: Sink | None = None) -> TaskContext:
    """The context of a dispatched attempt (a bus ``TaskRecord``)."""
    initial: Mapping[str, Any] = {}
    if record.context_json:
        try:
            loaded = json.loads(record.context_json)
        except ValueError:
            loaded = None
        if isinstance(loaded, dict):
            initial = loaded
    return TaskContext(
        task_id=record.id,
        name=record.name,
        attempt=record.attempt,
        root_id=record.root_id,
        parent_id=record.parent_id,
        context=initial,
        sink=sink,
        cancelled=record.cancel_requested,
        charged_attempt=max(1, record.attempt - record.uncharged_attempts),
    )
