"""What the scheduler's lanes learn from the store's task graph: dependents
released to QUEUED (``KIND_GRAPH_RELEASED``, published after their commit) are
enqueued; QUEUED tasks cancelled (``task.cancelled`` events) leave their lane.
Both are wake-ups: a lost one is repaired by the reload (a released task) or by
the lease's state guard (a cancelled one is never leased)."""

from __future__ import annotations

from collections.abc import Iterable

from taskyard.bus.v1 import event_pb2
from taskyard.core import contract
from taskyard.core.priority import Priority
from taskyard.scheduler.dispatcher import ref_of
from taskyard.scheduler.lanes import Lanes


def released(raw: bytes, lanes: Lanes) -> int:
    """Enqueue the refs of a KIND_GRAPH_RELEASED message; 0 for any other kind."""
    try:
        msg = contract.GRAPH_RELEASED.open(raw)
    except Exception:
        return 0
    if msg is None:
        return 0
    return lanes.push_all(ref_of(t) for t in msg.tasks)


def drop_cancelled(events: Iterable[event_pb2.Event], lanes: Lanes) -> int:
    n = 0
    for ev in events:
        # Not only the lanes': a task parked under a suspended tenant or a paused queue too.
        if ev.type == "task.cancelled":
            n += lanes.drop(ev.task_id, Priority.from_wire(ev.priority), ev.name)
    return n
