"""What a worker on the public stream holds, and whose word about an attempt counts:
only the current lease's (task id, attempt number and lease token)."""

from __future__ import annotations

from taskyard.bus.v1 import task_record_pb2
from taskyard.gateway import remote_attempts
from taskyard.gateway.remote_attempts import HeldAttempts, bus_ref, public_ref
from taskyard.gateway.worker_service import hello_violations
from taskyard.worker.v1 import worker_service_pb2 as wpb


def record(task_id: str, attempt: int = 1, token: str = "t1") -> task_record_pb2.TaskRecord:
    return task_record_pb2.TaskRecord(id=task_id, attempt=attempt, lease_token=token, name="f")


def test_only_the_current_lease_is_found() -> None:
    held = HeldAttempts(slots=2)
    h = held.hold(record("a"))
    assert held.find(public_ref(h.record)) is h
    assert held.find(wpb.AttemptRef(task_id="a", attempt=1, lease_token="other")) is None
    assert held.find(wpb.AttemptRef(task_id="a", attempt=2, lease_token="t1")) is None
    assert held.free == 1


def test_an_ended_attempt_is_late_not_unknown_and_its_second_dispatch_is_dropped() -> None:
    held = HeldAttempts(slots=1)
    h = held.hold(record("a"))
    held.end(h)
    assert held.free == 1
    assert held.find(public_ref(h.record)) is None
    assert held.ended(public_ref(h.record))
    assert not held.ended(wpb.AttemptRef(task_id="a", attempt=1, lease_token="forged"))
    assert held.seen(record("a"))  # the fast path's copy and the PAIR's: one runs
    assert not held.seen(record("a", attempt=2, token="t2"))


def test_the_memory_of_ended_attempts_is_bounded() -> None:
    held = HeldAttempts(slots=1)
    for i in range(remote_attempts.ENDED_MEMORY + 10):
        held.end(held.hold(record(f"t{i}")))
    assert not held.ended(wpb.AttemptRef(task_id="t0", attempt=1, lease_token="t1"))
    last = remote_attempts.ENDED_MEMORY + 9
    assert held.ended(wpb.AttemptRef(task_id=f"t{last}", attempt=1, lease_token="t1"))


def test_the_earliest_ended_attempt_is_forgotten_first_however_late_words_name_it() -> None:
    held = HeldAttempts(slots=1)
    for i in range(remote_attempts.ENDED_MEMORY):
        held.end(held.hold(record(f"t{i}")))
    # A late outcome and a second dispatch of the earliest: neither keeps it longer.
    assert held.ended(wpb.AttemptRef(task_id="t0", attempt=1, lease_token="t1"))
    assert held.seen(record("t0"))
    held.end(held.hold(record("one more")))
    assert not held.seen(record("t0"))
    assert held.seen(record("t1")) and held.seen(record("one more"))


def test_a_broken_stream_gives_up_everything_held() -> None:
    held = HeldAttempts(slots=3)
    started = held.hold(record("a"))
    started.started_at_us = 5
    held.hold(record("b"))
    given_up = held.take_all()
    assert {h.record.id for h in given_up} == {"a", "b"}
    assert len(held) == 0
    refs = {r.task_id: r for r in (bus_ref(h, "worker-1") for h in given_up)}
    assert (refs["a"].at_us, refs["a"].worker_id) == (5, "worker-1")


def test_a_hello_is_checked_field_by_field() -> None:
    assert hello_violations(wpb.Hello(slots=4, tasks=[wpb.TaskDeclaration(name="send")])) == []
    bad = wpb.Hello(
        slots=0,
        tasks=[
            wpb.TaskDeclaration(name="send", concurrency=-1),
            wpb.TaskDeclaration(name="send", limit_key="not a name", concurrency=2),
            wpb.TaskDeclaration(name="", rate_limit="often"),
        ],
    )
    fields = {v.field for v in hello_violations(bad)}
    assert {
        "hello.slots",
        "hello.tasks[0].concurrency",
        "hello.tasks[1].name",
        "hello.tasks[1].limit_key",
        "hello.tasks[2].name",
        "hello.tasks[2].rate_limit",
    } <= fields
    assert hello_violations(wpb.Hello(slots=1)) != []  # no function at all
