"""JSON payloads: protobuf Value <-> Python <-> compact text, NUL detection."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2

from taskyard.core import payload


def _lv(text: str) -> struct_pb2.ListValue:
    return json_format.Parse(text, struct_pb2.ListValue())


def test_integral_numbers_become_ints() -> None:
    assert payload.list_to_python(_lv('[1, 2.0, 2.5, -3, 1e300, true, null, "s"]')) == [
        1,
        2,
        2.5,
        -3,
        1e300,
        True,
        None,
        "s",
    ]


def test_dumps_is_compact_utf8() -> None:
    assert payload.dumps({"a": [1, "é"]}) == '{"a":[1,"é"]}'.encode()


def test_non_finite_numbers_are_refused() -> None:
    lv = struct_pb2.ListValue()
    lv.values.add().number_value = float("nan")
    with pytest.raises(payload.PayloadError) as exc:
        payload.list_to_python(lv, "task.args")
    assert exc.value.path == "task.args[0]"


def test_nul_fast_path_and_paths() -> None:
    value = {"ok": "a\\u0000b", "k\x00": ["x", {"y": "z\x00"}]}
    text = payload.dumps(value)
    assert payload.nul_paths(value, text, "task.kwargs") == [
        ('task.kwargs["k\\u0000"]', True),
        ('task.kwargs["k\\u0000"][1].y', False),
    ]
    clean = {"s": "plain"}
    assert payload.nul_paths(clean, payload.dumps(clean)) == []
    # A literal backslash-u0000 text is not a NUL: the walk finds nothing.
    literal = ["\\u0000"]
    assert payload.nul_paths(literal, payload.dumps(literal)) == []


def test_key_paths() -> None:
    assert payload.key_path("t", "x_1") == "t.x_1"
    assert payload.key_path("t", "a b") == 't["a b"]'


def test_json_back_to_protobuf() -> None:
    v = payload.json_to_value(b'{"a":[1,null]}')
    assert v is not None and json.loads(json_format.MessageToJson(v)) == {"a": [1, None]}
    assert payload.json_to_value(b"") is None
    lv = struct_pb2.ListValue()
    payload.json_to_list(b"[]", lv)
    assert len(lv.values) == 0


def _objects(depth: int) -> str:
    """A JSON object ``depth`` levels deep (objects cost protobuf the most levels)."""
    return '{"a":' * (depth - 1) + '{"x":1}' + "}" * (depth - 1)


def test_the_nesting_limit_fits_every_public_message() -> None:
    """Every public message that carries a payload parses back at MAX_NESTING: the
    limit stays under protobuf's 100-level decoder however the value is wrapped."""
    from taskyard.v1 import schedule_pb2, schedule_service_pb2, task_pb2, task_service_pb2

    depth = payload.MAX_NESTING
    value = json_format.Parse(_objects(depth), struct_pb2.Value())
    args = json_format.Parse(f"[{_objects(depth - 1)}]", struct_pb2.ListValue())
    kwargs = json_format.Parse(f'{{"k":{_objects(depth - 1)}}}', struct_pb2.Struct())
    task = task_pb2.Task(result=value, args=args, kwargs=kwargs, context=kwargs)
    spec = task_pb2.TaskSpec(args=args, kwargs=kwargs)
    messages = [
        task_service_pb2.GetTaskResponse(task=task),
        task_service_pb2.WaitTaskResponse(task=task),
        task_service_pb2.ListTasksResponse(tasks=[task]),
        task_service_pb2.GetTaskTreeResponse(nodes=[task_service_pb2.TaskTreeNode(task=task)]),
        task_service_pb2.BatchSubmitTasksRequest(tasks=[spec]),
        schedule_service_pb2.ListSchedulesResponse(schedules=[schedule_pb2.Schedule(task=spec)]),
        schedule_service_pb2.TriggerScheduleResponse(task=task),
    ]
    for message in messages:
        type(message).FromString(message.SerializeToString())
    too_deep = json_format.Parse(_objects(depth + 1), struct_pb2.Value())
    with pytest.raises(Exception):  # noqa: B017 - protobuf's DecodeError
        task_service_pb2.GetTaskResponse.FromString(
            task_service_pb2.GetTaskResponse(task=task_pb2.Task(result=too_deep)).SerializeToString()
        )


def test_nesting_counts_containers_without_recursion() -> None:
    deep: Any = 1
    for _ in range(10_000):
        deep = [deep]
    assert payload.nesting(deep, limit=5) == 6  # stops past the limit
    assert payload.nesting({"a": [1, {"b": []}]}) == 4 and payload.nesting(7) == 0
    assert payload.nests_too_deep("[" * 5000 + "]" * 5000)
    assert not payload.nests_too_deep(json.dumps([[1]] * 100))  # many brackets, shallow
