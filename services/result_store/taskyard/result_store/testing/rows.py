"""The in-memory store's table of tasks (``memory.MemoryStore``).

A row is the ``TaskRecord`` the real store's ``{{record}}`` columns would read
back, plus the one column no record carries (when the lease lapses). Every
state change goes through ``move``, which refuses what the transition table
(``core.states``) refuses, as the database's trigger does; each write checks
the row against the real store's allowed source states (``transitions.py``).
"""

from __future__ import annotations

import dataclasses
import decimal
import json
from collections.abc import Iterable, Iterator
from typing import cast

from taskyard.bus.v1 import task_record_pb2
from taskyard.core import errors, states
from taskyard.core.states import TaskState
from taskyard.v1 import task_pb2

S = TaskState
LEASED = states.LEASED_STATES
DUE_STATES = frozenset({S.SCHEDULED, S.RETRYING})


@dataclasses.dataclass(slots=True)
class Row:
    """One task: its record as reads return it, and its lease's expiry (0: none)."""

    rec: task_record_pb2.TaskRecord
    lease_expires_us: int = 0

    @property
    def id(self) -> str:
        return self.rec.id

    @property
    def state(self) -> TaskState:
        return TaskState(self.rec.state)

    def holds(self, ref: task_record_pb2.AttemptRef) -> bool:
        """Fencing: ``ref`` names this row's current attempt and lease token."""
        return self.rec.attempt == ref.attempt and self.rec.lease_token == ref.lease_token

    def clear_lease(self) -> None:
        self.rec.lease_token = ""
        self.lease_expires_us = 0

    def copy(self) -> task_record_pb2.TaskRecord:
        out = task_record_pb2.TaskRecord()
        out.CopyFrom(self.rec)
        return out


def move(row: Row, target: TaskState, now_us: int) -> None:
    """Set ``row``'s state, as the database's transition trigger allows it."""
    source = row.state
    if source is not target and not states.can_transition(source, target):
        raise errors.internal(f"task {row.id}: {source.name} -> {target.name} is not an allowed transition")
    row.rec.state = wire_state(target)
    row.rec.updated_at_us = now_us


# The generated enums' stubs take no int: these say which enum an int is.
def wire_state(state: TaskState) -> task_pb2.TaskState:
    return cast(task_pb2.TaskState, int(state))


def wire_priority(value: int) -> task_pb2.Priority:
    return cast(task_pb2.Priority, value)


def cancel_step(value: int) -> task_pb2.CancelStep:
    return cast(task_pb2.CancelStep, value)


class Tasks:
    """Rows by id, with the unique indexes the inserts rely on (a non-empty
    request id; a non-empty idempotency key)."""

    def __init__(self) -> None:
        self._rows: dict[str, Row] = {}
        self._by_request: dict[str, str] = {}
        self._by_key: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[Row]:
        return iter(list(self._rows.values()))

    def get(self, task_id: str | None) -> Row | None:
        return self._rows.get(task_id) if task_id else None

    def add(self, row: Row) -> bool:
        """Insert ``row`` unless it conflicts with one already there (ON CONFLICT DO NOTHING)."""
        rec = row.rec
        if (
            rec.id in self._rows
            or (rec.request_id and rec.request_id in self._by_request)
            or (rec.idempotency_key and rec.idempotency_key in self._by_key)
        ):
            return False
        self._rows[rec.id] = row
        if rec.request_id:
            self._by_request[rec.request_id] = rec.id
        if rec.idempotency_key:
            self._by_key[rec.idempotency_key] = rec.id
        return True

    def free_expired_keys(self, keys: Iterable[str], now_us: int) -> None:
        """Free ``keys`` whose window has passed, so a new task may take them."""
        for key in keys:
            row = self.get(self._by_key.get(key))
            if row is not None and row.rec.idempotency_expires_at_us <= now_us:
                row.rec.idempotency_key = ""
                del self._by_key[key]

    def first_of(self, *, request_id: str, key: str, task_id: str) -> Row | None:
        """The task a duplicate insert met: its request id wins, then a live key, then its id."""
        for found in (
            self._by_request.get(request_id) if request_id else None,
            self._by_key.get(key) if key else None,
            task_id,
        ):
            row = self.get(found)
            if row is not None:
                return row
        return None

    def descendants(self, tops: Iterable[str]) -> dict[str, str]:
        """Unfinished descendants (by parent, transitively) of ``tops``: id -> the
        nearest of ``tops`` it descends from."""
        children: dict[str, list[str]] = {}
        for row in self._rows.values():
            if row.rec.parent_id:
                children.setdefault(row.rec.parent_id, []).append(row.id)
        found: dict[str, str] = {}
        frontier = [(child, top) for top in tops for child in children.get(top, [])]
        while frontier:
            nearer: list[tuple[str, str]] = []
            for tid, top in frontier:
                if tid not in found:
                    found[tid] = top
                    nearer.extend((child, top) for child in children.get(tid, []))
            frontier = nearer
        return {tid: top for tid, top in found.items() if not self._rows[tid].state.is_final}


# --- JSON as PostgreSQL's jsonb gives it back --------------------------------------
def jsonb_text(text: str) -> str:
    """``text`` as a jsonb column reads back: object keys by length then bytes (the
    last of a duplicate wins), ", " and ": " between items, numbers as written
    less their exponent (numeric's text), strings unescaped but for what JSON needs."""
    try:
        value = json.loads(text, parse_float=decimal.Decimal, parse_constant=_not_json)
    except (ValueError, RecursionError) as exc:
        raise errors.invalid(
            [], f"rejected by the database: invalid input syntax for type json: {exc}"
        ) from exc
    return _jsonb(value)


def _not_json(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _jsonb(value: object) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, decimal.Decimal):
        return format(value.copy_abs() if value.is_zero() else value, "f")
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_jsonb(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: (len(k.encode()), k.encode()))
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {_jsonb(value[k])}" for k in keys) + "}"
    raise TypeError(f"not a JSON value: {type(value).__name__}")
