"""TaskSpec -> TaskRecord validation and TaskRecord -> Task."""

from __future__ import annotations

import json

import pytest
from google.protobuf import duration_pb2, json_format

from taskyard.bus.v1 import task_record_pb2
from taskyard.core import codec, errors, ids, payload
from taskyard.core.config import Settings
from taskyard.v1 import limit_pb2, task_pb2

KNOWN = frozenset({"add", "echo"})
LIMITS = codec.Limits.from_settings(Settings())


def spec(**fields: object) -> task_pb2.TaskSpec:
    return json_format.ParseDict(fields, task_pb2.TaskSpec())


def violations(
    *specs: task_pb2.TaskSpec, single: bool = False, limits: codec.Limits = LIMITS
) -> list[tuple[str, str]]:
    with pytest.raises(errors.TaskyardError) as exc:
        codec.build_records(
            specs, known_names=KNOWN, limits=limits, single=single, field="task" if single else "tasks"
        )
    assert exc.value.code == errors.Code.INVALID_ARGUMENT
    return [(v.field, getattr(v, "reason", "")) for v in exc.value.violations]


def test_defaults() -> None:
    (rec,) = codec.build_records(
        [spec(name="add")], known_names=KNOWN, limits=LIMITS, now_us=42, trace_headers={}
    )
    assert ids.is_uuid(rec.id) and rec.root_id == rec.id
    assert rec.state == task_pb2.TASK_STATE_QUEUED and rec.attempt == 1 and rec.created_at_us == 42
    assert rec.priority == task_pb2.PRIORITY_NORMAL and rec.queue == "default"
    # Left open: the task's @task(...) declaration, else the deployment default.
    assert rec.timeout_ms == 0 and rec.max_retries == -1
    assert rec.args_json == b"[]" and rec.kwargs_json == b"{}"


def test_explicit_fields() -> None:
    s = spec(
        name="add",
        args=[1, "x"],
        kwargs={"k": {"n": None}},
        priority="PRIORITY_LOW",
        queue="q",
        timeout="0.0015s",
        maxRetries=0,
        requestId="r",
        parentId="0190A6F4-0000-7000-8000-000000000000",
        labels={"a": "b"},
    )
    (rec,) = codec.build_records([s], known_names=KNOWN, limits=LIMITS, trace_headers={"traceparent": "t"})
    assert rec.args_json == b'[1,"x"]' and json.loads(rec.kwargs_json) == {"k": {"n": None}}
    assert rec.priority == task_pb2.PRIORITY_LOW and rec.queue == "q"
    assert rec.timeout_ms == 2  # rounded up to whole milliseconds
    assert rec.max_retries == 0 and rec.request_id == "r"
    assert rec.parent_id == "0190a6f4-0000-7000-8000-000000000000" and rec.root_id == ""
    assert dict(rec.labels) == {"a": "b"} and dict(rec.trace_headers) == {"traceparent": "t"}


def test_every_violation_is_collected() -> None:
    found = violations(
        spec(name="add", args=["ok", "a\u0000"], kwargs={"x": "\u0000"}),
        spec(name="nope", priority=9, maxRetries=101, timeout="0s"),
        spec(
            name="",
            queue="q" * 256,
            requestId="r" * 256,
            parentId="bad",
            labels={f"k{i}": "v" for i in range(65)},
        ),
        spec(name="echo", timeout="86401s", maxRetries=-1),
    )
    assert found == [
        ("tasks[0].args[1]", "NUL_CHARACTER"),
        ("tasks[0].kwargs.x", "NUL_CHARACTER"),
        ("tasks[1].name", "UNKNOWN_TASK_NAME"),
        ("tasks[1].priority", "INVALID_ARGUMENT"),
        ("tasks[1].timeout", "INVALID_ARGUMENT"),
        ("tasks[1].max_retries", "INVALID_ARGUMENT"),
        ("tasks[2].name", "INVALID_ARGUMENT"),
        ("tasks[2].queue", "INVALID_ARGUMENT"),
        ("tasks[2].request_id", "INVALID_ARGUMENT"),
        ("tasks[2].parent_id", "INVALID_ARGUMENT"),
        ("tasks[2].labels", "INVALID_ARGUMENT"),
        ("tasks[3].timeout", "INVALID_ARGUMENT"),
        ("tasks[3].max_retries", "INVALID_ARGUMENT"),
    ]


def test_single_paths_and_common_reason() -> None:
    with pytest.raises(errors.TaskyardError) as exc:
        codec.build_records([spec(name="zzz")], known_names=KNOWN, limits=LIMITS, single=True, field="task")
    assert exc.value.reason == "UNKNOWN_TASK_NAME"
    assert [v.field for v in exc.value.violations] == ["task.name"]


