"""Children: a running task submits tasks of its own (``ctx.submit`` / ``ctx.asubmit``).

A child goes the way every submission goes: validated by ``core.codec`` into a
``TaskRecord`` with ``parent_id`` set, then a ``SubmitRequest`` to the
scheduler's lane for its priority (REQ/REP), which inserts it through the
store. The store sets its ``root_id`` from the parent's root. Each child of an
attempt gets a ``request_id`` derived from the attempt and its position, so a
resent request never makes a second child; a retried attempt makes new ones. The
attempt there is the charged one: a re-run that spent no retry (its previous
attempt was never confirmed, or was drained) finds the children it made before.

``install`` is called once by the worker process (its event loop and settings);
a sync task body (in a thread) submits through that loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import Container, Mapping, Sequence
from typing import Any

from taskyard.bus.v1 import dispatch_pb2, pools_pb2
from taskyard.core import codec, contract, errors, rpc, telemetry, tracing
from taskyard.core.config import PoolSettings
from taskyard.core.priority import Priority
from taskyard.v1 import task_pb2

# How long a sync body waits for its child to be accepted.
SUBMIT_TIMEOUT = 30.0
_PRIORITY_NAMES = {"critical": 1, "high": 2, "normal": 3, "low": 4}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Parent:
    task_id: str
    attempt: int
    # The charged attempt (0 = ``attempt``): the children's request ids use it.
    charged: int = 0


@dataclasses.dataclass(frozen=True, kw_only=True)
class Child:
    """One ``ctx.submit``: the task a running attempt asks for."""

    parent: Parent
    name: str
    args: Sequence[Any]
    kwargs: Mapping[str, Any]
    # TaskSpec fields by name (_apply_options).
    options: Mapping[str, Any]
    # The trace context where ctx.submit was called (the attempt's span, or a span
    # the body opened): a sync body calls from its thread, and the submission then
    # runs on the worker's loop, whose context is not the body's.
    trace: Mapping[str, str] = dataclasses.field(default_factory=dict)


class Children:
    def __init__(self, settings: PoolSettings, loop: asyncio.AbstractEventLoop) -> None:
        self._settings = settings
        self._loop = loop
        self._lanes: dict[Priority, rpc.Requester] = {}
        self._store: rpc.Requester | None = None
        self._names: frozenset[str] = frozenset()
        self._seq: dict[tuple[str, int], itertools.count[int]] = {}

    def forget(self, task_id: str, attempt: int) -> None:
        """The attempt ended: its child counter goes (one per attempt would pile up)."""
        self._seq.pop((task_id, attempt), None)

    def _requester(self, addresses: tuple[str, ...]) -> rpc.Requester:
        s = self._settings
        return rpc.Requester(addresses, max_message_bytes=s.max_message_bytes, timeout=s.request_timeout)

    def _lane(self, priority: Priority) -> rpc.Requester:
        if priority not in self._lanes:
            self._lanes[priority] = self._requester(self._settings.lane_addresses(priority))
        return self._lanes[priority]

    async def _known(self, name: str) -> Container[str]:
        if name not in self._names:
            if self._store is None:
                self._store = self._requester(self._settings.store_addresses)
            reply = await self._store.call(contract.STORE_TASK_NAMES, pools_pb2.TaskNamesRequest())
            self._names = frozenset(reply.names)
        return self._names

    async def asubmit(self, child: Child) -> str:
        parent = child.parent
        spec = task_pb2.TaskSpec(name=child.name, parent_id=parent.task_id)
        try:
            if child.args:
                spec.args.extend(list(child.args))
            if child.kwargs:
                spec.kwargs.update(dict(child.kwargs))
        except (TypeError, ValueError) as exc:
            raise TypeError(f"child {child.name!r}: arguments must be JSON values ({exc})") from exc
        _apply_options(spec, child.options)
        if not spec.request_id:
            seq = self._seq.setdefault((parent.task_id, parent.attempt), itertools.count())
            spec.request_id = f"child:{parent.task_id}:{parent.charged or parent.attempt}:{next(seq)}"
        with telemetry.attached(child.trace):
            (record,) = codec.build_records(
                [spec],
                known_names=await self._known(child.name),
                limits=codec.Limits.from_settings(self._settings),
                field="task",
                single=True,
            )
            priority = Priority.from_wire(record.priority)
            with tracing.sending([record]):
                reply = await self._lane(priority).call(
                    contract.SUBMIT, dispatch_pb2.SubmitRequest(tasks=[record])
                )
        if len(reply.tasks) != 1:
            raise errors.internal("the lane answered a child submission with no outcome")
        return reply.tasks[0].id

    def submit(self, child: Child) -> str:
        """From a sync body's thread: submit through the worker's loop and wait."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            raise RuntimeError("ctx.submit() blocks: use `await ctx.asubmit(...)` in an async task")
        fut = asyncio.run_coroutine_threadsafe(self.asubmit(child), self._loop)
        return fut.result(SUBMIT_TIMEOUT)

    def close(self) -> None:
        for r in self._lanes.values():
            r.close()
        if self._store is not None:
            self._store.close()


def _apply_options(spec: task_pb2.TaskSpec, options: Mapping[str, Any]) -> None:
    """``priority`` ("high" or 1..4), ``queue``, ``depends_on``, ``request_id``,
    ``idempotency_key``, ``labels``, ``max_retries``: as in a TaskSpec."""
    unknown = set(options) - {
        "priority",
        "queue",
        "depends_on",
        "request_id",
        "idempotency_key",
        "labels",
        "max_retries",
    }
    if unknown:
        raise TypeError(f"unknown submit options: {', '.join(sorted(unknown))}")
    p = options.get("priority")
    if p is not None:
        value = _PRIORITY_NAMES.get(p.lower(), -1) if isinstance(p, str) else int(p)
        spec.priority = value  # type: ignore[assignment]
    if options.get("queue"):
        spec.queue = str(options["queue"])
    spec.depends_on.extend(str(d) for d in options.get("depends_on") or ())
    if options.get("request_id"):
        spec.request_id = str(options["request_id"])
    if options.get("idempotency_key"):
        spec.idempotency_key = str(options["idempotency_key"])
    for k, v in (options.get("labels") or {}).items():
        spec.labels[str(k)] = str(v)
    if options.get("max_retries") is not None:
        spec.max_retries = int(options["max_retries"])


_installed: Children | None = None


def install(settings: PoolSettings, loop: asyncio.AbstractEventLoop) -> Children:
    """The worker process's submitter (called once by the worker's main)."""
    global _installed
    _installed = Children(settings, loop)
    return _installed


def forget(task_id: str, attempt: int) -> None:
    """Called by the runner when an attempt ends (a no-op outside a worker)."""
    if _installed is not None:
        _installed.forget(task_id, attempt)


def installed() -> Children:
    if _installed is None:
        raise RuntimeError("children can only be submitted from a task run by a worker")
    return _installed
