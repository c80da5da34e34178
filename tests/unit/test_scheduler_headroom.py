"""Headroom: slots are held while a tenant that submitted within the window has
nothing waiting and another tenant submits or waits too; the lanes say which task
may take one (nothing more urgent waits, nothing of its tenant)."""

from __future__ import annotations

from taskyard.core.priority import Priority
from taskyard.scheduler.headroom import FEW, REFRESH, WINDOW, Headroom
from taskyard.scheduler.lanes import Lanes, Ref


class _Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now

    def tick(self, seconds: float = 2 * REFRESH) -> None:
        self.now += seconds


def test_slots_are_held_while_a_tenant_with_nothing_waiting_submits_beside_another() -> None:
    clock = _Clock()
    waiting: dict[str, int] = {}
    headroom = Headroom(waiting=lambda: waiting, clock=clock)
    assert not headroom.contended() and headroom.held(128) == 0
    for _ in range(3):
        headroom.submitted("a")  # one tenant, however often
    waiting["a"] = 1000
    clock.tick()
    assert not headroom.contended() and headroom.ends_at() is None

    headroom.submitted("b")  # b, with nothing waiting, beside a's backlog
    assert headroom.contended()
    assert (headroom.held(128), headroom.held(4), headroom.held(1)) == (8, 1, 0)
    assert headroom.few == frozenset()

    waiting["b"] = FEW  # a few of b's wait: they may take the held slots
    clock.tick()
    assert headroom.contended() and headroom.few == {"b"}
    waiting["b"] = FEW + 1  # b has a backlog too: the turns share every slot
    clock.tick()
    assert not headroom.contended()
    del waiting["b"]
    clock.tick()
    assert headroom.contended()

    # a stops submitting but its backlog lasts: held while b submits.
    clock.tick(WINDOW)
    headroom.submitted("b")
    b_at = clock.now
    clock.tick()
    assert headroom.contended()
    ends = headroom.ends_at()
    assert ends == b_at + WINDOW
    # b stops too: held until b's window ends, then not.
    clock.now = ends
    assert not headroom.contended() and headroom.ends_at() is None


def test_two_tenants_with_nothing_waiting_hold_slots_one_does_not() -> None:
    clock = _Clock()
    headroom = Headroom(clock=clock)  # nothing waits in the lanes
    headroom.submitted("")
    assert not headroom.contended()
    headroom.submitted("b")
    assert headroom.contended()
    clock.tick(WINDOW)
    assert not headroom.contended()


def test_a_task_is_served_next_when_nothing_more_urgent_and_nothing_of_its_tenant_waits() -> None:
    lanes = Lanes()
    assert lanes.serves_next(Priority.LOW, "a") and lanes.waiting_tenants() == {}
    lanes.push(Ref("a0", "add", Priority.NORMAL, tenant="a"))
    assert lanes.waiting_tenants() == {"a": 1}
    assert not lanes.serves_next(Priority.CRITICAL, "a")  # its own tenant waits
    assert lanes.serves_next(Priority.NORMAL, "b")
    assert lanes.serves_next(Priority.HIGH, "b")
    assert not lanes.serves_next(Priority.LOW, "b")  # a's NORMAL task first
    lanes.take(frozenset({"add"}), 1)
    assert lanes.serves_next(Priority.LOW, "b") and lanes.serves_next(Priority.NORMAL, "a")


def test_the_held_slots_take_a_few_tenants_tasks_oldest_first_never_past_a_more_urgent_one() -> None:
    lanes = Lanes()
    add = frozenset({"add"})
    for i in range(3):
        lanes.push(Ref(f"a{i}", "add", Priority.NORMAL, tenant="a"))
    lanes.push(Ref("b-low", "add", Priority.LOW, tenant="b"))
    lanes.push(Ref("b0", "add", Priority.NORMAL, key="x", tenant="b"))
    lanes.push(Ref("b1", "add", Priority.NORMAL, key="y", tenant="b"))
    lanes.push(Ref("b-other", "other", Priority.NORMAL, tenant="b"))
    seqs: list[int] = []
    # b's NORMAL tasks it runs, oldest first across its keys; not b's LOW one while a's
    # NORMAL ones wait; not the name the pool does not run.
    assert [r.id for r in lanes.take_few(add, ["b"], 5, seqs)] == ["b0", "b1"]
    assert len(seqs) == 2 and seqs[0] < seqs[1]
    assert "b0" not in lanes and lanes.waiting_tenants() == {"a": 3, "b": 2}
    assert [r.id for r in lanes.take(add, 3)] == ["a0", "a1", "a2"]
    assert [r.id for r in lanes.take_few(add, ["b"], 5)] == ["b-low"]
