"""The scheduler's lanes and the task graph's messages: released dependents are
enqueued, cancelled queued tasks leave their lane."""

from __future__ import annotations

from taskyard.bus.v1 import event_pb2, graph_pb2, lanes_pb2
from taskyard.core import contract
from taskyard.core.priority import Priority
from taskyard.scheduler import graph
from taskyard.scheduler.lanes import Lanes, Ref
from taskyard.v1 import task_pb2


def test_released_refs_are_enqueued_once() -> None:
    lanes = Lanes()
    msg = graph_pb2.ReleasedTasks(
        tasks=[
            lanes_pb2.QueuedRef(id="a", name="add", priority=task_pb2.PRIORITY_HIGH),
            lanes_pb2.QueuedRef(id="b", name="add"),
        ]
    )
    raw = contract.GRAPH_RELEASED.encode(msg)
    assert graph.released(raw, lanes) == 2
    assert graph.released(raw, lanes) == 0  # already waiting
    assert [r.id for r in lanes.take(frozenset({"add"}), 10)] == ["a", "b"]  # HIGH first


def test_other_envelopes_and_garbage_are_ignored() -> None:
    lanes = Lanes()
    events = contract.EVENTS.encode(event_pb2.EventBatch())
    assert graph.released(events, lanes) == 0
    assert graph.released(b"\x00garbage", lanes) == 0


def test_cancelled_events_drop_queued_tasks() -> None:
    lanes = Lanes()
    lanes.push_all(
        [Ref(id="a", name="add", priority=Priority.LOW), Ref(id="b", name="add", priority=Priority.LOW)]
    )
    events = [
        event_pb2.Event(type="task.cancelled", task_id="a", name="add", priority=task_pb2.PRIORITY_LOW),
        event_pb2.Event(type="task.succeeded", task_id="b", name="add", priority=task_pb2.PRIORITY_LOW),
        event_pb2.Event(type="task.cancelled", task_id="zzz", name="add", priority=task_pb2.PRIORITY_LOW),
    ]
    assert graph.drop_cancelled(events, lanes) == 1
    assert "a" not in lanes and "b" in lanes
