"""A gate every tenant shares (a limit a task's function declares) lets its tasks
go as a lane shares its turns: tenants in turn by their weights, then each
tenant's keys in turn by theirs, the oldest of a key first."""

from __future__ import annotations

from collections import Counter

from taskyard.core.priority import Priority
from taskyard.scheduler.gates import Gates
from taskyard.scheduler.lanes import Lanes, Ref

GATE = ("shared", "")


def _hold(gates: Gates, tenant: str, keys: int, per_key: int, seq: list[int]) -> None:
    for k in range(keys):
        for i in range(per_key):
            ref = Ref(f"{tenant}-{k}-{i}", "add", Priority.NORMAL, key=f"k{k}", tenant=tenant)
            gates.hold(GATE, seq[0], ref, float(seq[0]))
            seq[0] += 1


def _released(gates: Gates, n: int) -> Counter[str]:
    return Counter(task_id.split("-")[0] for task_id in gates.open(GATE, n))


def test_a_tenant_with_many_keys_takes_no_more_of_a_shared_gate_than_one_with_one_key() -> None:
    gates = Gates(Lanes())
    seq = [0]
    _hold(gates, "many", keys=100, per_key=10, seq=seq)
    _hold(gates, "one", keys=1, per_key=100, seq=seq)
    assert _released(gates, 50) == {"many": 25, "one": 25}
    assert gates.waiting(GATE) == 1100 - 50


def test_tenants_weights_share_a_gate() -> None:
    lanes = Lanes()
    lanes.tenant_weights = {"gold": 3}
    gates = Gates(lanes)
    seq = [0]
    _hold(gates, "gold", keys=1, per_key=100, seq=seq)
    _hold(gates, "lead", keys=1, per_key=100, seq=seq)
    released = Counter[str]()
    for _ in range(40):  # one unit at a time, as a concurrency limit's come back
        released += _released(gates, 1)
    assert released == {"gold": 30, "lead": 10}


def test_within_a_tenant_its_keys_share_its_turns_at_a_gate_oldest_first() -> None:
    lanes = Lanes()
    lanes.weights = {("acme", "k0"): 2}
    gates = Gates(lanes)
    seq = [0]
    _hold(gates, "acme", keys=2, per_key=4, seq=seq)
    assert gates.open(GATE, 6) == ["acme-0-0", "acme-0-1", "acme-1-0", "acme-0-2", "acme-0-3", "acme-1-1"]
    # Back in the lanes at their places, oldest first.
    assert [r.id for r in lanes.take(frozenset({"add"}), 2)] == ["acme-0-0", "acme-0-1"]


def test_a_task_at_a_gate_is_found_explained_and_dropped() -> None:
    lanes = Lanes()
    gates = Gates(lanes)
    seq = [0]
    _hold(gates, "acme", keys=2, per_key=2, seq=seq)
    assert gates.where("acme-1-0") == (GATE, 2.0)
    assert gates.tenant_of("acme-1-0") == "acme"
    assert gates.drop("acme-1-0") and not gates.drop("acme-1-0")
    assert "acme-1-0" not in gates and "acme-1-0" not in lanes.gated
    assert sorted(gates.open(GATE, 10)) == ["acme-0-0", "acme-0-1", "acme-1-1"]
    assert gates.gates() == [] and len(gates) == 0
