"""The scheduler's lanes: strict priority, FIFO within a lane, name filtering."""

from __future__ import annotations

from taskyard.core.priority import Priority
from taskyard.scheduler.lanes import Lanes, Ref


def ref(i: int, name: str = "add", priority: Priority = Priority.NORMAL) -> Ref:
    return Ref(id=f"t{i}", name=name, priority=priority)


def test_critical_first_then_fifo() -> None:
    lanes = Lanes()
    lanes.push_all(ref(i, priority=Priority.LOW) for i in range(50))
    lanes.push_all(ref(100 + i, priority=Priority.CRITICAL) for i in range(5))
    taken = lanes.take(frozenset({"add"}), 7)
    assert [r.id for r in taken] == [f"t{100 + i}" for i in range(5)] + ["t0", "t1"]
    assert len(lanes) == 48


def test_fifo_across_names_within_a_lane() -> None:
    lanes = Lanes()
    for i in range(6):
        lanes.push(ref(i, name="a" if i % 2 else "b"))
    assert [r.id for r in lanes.take(frozenset({"a", "b"}), 6)] == [f"t{i}" for i in range(6)]


def test_pool_only_gets_names_it_serves() -> None:
    lanes = Lanes()
    lanes.push(ref(1, name="resize", priority=Priority.CRITICAL))
    lanes.push(ref(2, name="add", priority=Priority.LOW))
    assert [r.id for r in lanes.take(frozenset({"add"}), 5)] == ["t2"]
    assert "t1" in lanes
    assert [r.id for r in lanes.take(frozenset({"resize"}), 5)] == ["t1"]
    assert len(lanes) == 0


def test_push_is_idempotent_while_waiting() -> None:
    lanes = Lanes()
    assert lanes.push(ref(1))
    assert not lanes.push(ref(1))
    assert lanes.take(frozenset({"add"}), 10) == [ref(1)]
    assert lanes.push(ref(1))  # after it left, a reload may enqueue it again


def test_depth_per_lane() -> None:
    lanes = Lanes()
    lanes.push_all(ref(i, priority=Priority.HIGH) for i in range(3))
    assert lanes.depth(Priority.HIGH) == 3
    assert lanes.depth(Priority.LOW) == 0
