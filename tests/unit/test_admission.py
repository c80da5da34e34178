"""The admission step: rate and concurrency limits, gates, releases, takeover
(driven through the scheduler's hooks: tests/support/admission.py)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from support.admission import ALL, Harness, concurrency, rate

from taskyard.bus.v1 import dispatch_pb2, flow_pb2, task_record_pb2
from taskyard.core import limits
from taskyard.core.priority import Priority
from taskyard.scheduler.lanes import Ref
from taskyard.v1 import task_service_pb2


def test_a_full_concurrency_key_does_not_block_other_keys() -> None:
    h = Harness(concurrency("per-customer", 2))
    h.load()
    for i in range(5):
        h.submit(f"a{i}", ("per-customer", "a", 1), key="a")
    h.submit("b0", ("per-customer", "b", 1), key="b")
    assert sorted(h.dispatch(10)) == ["a0", "a1", "b0"]
    assert len(h.flow.gates) == 3
    h.finish("a0")
    assert h.dispatch(10) == ["a2"]


def test_units_come_back_on_every_end_and_the_oldest_waiting_goes_first() -> None:
    h = Harness(concurrency("one", 1, per_key=False))
    h.load()
    for i in range(3):
        h.submit(f"t{i}", ("one", "", 1))
    assert h.dispatch(5) == ["t0"]
    h.finish("t0")
    assert h.dispatch(5) == ["t1"]
    h.flow.release_tasks(["t1"], before=h.clock.now + 1)  # its lease lapsed
    assert h.dispatch(5) == ["t2"]


def test_a_rate_limit_admits_its_burst_then_its_rate() -> None:
    h = Harness(rate("api", 10, 1000, burst=5))
    h.load()
    h.clock.now += 10  # long after the term began: the bucket is full
    for i in range(20):
        h.submit(f"t{i}", ("api", "", 1))
    assert len(h.dispatch(100)) == 5
    h.tick(0.1)  # one emission interval: one more unit
    assert len(h.dispatch(100)) == 1
    h.tick(0.5)
    assert len(h.dispatch(100)) == 5


def test_a_new_term_starts_every_rate_bucket_empty() -> None:
    h = Harness(rate("api", 10, 1000, burst=5))
    h.load()
    for i in range(20):
        h.submit(f"t{i}", ("api", "", 1))
    assert h.dispatch(100) == []  # what a predecessor admitted is unknown
    h.tick(0.1)
    assert len(h.dispatch(100)) == 1


def test_rate_before_concurrency_and_all_or_nothing() -> None:
    h = Harness(rate("api", 100, 1000, burst=100), concurrency("one", 1, per_key=False))
    h.load()
    h.clock.now += 10
    h.submit("t0", ("api", "", 1), ("one", "", 1))
    h.submit("t1", ("api", "", 1), ("one", "", 1))
    assert h.dispatch(5) == ["t0"]
    # t1 waits at the concurrency gate and took no rate unit.
    assert h.flow.admission.room(("api", "")) == 99


def test_a_leased_attempt_of_a_predecessor_holds_its_units() -> None:
    held = flow_pb2.LeasedFlow(task_id="old", lease_token="x", flow=task_record_pb2.FlowControl())
    held.flow.uses.add(limit="per-customer", key="a", units=1)
    h = Harness(concurrency("per-customer", 1), leased=[held])
    h.submit("a1", ("per-customer", "a", 1), key="a")
    assert h.dispatch(5) == []  # before the limits and the leases are read
    h.load()
    assert h.dispatch(5) == []  # the predecessor's attempt still runs
    h.store.leased = []  # it ended, and this scheduler never heard
    h.clock.now += 1
    asyncio.run(h.flow.resync())
    assert h.dispatch(5) == ["a1"]


def test_a_lease_not_yet_confirmed_survives_a_resync() -> None:
    h = Harness(concurrency("one", 1, per_key=False))
    h.load()
    h.submit("t0", ("one", "", 1))
    seqs: list[int] = []
    taken = h.lanes.take(ALL, 1, seqs)
    assert h.flow.admit(taken, seqs, ["tok"]) == [0]
    h.clock.now += 1
    asyncio.run(h.flow.resync())  # the store has not committed it yet
    assert h.flow.admission.held(("one", "")) == 1


def test_a_changed_limit_opens_its_gate_and_a_deleted_one_is_ignored() -> None:
    h = Harness(concurrency("one", 1, per_key=False))
    h.load()
    for i in range(3):
        h.submit(f"t{i}", ("one", "", 1))
    assert h.dispatch(5) == ["t0"]
    h.store.limits = [concurrency("one", 2, per_key=False)]
    h.store.version = 2
    asyncio.run(h.flow.read_limits())
    assert h.dispatch(5) == ["t1"]
    h.store.limits = []
    h.store.version = 3
    asyncio.run(h.flow.read_limits())
    assert h.dispatch(5) == ["t2"]


def test_gates_explain_what_holds_a_task() -> None:
    h = Harness(concurrency("per-customer", 1), rate("api", 1, 1000, burst=1))
    h.load()
    h.clock.now += 10
    h.submit("a0", ("per-customer", "a", 1), key="a")
    h.submit("a1", ("per-customer", "a", 1), key="a")
    h.submit("r0", ("api", "", 1))
    h.submit("r1", ("api", "", 1))
    assert sorted(h.dispatch(5)) == ["a0", "r0"]
    h.submit("f0", key="x")
    h.submit("f1", key="y")
    request = flow_pb2.FlowGatesRequest(task_ids=["a1", "r1", "f1", "nope"], limits=["*"])
    reply = asyncio.run(h.flow.on_gates(request, cast(Any, None)))
    by_id = {g.task_id: g for g in reply.gates}
    full = by_id["a1"]
    assert full.reason == task_service_pb2.WAIT_REASON_CONCURRENCY_FULL
    assert (full.gate.limit, full.gate.key, list(full.gate.holder_ids)) == ("per-customer", "a", ["a0"])
    assert by_id["r1"].reason == task_service_pb2.WAIT_REASON_RATE_LIMITED
    assert by_id["r1"].gate.next_admission_at.seconds > 0
    assert by_id["f1"].reason == task_service_pb2.WAIT_REASON_FAIR_SHARE
    assert (by_id["f1"].gate.key, by_id["f1"].gate.keys_ahead) == ("y", 1)
    assert by_id["nope"].reason == task_service_pb2.WAIT_REASON_UNSPECIFIED
    usage = reply.usage["per-customer"]
    assert (usage.units_in_use, usage.waiting, usage.admitted, usage.throttled) == (1, 1, 1, 1)
    assert [(k.key, k.units_in_use, k.waiting) for k in usage.busiest_keys] == [("a", 1, 1)]


def test_declared_limits_are_added_to_submitted_tasks() -> None:
    declared = concurrency(limits.declared_name("add", "concurrency"), 3)
    declared.task_name, declared.key_argument = "add", "customer"
    h = Harness(declared)
    h.load()
    request = dispatch_pb2.SubmitRequest()
    request.tasks.add(id="1", name="add", kwargs_json=b'{"customer": 42}')
    request.tasks.add(id="2", name="other")
    out = dispatch_pb2.SubmitRequest.FromString(h.flow.declare(request.SerializeToString()))
    assert [(u.limit, u.key, u.units) for u in out.tasks[0].flow.uses] == [("add.concurrency", "42", 0)]
    assert not out.tasks[1].HasField("flow")


def test_metrics_show_each_limit_and_its_busiest_keys() -> None:
    from prometheus_client import CollectorRegistry, generate_latest

    from taskyard.scheduler.metrics import FlowState

    h = Harness(concurrency("per-customer", 1))
    h.load()
    for key in ("a", "b"):
        h.submit(f"{key}0", ("per-customer", key, 1), key=key)
        h.submit(f"{key}1", ("per-customer", key, 1), key=key)
    h.dispatch(10)
    registry = CollectorRegistry()
    registry.register(FlowState(h.flow.usage))
    text = generate_latest(registry).decode()
    assert 'taskyard_flow_admitted_total{limit="per-customer"} 2.0' in text
    assert 'taskyard_flow_throttled_total{limit="per-customer"} 2.0' in text
    assert 'taskyard_flow_waiting{limit="per-customer"} 2.0' in text
    assert 'taskyard_flow_units_in_use{key="a",limit="per-customer"} 1.0' in text
    assert 'taskyard_flow_units_in_use{key="other",limit="per-customer"} 0.0' in text


def test_a_limit_not_yet_read_holds_its_tasks_until_the_next_read() -> None:
    h = Harness(concurrency("old", 1))
    h.load()
    h.submit("t0", ("new", "a", 1))
    h.submit("t1", ("new", "a", 1))
    assert h.dispatch(5) == []  # created a moment ago, perhaps: wait for the next read
    h.store.limits = [concurrency("old", 1), concurrency("new", 1)]
    h.store.version = 2
    asyncio.run(h.flow.read_limits())
    assert h.dispatch(5) == ["t0"]  # and it holds, now that it is known


def test_a_limit_still_unknown_after_a_read_is_ignored() -> None:
    h = Harness(concurrency("old", 1))
    h.load()
    h.submit("t0", ("gone", "a", 1))
    h.submit("t1", ("gone", "a", 1))
    assert h.dispatch(5) == []
    asyncio.run(h.flow.read_limits())  # unchanged: "gone" was deleted with force
    assert sorted(h.dispatch(5)) == ["t0", "t1"]


def test_a_rate_change_keeps_the_units_spent_not_the_old_pace() -> None:
    h = Harness(rate("api", 1, 3_600_000, burst=2))
    h.load()
    h.clock.now += 100_000
    for i in range(4):
        h.submit(f"t{i}", ("api", "", 1))
    assert len(h.dispatch(5)) == 2  # the burst; the next unit is an hour away
    h.store.limits = [rate("api", 1000, 1000, burst=3)]
    h.store.version = 2
    asyncio.run(h.flow.read_limits())
    assert len(h.dispatch(5)) == 1  # two of the new burst of three are spent
    h.tick(0.01)  # a gate is looked at again at most every 10 ms: 10 units of 1 ms came back
    assert len(h.dispatch(5)) == 1


def test_declared_limits_count_beyond_the_eight_a_task_may_name() -> None:
    from taskyard.core.validation import Violation
    from taskyard.v1 import limit_pb2

    uses = [limit_pb2.LimitUse(limit=f"l{i}") for i in range(10)]
    assert limits.use_violations(uses, "", path="task") == [
        Violation(field="task.limits", description="at most 8 limits, got 10")
    ]
    assert limits.use_violations(uses, "", path="t", max_uses=limits.MAX_STORED_USES) == []


def test_a_limit_names_its_task_and_key_argument_within_bounds() -> None:
    bad = concurrency("x", 1)
    bad.task_name, bad.key_argument = "t" * 3_000_000, "not an identifier!"
    fields = {v.field for v in limits.limit_violations(bad)}
    assert fields == {"limit.task_name", "limit.key_argument"}


def test_an_attempt_that_ended_while_a_resync_read_is_not_counted_again() -> None:
    h = Harness(concurrency("one", 1, per_key=False))
    h.load()
    h.submit("a", ("one", "", 1))
    h.submit("b", ("one", "", 1))
    assert h.dispatch(5) == ["a"]
    token = h.running["a"]
    # The resync's read sees a's lease; a's end arrives before its reply.
    seen = flow_pb2.LeasedFlow(task_id="a", lease_token=token, flow=task_record_pb2.FlowControl())
    seen.flow.uses.add(limit="one", units=1)
    h.store.leased = [seen]
    h.clock.now += 1
    h.finish("a")
    asyncio.run(h.flow.resync())
    assert h.dispatch(5) == ["b"]  # a is not held again


def test_a_limit_made_global_counts_what_its_keys_hold() -> None:
    h = Harness(concurrency("per-customer", 2))
    h.load()
    for key in "abc":
        for i in range(2):
            h.submit(f"{key}{i}", ("per-customer", key, 1), key=key)
    assert len(h.dispatch(10)) == 6
    h.submit("d0", ("per-customer", "d", 1), key="d")
    h.store.limits = [concurrency("per-customer", 2, per_key=False)]
    h.store.version = 2
    asyncio.run(h.flow.read_limits())
    assert h.dispatch(10) == []  # six running against a global limit of two
    assert h.flow.admission.held(("per-customer", "")) == 6


def test_room_a_task_sent_back_does_not_take_goes_to_the_next_one() -> None:
    from taskyard.core.priority import Priority

    h = Harness(concurrency("one", 1, per_key=False), concurrency("two", 1, per_key=False))
    h.load()
    h.submit("t1", ("one", "", 1))
    h.submit("t2", ("one", "", 1))
    h.submit("t3", ("one", "", 1))
    assert h.dispatch(5) == ["t1"]
    h.finish("t1")  # t2 goes back to its lane for the unit
    assert h.lanes.drop("t2", Priority.NORMAL, "add")  # and is cancelled there
    h.flow.drop("t2")
    assert h.dispatch(5) == ["t3"]

    # Sent back for "one", held at "two": the unit of "one" goes on to the next task.
    h.submit("u1", ("two", "", 1))
    h.submit("u2", ("one", "", 1), ("two", "", 1))
    h.submit("u3", ("one", "", 1))
    assert h.dispatch(5) == ["u1"]
    h.finish("t3")
    assert h.dispatch(5) == ["u3"]


def test_the_sweep_finds_room_no_task_took() -> None:
    h = Harness(concurrency("one", 1, per_key=False))
    h.load()
    h.submit("t1", ("one", "", 1))
    h.lanes.push(Ref("other", "resize", Priority.NORMAL, "default", "", (("one", "", 1),)))
    h.submit("t2", ("one", "", 1))
    assert h.dispatch(5) == ["t1"]
    seqs: list[int] = []
    taken = h.lanes.take(frozenset({"resize"}), 1, seqs)
    h.flow.admit(taken, seqs, ["x"])  # held at "one" too
    h.finish("t1")  # the gate sends back its oldest: "other", which no pool here runs
    assert h.dispatch(5) == []
    h.flow.sweep()
    assert h.dispatch(5) == ["t2"]


def test_an_older_read_of_the_limits_never_replaces_a_newer_one() -> None:
    h = Harness(concurrency("one", 100, per_key=False))
    h.load()
    h.store.limits, h.store.version = [concurrency("one", 1, per_key=False)], 6
    asyncio.run(h.flow.read_limits())
    h.store.limits, h.store.version = [concurrency("one", 100, per_key=False)], 5  # a late reply
    asyncio.run(h.flow.read_limits())
    assert h.flow.admission.limits["one"].burst == 1


def test_a_gate_sends_back_the_highest_priority_first() -> None:
    h = Harness(concurrency("one", 1, per_key=False))
    h.load()
    h.submit("run", ("one", "", 1))
    assert h.dispatch(1) == ["run"]
    for i in range(3):
        h.lanes.push(Ref(f"low{i}", "add", Priority.LOW, "default", "", (("one", "", 1),)))
    h.dispatch(5)
    h.lanes.push(Ref("crit", "add", Priority.CRITICAL, "default", "", (("one", "", 1),)))
    h.dispatch(5)
    h.finish("run")
    assert h.dispatch(5) == ["crit"]


def test_a_submission_waits_for_the_terms_first_read_of_the_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    from taskyard.core import errors
    from taskyard.scheduler import flow as flow_module

    h = Harness(concurrency("one", 1))
    monkeypatch.setattr(flow_module, "LOAD_WAIT", 0.01)
    with pytest.raises(errors.TaskyardError) as info:
        asyncio.run(h.flow.wait_loaded())  # nothing read yet: refused, sent again later
    assert info.value.code is errors.Code.UNAVAILABLE
    h.load()
    asyncio.run(h.flow.wait_loaded())  # read: no wait


def test_a_task_whose_lease_failed_does_not_wait_for_its_own_units() -> None:
    h = Harness(concurrency("per-customer", 1))
    h.load()
    h.submit("t0", ("per-customer", "a", 1), key="a")
    seqs: list[int] = []
    taken = h.lanes.take(ALL, 1, seqs)
    assert h.flow.admit(taken, seqs, ["first"]) == [0]
    h.flow.lease_failed([("t0", "first")])  # committed or not: nobody knows yet
    h.lanes.push(taken[0])  # back in its lane, as the dispatcher does
    assert h.dispatch(5) == ["t0"]  # its own unit: it is one task with one live lease
    assert h.flow.admission.held(("per-customer", "a")) == 1
    h.submit("t1", ("per-customer", "a", 1), key="a")
    assert h.dispatch(5) == []  # the key's one unit is t0's, whichever lease is real
    # The store has the second lease, not the first: the resync drops the first.
    real = flow_pb2.LeasedFlow(task_id="t0", lease_token=h.running["t0"], flow=task_record_pb2.FlowControl())
    real.flow.uses.add(limit="per-customer", key="a", units=1)
    h.store.leased = [real]
    h.clock.now += 1
    asyncio.run(h.flow.resync())
    assert h.flow.admission.held(("per-customer", "a")) == 1
    h.finish("t0")
    assert h.dispatch(5) == ["t1"]


def test_a_limit_created_again_counts_the_attempts_that_name_it() -> None:
    h = Harness(concurrency("one", 1, per_key=False))
    h.load()
    h.submit("t0", ("one", "", 1))
    assert h.dispatch(5) == ["t0"]
    for version, specs in ((2, []), (3, [concurrency("one", 1, per_key=False)])):
        h.store.limits, h.store.version = specs, version
        asyncio.run(h.flow.read_limits())
    h.submit("t1", ("one", "", 1))
    assert h.dispatch(5) == []  # t0 still runs and holds the limit's one unit
