"""Fair share by tenant, then by key: deficit round robin over the tenants of a
lane (by tenant weight), then over the keys of a tenant (by the key's weight,
stored as ``tenant/key``); a suspended tenant's tasks parked; a pool that serves
some tenants only is given only theirs."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from taskyard.bus.v1 import event_pb2
from taskyard.core.priority import Priority
from taskyard.scheduler import graph, turns
from taskyard.scheduler.lanes import Lanes, Ref

ADD = frozenset({"add"})


def _ref(task_id: str, tenant: str, key: str = "", *, queue: str = "default") -> Ref:
    return Ref(task_id, "add", Priority.NORMAL, queue, key, (), tenant)


def _flood(lanes: Lanes, tenant: str, keys: int, per_key: int) -> None:
    for k in range(keys):
        for i in range(per_key):
            lanes.push(_ref(f"{tenant}-{k}-{i}", tenant, f"k{k}"))


def _take_one_by_one(lanes: Lanes, n: int, tenants: frozenset[str] | None = None) -> list[Ref]:
    out: list[Ref] = []
    for _ in range(n):
        out += lanes.take(ADD, 1, None, tenants)
    return out


def test_a_tenant_flooding_with_many_keys_takes_one_turn_before_another_tenants_task() -> None:
    lanes = Lanes()
    _flood(lanes, "flood", keys=200, per_key=20)
    lanes.push(_ref("small-1", "small"))
    taken = _take_one_by_one(lanes, 2)
    assert [r.tenant for r in taken] == ["flood", "small"]
    # Taken in batches too: its one task is in the first two of a big take.
    lanes = Lanes()
    _flood(lanes, "flood", keys=200, per_key=20)
    lanes.push(_ref("small-1", "small"))
    assert "small-1" in [r.id for r in lanes.take(ADD, 2)]


def test_both_flooding_each_tenant_gets_its_share_whatever_its_keys() -> None:
    lanes = Lanes()
    _flood(lanes, "many", keys=50, per_key=10)
    _flood(lanes, "one", keys=1, per_key=500)
    taken = lanes.take(ADD, 100)
    shares = {t: sum(1 for r in taken if r.tenant == t) for t in ("many", "one")}
    assert shares == {"many": 50, "one": 50}


def test_tenant_weights_share_the_lane() -> None:
    lanes = Lanes()
    lanes.tenant_weights = {"gold": 3}
    _flood(lanes, "gold", keys=1, per_key=100)
    _flood(lanes, "", keys=1, per_key=100)  # the default tenant, weight 1
    taken = _take_one_by_one(lanes, 40)
    assert sum(1 for r in taken if r.tenant == "gold") == 30
    assert sum(1 for r in taken if r.tenant == "") == 10


def test_key_weights_apply_within_their_own_tenant_only() -> None:
    lanes = Lanes()
    # acme's key "big" weighs 3; the default tenant's key "big" is another key.
    lanes.weights = {("acme", "big"): 3}
    for i in range(40):
        lanes.push(_ref(f"acme-big-{i}", "acme", "big"))
        lanes.push(_ref(f"acme-small-{i}", "acme", "small"))
    taken = lanes.take(ADD, 40)
    assert sum(1 for r in taken if r.key == "big") == 30
    lanes = Lanes()
    lanes.weights = {("acme", "big"): 3}
    for i in range(40):
        lanes.push(_ref(f"big-{i}", "", "big"))
        lanes.push(_ref(f"small-{i}", "", "small"))
    taken = lanes.take(ADD, 40)
    assert sum(1 for r in taken if r.key == "big") == 20


def test_the_default_tenant_weighs_its_keys_by_their_bare_names() -> None:
    lanes = Lanes()
    lanes.weights = {("", "big"): 3}
    for i in range(40):
        lanes.push(_ref(f"big-{i}", "", "big"))
        lanes.push(_ref(f"small-{i}", "", "small"))
    assert sum(1 for r in lanes.take(ADD, 40) if r.key == "big") == 30


def test_within_a_tenant_its_keys_share_its_turns() -> None:
    lanes = Lanes()
    _flood(lanes, "acme", keys=3, per_key=10)
    _flood(lanes, "beta", keys=1, per_key=30)
    taken = lanes.take(ADD, 12)
    acme = [r.key for r in taken if r.tenant == "acme"]
    assert sorted(acme) == ["k0", "k0", "k1", "k1", "k2", "k2"]


def test_a_pool_serving_some_tenants_is_given_only_theirs() -> None:
    lanes = Lanes()
    _flood(lanes, "a", keys=2, per_key=5)
    _flood(lanes, "b", keys=2, per_key=5)
    _flood(lanes, "", keys=1, per_key=5)
    only_a = lanes.take(ADD, 100, None, frozenset({"a"}))
    assert {r.tenant for r in only_a} == {"a"} and len(only_a) == 10
    only_default = lanes.take(ADD, 100, None, frozenset({""}))
    assert {r.tenant for r in only_default} == {""} and len(only_default) == 5
    assert lanes.take(ADD, 100, None, frozenset({"a", "nobody"})) == []
    rest = lanes.take(ADD, 100)
    assert {r.tenant for r in rest} == {"b"} and len(rest) == 10
    assert len(lanes) == 0


def test_a_pool_serving_several_of_many_tenants_shares_between_them() -> None:
    lanes = Lanes()
    for t in range(30):
        _flood(lanes, f"t{t}", keys=1, per_key=4)
    taken = lanes.take(ADD, 4, None, frozenset({"t3", "t7"}))
    assert sorted(r.tenant for r in taken) == ["t3", "t3", "t7", "t7"]
    # Served in a ring that skips the tenants it does not serve.
    taken = lanes.take(ADD, 200, None, frozenset({f"t{t}" for t in range(29)}))
    assert "t29" not in {r.tenant for r in taken} and len(taken) == 29 * 4 - 4


def test_a_suspended_tenants_tasks_are_parked_until_it_resumes() -> None:
    lanes = Lanes()
    for i in range(3):
        lanes.push(_ref(f"a{i}", "acme", f"k{i}"))
    lanes.push(_ref("b0", "beta"))
    assert lanes.suspend("acme") == 3
    lanes.push(_ref("a3", "acme"))  # comes while suspended: parked too
    assert lanes.held_by_suspension("a3") and lanes.held_by_suspension("a0")
    assert not lanes.held_by_suspension("b0")
    assert len(lanes) == 1
    assert [r.id for r in lanes.take(ADD, 10)] == ["b0"]
    assert lanes.take(ADD, 10) == []
    assert not lanes.push(_ref("a1", "acme"))  # a reload's copy is not parked twice
    assert lanes.unsuspend("acme") == 4
    assert [r.id for r in lanes.take(ADD, 10)] == ["a0", "a1", "a2", "a3"]


def test_a_suspended_tenants_task_in_a_paused_queue_waits_for_both() -> None:
    lanes = Lanes()
    lanes.push(_ref("a0", "acme", queue="reports"))
    lanes.pause("reports")
    lanes.suspend("acme")
    assert lanes.resume("reports") == 1  # back, and parked under its tenant
    assert lanes.take(ADD, 10) == []
    lanes.pause("reports")
    assert lanes.unsuspend("acme") == 1  # back, and parked under its queue
    assert lanes.take(ADD, 10) == []
    lanes.resume("reports")
    assert [r.id for r in lanes.take(ADD, 10)] == ["a0"]


def test_standing_counts_the_tenants_other_keys_never_another_tenants() -> None:
    lanes = Lanes()
    lanes.push(_ref("a0", "acme", "x"))
    lanes.push(_ref("a1", "acme", "x"))
    lanes.push(_ref("a2", "acme", "y"))
    lanes.push(_ref("b0", "beta"))
    lanes.push(_ref("c0", "", "x"))
    assert lanes.standing("a1") == ("x", 1, 1)
    # beta's task waits behind acme's and the default tenant's, which beta may not learn of.
    assert lanes.standing("b0") == ("", 0, 0)


def test_a_cancelled_task_leaves_its_tenant_and_key() -> None:
    lanes = Lanes()
    lanes.push(_ref("a0", "acme", "x"))
    lanes.push(_ref("b0", "beta"))
    assert lanes.drop("a0", Priority.NORMAL, "add")
    assert not lanes.drop("a0", Priority.NORMAL, "add")
    assert [r.id for r in lanes.take(ADD, 10)] == ["b0"]
    assert len(lanes) == 0 and lanes.depth(Priority.NORMAL) == 0


def test_a_pool_serving_some_tenants_taking_one_at_a_time_alternates_between_them() -> None:
    lanes = Lanes()
    for t in ("a", "b", "c", "d"):
        _flood(lanes, t, keys=1, per_key=10)
    taken = _take_one_by_one(lanes, 6, frozenset({"a", "b"}))
    assert sorted(r.tenant for r in taken) == ["a", "a", "a", "b", "b", "b"]


def test_pools_serving_other_tenants_taking_in_turn_each_share_theirs() -> None:
    lanes = Lanes()
    for t in "abcde":
        _flood(lanes, t, keys=1, per_key=300)
    first, second = frozenset({"a", "b"}), frozenset({"c", "d"})
    taken: list[str] = []
    for _ in range(200):
        taken += [f"1{r.tenant}" for r in lanes.take(ADD, 1, None, first)]
        taken += [f"2{r.tenant}" for r in lanes.take(ADD, 1, None, second)]
    assert {k: taken.count(k) for k in set(taken)} == {"1a": 100, "1b": 100, "2c": 100, "2d": 100}


def test_a_pool_serving_some_tenants_honours_their_weights_one_task_a_take() -> None:
    lanes = Lanes()
    lanes.tenant_weights = {"a": 3}
    for t in "abc":
        _flood(lanes, t, keys=1, per_key=500)
    taken = _take_one_by_one(lanes, 400, frozenset({"a", "b"}))
    assert sum(1 for r in taken if r.tenant == "a") == 300
    assert sum(1 for r in taken if r.tenant == "b") == 100


def _visits(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tenants a take looks into, in order (each look is one take_keys)."""
    seen: list[str] = []
    real = turns.take_keys

    def counted(lane: Any, tq: Any, *args: Any) -> int:
        seen.append(next(iter(tq.keys.values())).weight_key[0] if tq.keys else "")
        return real(lane, tq, *args)

    monkeypatch.setattr(turns, "take_keys", counted)
    return seen


