"""Fair share inside a lane: fairness keys in turn, by weight, FIFO inside a key."""

from __future__ import annotations

from typing import Any

import pytest

from taskyard.core.priority import Priority
from taskyard.scheduler import turns
from taskyard.scheduler.lanes import Lanes, Ref

ALL = frozenset({"add", "resize"})


def ref(i: int, key: str, *, name: str = "add", priority: Priority = Priority.NORMAL) -> Ref:
    return Ref(id=f"{key}{i}", name=name, priority=priority, key=key)


def test_a_flooding_key_does_not_hold_back_another_key() -> None:
    lanes = Lanes()
    lanes.push_all(ref(i, "a") for i in range(1000))
    lanes.push(ref(0, "b"))
    taken = lanes.take(ALL, 2)
    assert [r.id for r in taken] == ["a0", "b0"]


def test_keys_take_turns_and_each_stays_fifo() -> None:
    lanes = Lanes()
    lanes.push_all(ref(i, "a") for i in range(4))
    lanes.push_all(ref(i, "b") for i in range(2))
    lanes.push_all(ref(i, "c") for i in range(1))
    ids = [r.id for r in lanes.take(ALL, 10)]
    assert ids == ["a0", "b0", "c0", "a1", "b1", "a2", "a3"]


def test_weights_share_a_lane_three_to_one() -> None:
    lanes = Lanes()
    lanes.weights = {("", "heavy"): 3}
    lanes.push_all(ref(i, "heavy") for i in range(300))
    lanes.push_all(ref(i, "light") for i in range(300))
    taken: list[Ref] = []
    while len(taken) < 200:  # one slot at a time, as a busy pool frees them
        taken += lanes.take(ALL, 1)
    heavy = sum(1 for r in taken if r.key == "heavy")
    assert heavy == 150


def test_a_turn_cut_short_by_the_pool_goes_on_at_the_next_take() -> None:
    lanes = Lanes()
    lanes.weights = {("", "a"): 3}
    lanes.push_all(ref(i, "a") for i in range(10))
    lanes.push_all(ref(i, "b") for i in range(10))
    ids = [r.id for _ in range(8) for r in lanes.take(ALL, 1)]
    assert ids == ["a0", "a1", "a2", "b0", "a3", "a4", "a5", "b1"]


def test_a_key_whose_tasks_this_pool_cannot_run_is_passed_over() -> None:
    lanes = Lanes()
    lanes.push_all(ref(i, "a", name="resize") for i in range(3))
    lanes.push_all(ref(i, "b") for i in range(3))
    assert [r.id for r in lanes.take(frozenset({"add"}), 5)] == ["b0", "b1", "b2"]
    assert [r.id for r in lanes.take(frozenset({"resize"}), 5)] == ["a0", "a1", "a2"]
    assert len(lanes) == 0


def test_priority_lanes_come_before_fair_share() -> None:
    lanes = Lanes()
    lanes.push_all(ref(i, "a") for i in range(3))
    lanes.push(ref(9, "b", priority=Priority.CRITICAL))
    assert lanes.take(ALL, 1)[0].id == "b9"


def test_a_task_restored_goes_back_to_its_place() -> None:
    lanes = Lanes()
    lanes.push_all(ref(i, "a") for i in range(3))
    seqs: list[int] = []
    first = lanes.take(ALL, 1, seqs)
    lanes.push(ref(3, "a"))
    assert lanes.restore(seqs[0], first[0])
    assert [r.id for r in lanes.take(ALL, 4)] == ["a0", "a1", "a2", "a3"]


def test_standing_names_the_key_the_tasks_ahead_and_the_other_keys() -> None:
    lanes = Lanes()
    lanes.push_all(ref(i, "a") for i in range(3))
    lanes.push(ref(0, "b"))
    lanes.push(ref(0, "c"))
    assert lanes.standing("a2") == ("a", 2, 2)
    assert lanes.standing("nope") is None


def test_gated_tasks_are_not_enqueued_twice() -> None:
    lanes = Lanes()
    lanes.gated.add("a0")
    assert not lanes.push(ref(0, "a"))
    lanes.gated.discard("a0")
    assert lanes.push(ref(0, "a"))


def test_pause_and_drop_work_across_keys() -> None:
    lanes = Lanes()
    lanes.push(Ref(id="x", name="add", priority=Priority.NORMAL, queue="q", key="a"))
    lanes.push(ref(1, "b"))
    assert lanes.pause("q") == 1
    assert lanes.drop("b1", Priority.NORMAL, "add")
    assert len(lanes) == 0
    assert lanes.resume("q") == 1
    assert [r.id for r in lanes.take(ALL, 5)] == ["x"]


def test_a_pool_that_runs_nothing_waiting_passes_a_lane_of_many_keys_without_visiting_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lanes = Lanes()
    lanes.push_all(ref(0, f"k{i}", name="resize") for i in range(1000))
    lanes.push(ref(0, "z"))
    visits: list[int] = []
    real = turns.take_key

    def counted(*args: Any) -> int:
        visits.append(1)
        return real(*args)

    monkeypatch.setattr(turns, "take_key", counted)
    assert [r.id for r in lanes.take(frozenset({"add"}), 10)] == ["z0"]
    first = len(visits)
    assert lanes.take(frozenset({"add"}), 10) == []
    assert len(visits) == first  # nothing it runs is left: no key visited
    assert len(lanes.take(frozenset({"resize"}), 2000)) == 1000
