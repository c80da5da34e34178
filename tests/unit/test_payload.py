"""JSON payloads: protobuf Value <-> Python <-> compact text, NUL detection."""

from __future__ import annotations

import json

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
