"""The graph fields of a TaskSpec at the edge (core.graph via codec.build_records),
and the scheduler lanes dropping a cancelled task."""

from __future__ import annotations

import uuid

import pytest
from google.protobuf import duration_pb2

from taskyard.bus.v1 import task_record_pb2
from taskyard.core import codec, errors, graph
from taskyard.core.priority import Priority
from taskyard.scheduler.lanes import Lanes, Ref
from taskyard.v1 import task_pb2

NAMES = {"add"}
NOW_US = 1_700_000_000_000_000


def build(**fields: object) -> task_record_pb2.TaskRecord:
    spec = task_pb2.TaskSpec(name="add", **fields)  # type: ignore[arg-type]
    (rec,) = codec.build_records(
        [spec], known_names=NAMES, limits=codec.Limits(), field="task", single=True, now_us=NOW_US
    )
    return rec


def violations(**fields: object) -> dict[str, str]:
    with pytest.raises(errors.TaskyardError) as info:
        build(**fields)
    assert info.value.code == errors.Code.INVALID_ARGUMENT
    return {v.field: v.description for v in info.value.violations}


def test_dependencies_make_the_task_pending_canonical_and_deduplicated() -> None:
    a, b = uuid.uuid4(), uuid.uuid4()
    rec = build(depends_on=[str(a).upper(), str(b), str(a)])
    assert list(rec.depends_on) == [str(a), str(b)]
    assert rec.state == task_pb2.TASK_STATE_PENDING
    assert build().state == task_pb2.TASK_STATE_QUEUED


def test_bad_and_too_many_dependencies_are_field_violations() -> None:
    found = violations(depends_on=[str(uuid.uuid4()), "nope"])
    assert set(found) == {"task.depends_on[1]"}
    found = violations(depends_on=[str(uuid.uuid4()) for _ in range(graph.MAX_DEPENDENCIES + 1)])
    assert "at most 100" in found["task.depends_on"]


def test_idempotency_window_defaults_to_a_day_and_is_bounded() -> None:
    rec = build(idempotency_key="k")
    assert rec.idempotency_key == "k"
    assert rec.idempotency_expires_at_us == NOW_US + 24 * 3600 * 1_000_000
    rec = build(idempotency_key="k", idempotency_window=duration_pb2.Duration(seconds=2))
    assert rec.idempotency_expires_at_us == NOW_US + 2_000_000
    assert (
        "30 days"
        in violations(idempotency_key="k", idempotency_window=duration_pb2.Duration(seconds=31 * 86400))[
            "task.idempotency_window"
        ]
    )
    assert (
        "positive"
        in violations(idempotency_key="k", idempotency_window=duration_pb2.Duration(seconds=0))[
            "task.idempotency_window"
        ]
    )
    assert (
        "idempotency_key"
        in violations(idempotency_window=duration_pb2.Duration(seconds=5))["task.idempotency_window"]
    )
    assert "task.idempotency_key" in violations(idempotency_key="x" * 256)


def test_store_paths_are_renamed_for_a_single_submission() -> None:
    exc = errors.invalid(
        [errors.FieldViolation(field="tasks[0].depends_on[2]", description="no task x")],
        "tasks[0].depends_on[2]: no task x",
    )
    renamed = graph.single_paths(exc, "task")
    assert [v.field for v in renamed.violations] == ["task.depends_on[2]"]
    assert renamed.message == "task.depends_on[2]: no task x"


def test_lanes_drop_a_cancelled_task() -> None:
    lanes = Lanes()
    refs = [Ref(id=f"t{i}", name="add", priority=Priority.NORMAL) for i in range(3)]
    lanes.push_all(refs)
    assert lanes.drop("t1", Priority.NORMAL, "add")
    assert not lanes.drop("t1", Priority.NORMAL, "add")
    assert "t1" not in lanes and len(lanes) == 2
    assert [r.id for r in lanes.take(frozenset({"add"}), 10)] == ["t0", "t2"]