@pytest.mark.parametrize("others", [10, 1000])
def test_a_take_looks_at_a_tenant_with_nothing_the_pool_runs_once(
    monkeypatch: pytest.MonkeyPatch, others: int
) -> None:
    lanes = Lanes()
    for t in range(others):
        for i in range(3):
            lanes.push(Ref(f"t{t}-{i}", "resize", Priority.NORMAL, tenant=f"t{t}"))
    for i in range(300):
        lanes.push(Ref(f"hot-{i}", "add", Priority.NORMAL, tenant="hot"))
    seen = _visits(monkeypatch)
    taken = 0
    for _ in range(30):
        taken += len(lanes.take(ADD, 10))
    assert taken == 300
    # The first take passes every other tenant once; no take after it looks at one.
    assert len(seen) <= others + taken
    assert sum(1 for w in seen if w.startswith("t")) == others
    # A tenant let go comes back to the ring when it has something the pool runs.
    lanes.push(Ref("t0-add", "add", Priority.NORMAL, tenant="t0"))
    lanes.push(Ref("hot-more", "add", Priority.NORMAL, tenant="hot"))
    assert sorted(r.id for r in lanes.take(ADD, 10)) == ["hot-more", "t0-add"]


def test_a_pool_serving_some_tenants_looks_at_one_with_nothing_it_runs_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lanes = Lanes()
    served = frozenset({"hot", *(f"t{t}" for t in range(200))})
    for t in range(200):
        lanes.push(Ref(f"t{t}", "resize", Priority.NORMAL, tenant=f"t{t}"))
    _flood(lanes, "hot", keys=1, per_key=100)
    _flood(lanes, "cold", keys=1, per_key=5)  # a tenant the pool does not serve
    seen = _visits(monkeypatch)
    taken = sum(len(lanes.take(ADD, 1, None, served)) for _ in range(100))
    assert taken == 100 and len(seen) <= 200 + taken