def test_name_rules() -> None:
    assert violations(spec(name="a" * 256), single=True) == [("task.name", "INVALID_ARGUMENT")]
    assert violations(spec(name="ad\u0000d"), single=True) == [("task.name", "NUL_CHARACTER")]


def test_payload_cap() -> None:
    small = codec.Limits(max_payload_bytes=10)
    assert violations(spec(name="add", args=["x" * 20]), single=True, limits=small) == [
        ("task.args", "PAYLOAD_TOO_LARGE")
    ]
    assert violations(spec(name="add", args=[1], kwargs={"k": "y" * 20}), single=True, limits=small) == [
        ("task.kwargs", "PAYLOAD_TOO_LARGE")
    ]


def test_batch_cap() -> None:
    assert violations(*[spec(name="add")] * 3, limits=codec.Limits(max_batch=2)) == [
        ("tasks", "BATCH_TOO_LARGE")
    ]


def test_malformed_duration() -> None:
    s = spec(name="add")
    s.timeout.CopyFrom(duration_pb2.Duration(seconds=1, nanos=-5))
    assert violations(s, single=True) == [("task.timeout", "INVALID_ARGUMENT")]


def test_record_to_task() -> None:
    rec = task_record_pb2.TaskRecord(
        id="i",
        name="add",
        args_json=b"[1,2]",
        kwargs_json=b'{"a":true}',
        priority=task_pb2.PRIORITY_HIGH,
        state=task_pb2.TASK_STATE_FAILURE,
        attempt=2,
        result_json=b"null",
        timeout_ms=1500,
        created_at_us=1_700_000_000_123_456,
        lease_token="secret",
        trace_headers={"traceparent": "x"},
    )
    rec.failure.type = "ValueError"
    task = codec.record_to_task(rec)
    args: object = json_format.MessageToDict(task.args)
    assert args == [1, 2] and json_format.MessageToDict(task.kwargs) == {"a": True}
    assert task.HasField("result") and task.result.WhichOneof("kind") == "null_value"
    assert task.state == task_pb2.TASK_STATE_FAILURE and task.priority == task_pb2.PRIORITY_HIGH
    assert task.timeout.ToMilliseconds() == 1500 and task.created_at.ToMicroseconds() == 1_700_000_000_123_456
    assert task.failure.type == "ValueError" and not task.HasField("started_at")


def test_record_to_task_names_the_trace_of_its_traceparent() -> None:
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    rec = task_record_pb2.TaskRecord(
        id="i", trace_headers={"traceparent": f"00-{trace_id}-00f067aa0ba902b7-01", "tracestate": "v=1"}
    )
    task = codec.record_to_task(rec, with_payload=False)
    assert task.trace_id == trace_id
    # Not traced, or a context no tracing backend could hold: no trace id at all.
    for headers in (
        {},
        {"traceparent": "garbage"},
        {"traceparent": f"00-{trace_id.upper()}-00f067aa0ba902b7-01"},
        {"traceparent": f"00-{'0' * 32}-00f067aa0ba902b7-01"},
        {"tracestate": "v=1"},
    ):
        assert codec.record_to_task(task_record_pb2.TaskRecord(id="i", trace_headers=headers)).trace_id == ""


def test_record_to_task_leaves_out_what_does_not_decode() -> None:
    task = codec.record_to_task(task_record_pb2.TaskRecord(id="i", args_json=b"[1,", result_json=b"5"))
    assert not task.args.values and task.result.number_value == 5
    assert set(task.omitted) == {"args"} and "does not convert" in task.omitted["args"]


def _nested(depth: int) -> bytes:
    return ("[" * depth + "1" + "]" * depth).encode()


def test_record_to_task_leaves_out_a_result_nested_too_deep() -> None:
    for depth in (payload.MAX_NESTING + 1, 200, 5000):
        task = codec.record_to_task(
            task_record_pb2.TaskRecord(id="i", args_json=b"[1]", result_json=_nested(depth))
        )
        assert not task.HasField("result") and "32 levels" in task.omitted["result"]
        assert payload.list_to_python(task.args) == [1]
        # The view parses back: a client's decoder accepts it.
        task_pb2.Task.FromString(task.SerializeToString())
    task = codec.record_to_task(task_record_pb2.TaskRecord(id="i", result_json=_nested(payload.MAX_NESTING)))
    assert task.HasField("result") and not task.omitted


