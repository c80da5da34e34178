"""Attempts a pool handed back (a release: no free slot, a drain, a worker
respawn; or a death before the task started) are QUEUED again. The scheduler's
lanes learn of them from one ``KIND_GRAPH_RELEASED`` message of their refs,
published after the commit, and enqueue exactly those: no reload of every
QUEUED row, no wait for the fallback poll. A lost message is repaired by that
poll (the message is a wake-up, the row is the truth)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from taskyard.bus.v1 import graph_pb2, task_record_pb2
from taskyard.core import contract
from taskyard.core.states import TaskState

from ..appliers import Outbound
from ..records import queued_ref, record_queued_ref

_QUEUED = int(TaskState.QUEUED)


def released_message(records: Iterable[task_record_pb2.TaskRecord]) -> list[Outbound]:
    """The post-commit message for the records that are QUEUED now (none: [])."""
    refs = [record_queued_ref(r) for r in records if r.state == _QUEUED]
    if not refs:
        return []
    return [(contract.GRAPH_RELEASED, graph_pb2.ReleasedTasks(tasks=refs))]


def queued_message(rows: Iterable[Mapping[str, Any]]) -> list[Outbound]:
    """The same message for rows made QUEUED by a statement that returns their ref
    columns (id, name, priority, queue, created_at_us, flow): a retry or a redrive's
    step, whose tasks the lanes then take without reading every QUEUED row again."""
    refs = [queued_ref(r) for r in rows if r["state"] == "QUEUED"]
    if not refs:
        return []
    return [(contract.GRAPH_RELEASED, graph_pb2.ReleasedTasks(tasks=refs))]