def test_a_cancelled_task_parked_under_its_suspended_tenant_is_dropped_at_once() -> None:
    lanes = Lanes()
    lanes.push(_ref("a0", "acme"))
    lanes.push(_ref("a1", "acme"))
    lanes.suspend("acme")
    lanes.push(_ref("a2", "acme"))
    assert lanes.drop("a0", Priority.NORMAL, "add")
    assert graph.drop_cancelled([event_pb2.Event(type="task.cancelled", task_id="a2", name="add")], lanes)
    assert not lanes.held_by_suspension("a0") and not lanes.held_by_suspension("a2")
    assert lanes.unsuspend("acme") == 1
    assert [r.id for r in lanes.take(ADD, 10)] == ["a1"]


def test_a_cancelled_task_parked_in_its_paused_queue_is_dropped_at_once() -> None:
    lanes = Lanes()
    lanes.push(_ref("a0", "acme", queue="reports"))
    lanes.pause("reports")
    assert lanes.drop("a0", Priority.NORMAL, "add")
    assert lanes.parked("reports") == 0
    assert lanes.resume("reports") == 0


def test_a_take_looks_at_a_key_with_nothing_the_pool_runs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    lanes = Lanes()
    for k in range(1000):
        lanes.push(Ref(f"r{k}", "resize", Priority.NORMAL, key=f"r{k}", tenant="acme"))
    _flood(lanes, "acme", keys=2, per_key=50)
    _flood(lanes, "beta", keys=1, per_key=100)
    looks: list[int] = []
    real = turns.take_key

    def counted(*args: Any) -> int:
        looks.append(1)
        return real(*args)

    monkeypatch.setattr(turns, "take_key", counted)
    taken = _take_one_by_one(lanes, 200)
    assert sorted(Counter(r.tenant for r in taken).values()) == [100, 100]
    # Each of acme's keys that holds only what the pool cannot run is looked at once.
    assert len(looks) <= 1000 + 2 * len(taken)
    lanes.push(Ref("r5-add", "add", Priority.NORMAL, key="r5", tenant="acme"))
    assert [r.id for r in lanes.take(ADD, 10)] == ["r5-add"]
    assert len(lanes.take(frozenset({"resize"}), 2000)) == 1000


def test_past_the_served_sets_a_lane_keeps_a_pool_is_still_served_in_turn() -> None:
    lanes = Lanes()
    for t in "ab":
        _flood(lanes, t, keys=1, per_key=turns.MAX_TURNS * 4)
    for i in range(turns.MAX_TURNS * 2):  # a pool each time with a set of names of its own
        assert len(lanes.take(frozenset({"add", f"other-{i}"}), 1)) == 1
    taken = _take_one_by_one(lanes, 20)
    assert Counter(r.tenant for r in taken) == {"a": 10, "b": 10}
    assert len(lanes.take(ADD, 1000)) == turns.MAX_TURNS * 6 - 20