def test_nested_args_are_refused_naming_the_field() -> None:
    deep = spec(name="add")
    json_format.Parse(_nested(payload.MAX_NESTING + 8), deep.args)
    kw = spec(name="add")
    json_format.Parse(
        "{" + '"a":{' * payload.MAX_NESTING + '"x":1' + "}" * (payload.MAX_NESTING + 1), kw.kwargs
    )
    assert violations(deep, kw) == [
        ("tasks[0].args", "PAYLOAD_TOO_DEEP"),
        ("tasks[1].kwargs", "PAYLOAD_TOO_DEEP"),
    ]
    ok = spec(name="add")
    json_format.Parse(_nested(payload.MAX_NESTING), ok.args)  # the args list is the outer level
    (rec,) = codec.build_records([ok], known_names=KNOWN, limits=LIMITS)
    assert payload.nesting(json.loads(rec.args_json)) == payload.MAX_NESTING


def test_enums_map_by_value() -> None:
    from taskyard.core.priority import Priority
    from taskyard.core.states import TaskState

    assert {s.name: s.value for s in TaskState} == {
        n.removeprefix("TASK_STATE_"): v for n, v in task_pb2.TaskState.items() if v
    }
    assert {p.name: p.value for p in Priority} == {
        n.removeprefix("PRIORITY_"): v for n, v in task_pb2.Priority.items() if v
    }


FLOW = codec.FlowCatalog(names={"api", "per-customer"}, bursts={"api": 10, "per-customer": 3})


def test_limits_and_fairness_key_go_into_the_record_and_back() -> None:
    s = spec(
        name="add",
        limits=[{"limit": "api", "key": "customer:42", "units": 2}, {"limit": "per-customer"}],
        fairness_key="tenant-a",
    )
    (rec,) = codec.build_records([s], known_names=KNOWN, limits=LIMITS, trace_headers={}, flow=FLOW)
    assert rec.flow.fairness_key == "tenant-a"
    assert [(u.limit, u.key, u.units) for u in rec.flow.uses] == [
        ("api", "customer:42", 2),
        ("per-customer", "", 0),
    ]
    task = codec.record_to_task(rec)
    assert [(u.limit, u.key, u.units) for u in task.limits] == [
        ("api", "customer:42", 2),
        ("per-customer", "", 1),
    ]
    assert task.fairness_key == "tenant-a"


def test_a_tasks_limits_show_the_units_admission_counts() -> None:
    """0 units (what most clients send for one) and 1 (what Java sends) are the same
    request, and read back the same."""
    seen = []
    for units in (0, 1):
        s = spec(name="add", limits=[{"limit": "api", "key": "k", "units": units}])
        (rec,) = codec.build_records([s], known_names=KNOWN, limits=LIMITS, trace_headers={}, flow=FLOW)
        assert rec.flow.uses[0].units == units  # stored as sent
        seen.append(codec.record_to_task(rec).limits[0])
    assert seen[0] == seen[1] == limit_pb2.LimitUse(limit="api", key="k", units=1)


def test_a_record_without_flow_control_is_the_same_bytes_as_before_it() -> None:
    (rec,) = codec.build_records(
        [spec(name="add", args=[1])], known_names=KNOWN, limits=LIMITS, now_us=42, trace_headers={}, flow=FLOW
    )
    assert not rec.HasField("flow")
    assert b"\xc2\x02" not in rec.SerializeToString()  # field 40, length-delimited
    task = codec.record_to_task(rec)
    assert not task.limits and not task.fairness_key


def test_limit_uses_are_checked_with_the_catalog() -> None:
    long_key = "k" * 257
    s = spec(
        name="add",
        limits=[
            {"limit": "nope"},
            {"limit": "api", "key": long_key},
            {"limit": "per-customer", "units": 4},
        ],
        fairness_key=long_key,
    )
    with pytest.raises(errors.TaskyardError) as exc:
        codec.build_records([spec(name="add"), s], known_names=KNOWN, limits=LIMITS, flow=FLOW)
    found = [(v.field, getattr(v, "reason", "")) for v in exc.value.violations]
    assert found == [
        ("tasks[1].limits[0].limit", "UNKNOWN_LIMIT"),
        ("tasks[1].limits[1].key", "INVALID_ARGUMENT"),
        ("tasks[1].limits[2].units", "INVALID_ARGUMENT"),
        ("tasks[1].fairness_key", "INVALID_ARGUMENT"),
    ]
    many = spec(name="add", limits=[{"limit": "api"}] * 9)
    assert violations(many, single=True) == [("task.limits", "INVALID_ARGUMENT")]
    # Without a catalog, only the form is checked.
    (rec,) = codec.build_records(
        [spec(name="add", limits=[{"limit": "nope"}])], known_names=KNOWN, limits=LIMITS
    )
    assert rec.flow.uses[0].limit == "nope"
