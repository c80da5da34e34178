"""JSON payloads: ``google.protobuf`` Value/ListValue/Struct <-> compact JSON text.

Task arguments and results are JSON, never pickle. At the edge they are
``google.protobuf.Value``/``ListValue``/``Struct`` (so ``grpcurl -d '{...}'``
works); inside they travel as compact UTF-8 JSON text (``TaskRecord.args_json``…)
so no service re-encodes a payload it only passes on.

PostgreSQL ``jsonb`` refuses ``\\u0000`` in strings and keys, so NUL is refused
here. The check is cheap: ``json.dumps`` always escapes NUL as ``\\u0000``, so
the dumped text is searched once and the value is walked (to name the field)
only when that text appears.

Nesting is bounded (``MAX_NESTING``) for the same reason: a value is useful only
if every reader can decode it, and protobuf's decoders stop at 100 message levels
(a JSON object level costs three: Struct, map entry, Value), so an object nested
33 deep inside a ``GetTaskResponse`` no longer parses in a client.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any, TypeAlias

from google.protobuf import json_format, struct_pb2

JSON: TypeAlias = Any  # None | bool | int | float | str | list[JSON] | dict[str, JSON]

# Integral doubles up to this magnitude are exact and become Python ints, so
# ``add(1, 2)`` submitted with grpcurl reaches the worker as ints, not 1.0 and 2.0.
MAX_SAFE_INTEGER = 2**53

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_NUL_ESCAPE = "\\u0000"

# Containers nested in one value (args, kwargs, a result): ``[[1]]`` is 2 deep.
# At 32 the deepest public message that carries a value (a schedule's template,
# three messages down) stays under protobuf's 100 levels with objects.
MAX_NESTING = 32

EMPTY_LIST_JSON = b"[]"
EMPTY_OBJECT_JSON = b"{}"


class PayloadError(ValueError):
    """A value that cannot be carried as JSON; ``path`` is relative ("[1].x")."""

    def __init__(self, path: str, description: str) -> None:
        super().__init__(f"{path}: {description}" if path else description)
        self.path = path
        self.description = description


# --- protobuf -> Python --------------------------------------------------------


def value_to_python(value: struct_pb2.Value, path: str = "") -> JSON:
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return value.string_value
    if kind == "number_value":
        n = value.number_value
        if not math.isfinite(n):
            raise PayloadError(path, "numbers must be finite (JSON has no NaN or Infinity)")
        if n.is_integer() and -MAX_SAFE_INTEGER <= n <= MAX_SAFE_INTEGER:
            return int(n)
        return n
    if kind == "bool_value":
        return value.bool_value
    if kind == "struct_value":
        return struct_to_python(value.struct_value, path)
    if kind == "list_value":
        return list_to_python(value.list_value, path)
    # null_value, or no kind set at all (an empty Value): JSON null.
    return None


def list_to_python(lv: struct_pb2.ListValue, path: str = "") -> list[JSON]:
    return [value_to_python(v, f"{path}[{i}]") for i, v in enumerate(lv.values)]


def struct_to_python(st: struct_pb2.Struct, path: str = "") -> dict[str, JSON]:
    return {k: value_to_python(v, key_path(path, k)) for k, v in st.fields.items()}


def key_path(path: str, key: str) -> str:
    """``path.key`` for identifier-like keys, ``path["odd key"]`` otherwise."""
    if _IDENT.match(key):
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key)}]"


# --- Python -> JSON text -------------------------------------------------------


def dumps(value: JSON) -> bytes:
    """Compact JSON text (UTF-8). Raises PayloadError for NaN/Infinity."""
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        raise PayloadError("", str(exc)) from exc
    return text.encode("utf-8")


def find_nul(value: JSON, path: str = "") -> Iterator[tuple[str, bool]]:
    """``(path, is_key)`` of every string or object key holding NUL, depth first."""
    if isinstance(value, str):
        if "\x00" in value:
            yield path, False
    elif isinstance(value, dict):
        for k, v in value.items():
            kp = key_path(path, k)
            if "\x00" in k:
                yield kp, True
            yield from find_nul(v, kp)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from find_nul(v, f"{path}[{i}]")


def nul_paths(value: JSON, text: bytes, path: str = "") -> list[tuple[str, bool]]:
    """Fast path: only walk ``value`` when its JSON text shows an escaped NUL."""
    if _NUL_ESCAPE.encode() not in text:
        return []
    return list(find_nul(value, path))


def nesting(value: JSON, limit: int = MAX_NESTING) -> int:
    """How deep ``value``'s containers nest, counted up to ``limit + 1`` (then it stops).

    Iterative: a value too deep for Python's recursion is measured too.
    """
    deepest = 0
    stack: list[tuple[JSON, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        stack.extend((c, depth) for c in children if isinstance(c, (dict, list)))
    return deepest


def could_nest_over(text: bytes | str, limit: int = MAX_NESTING) -> bool:
    """False when ``text`` has too few brackets to nest over ``limit``: the common
    case costs two C-speed counts instead of a walk of the value."""
    if isinstance(text, str):
        return text.count("[") + text.count("{") > limit
    return text.count(b"[") + text.count(b"{") > limit


def nests_too_deep(text: bytes | str, limit: int = MAX_NESTING) -> bool:
    """Whether the JSON ``text`` nests deeper than ``limit`` (decoded only when its
    brackets allow it; too deep for Python's decoder counts as too deep)."""
    if not could_nest_over(text, limit):
        return False
    try:
        return nesting(json.loads(text), limit) > limit
    except RecursionError:
        return True


def too_deep_message(limit: int = MAX_NESTING) -> str:
    return f"lists and objects nest more than {limit} levels deep (the limit)"


# --- JSON text -> protobuf -----------------------------------------------------


def json_to_value(data: bytes) -> struct_pb2.Value | None:
    """A JSON value as ``Value``; None for empty text (no value)."""
    if not data:
        return None
    msg = struct_pb2.Value()
    json_format.Parse(data, msg)
    return msg


def json_to_list(data: bytes, out: struct_pb2.ListValue) -> None:
    if data and data != EMPTY_LIST_JSON:
        json_format.Parse(data, out)


def json_to_struct(data: bytes, out: struct_pb2.Struct) -> None:
    if data and data != EMPTY_OBJECT_JSON:
        json_format.Parse(data, out)
