"""Checks of request input: task ids, insert records and page tokens (cursors)."""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from collections.abc import Container
from typing import Any

from taskyard.bus.v1 import store_pb2, task_record_pb2
from taskyard.core import errors
from taskyard.core import validation as rules
from taskyard.core.errors import FieldViolation
from taskyard.core.priority import Priority
from taskyard.core.states import TaskState

from .transitions import _INITIAL_VALUES

S = TaskState


# --- helpers ----------------------------------------------------------------
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def norm_uuid(value: str) -> str | None:
    """The canonical text of a UUID, or None when it is not one."""
    if _CANONICAL_UUID.fullmatch(value):  # the common case: already canonical
        return value
    try:
        return str(uuid.UUID(value))
    except (ValueError, AttributeError, TypeError):
        return None


def _bad_page_token(field: str, why: str) -> errors.TaskyardError:

    return errors.TaskyardError(
        errors.Code.INVALID_ARGUMENT,
        "INVALID_PAGE_TOKEN",
        f"{field} is not a valid page token: {why}",
        (FieldViolation(field=field, description=f"not a token returned by a previous call ({why})"),),
    )


def encode_cursor(*parts: object) -> str:
    raw = ":".join(str(p) for p in parts).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(token: str, tag: str, n: int, field: str) -> list[str]:
    try:
        padded = token + "=" * (-len(token) % 4)
        raw = base64.urlsafe_b64decode(padded.encode("ascii")).decode("ascii")
    except (binascii.Error, UnicodeError, ValueError) as exc:
        raise _bad_page_token(field, "undecodable") from exc
    parts = raw.split(":")
    if len(parts) != n + 1 or parts[0] != tag:
        raise _bad_page_token(field, "wrong shape")
    return parts[1:]


def _int_part(value: str, field: str) -> int:
    try:
        return int(value)
    except ValueError as exc:
        raise _bad_page_token(field, "not a number") from exc


def _uuid_part(value: str, field: str) -> str:
    u = norm_uuid(value)
    if u is None:
        raise _bad_page_token(field, "bad id")
    return u


# --- validation of inserts ------------------------------------------------------
def validate_insert(
    req: store_pb2.InsertTasksRequest,
    *,
    known_names: Container[str] | None,
    max_payload_bytes: int,
    now_us: int,
) -> list[tuple[Any, ...]]:
    """Check and normalize the records; returns one parameter tuple per record.

    Every record meets the rules the gateway applies (``core.validation``, with
    the record's own field names), whoever sent it; ``known_names`` are the task
    names some pool has declared (None: a caller that checked them itself).
    """
    out: list[tuple[Any, ...]] = []
    violations: list[FieldViolation] = []
    for i, r in enumerate(req.tasks):
        f = f"tasks[{i}]"
        found: list[FieldViolation] = []
        tid = norm_uuid(r.id)
        if tid is None:
            found.append(FieldViolation(field=f"{f}.id", description="must be a UUID"))
        found += rules.check_record(
            r,
            path=f,
            fields=rules.RECORD_FIELDS,
            known_names=known_names,
            max_payload_bytes=max_payload_bytes,
            now_us=now_us,
        )
        parent = norm_uuid(r.parent_id) if r.parent_id else None
        root = norm_uuid(r.root_id) if r.root_id else None
        if r.root_id and root is None:
            found.append(FieldViolation(field=f"{f}.root_id", description="must be a UUID"))
        state = r.state or int(S.QUEUED)
        if state not in _INITIAL_VALUES:
            found.append(
                FieldViolation(
                    field=f"{f}.state", description="a new task must be PENDING, QUEUED or SCHEDULED"
                )
            )
            state = int(S.QUEUED)
        if found:
            violations += found
            continue
        out.append(
            (
                tid or "",
                r.name,
                r.args_json.decode() if r.args_json else "[]",
                r.kwargs_json.decode() if r.kwargs_json else "{}",
                int(Priority.from_wire(r.priority)),
                r.queue or "default",
                r.timeout_ms,
                r.max_retries,
                r.request_id,
                parent,
                root,
                json.dumps(dict(r.labels)) if r.labels else "{}",
                TaskState(state).name,
                max(1, r.attempt),
                r.created_at_us,
                r.run_at_us,
                json.dumps(dict(r.trace_headers)) if r.trace_headers else "{}",
                # Graph slice (dependencies.py): depends_on as an array literal,
                # the idempotency key and when it expires.
                *_graph_params(r),
            )
        )
    if violations:
        raise rules.invalid(violations)
    return out


def _graph_params(r: task_record_pb2.TaskRecord) -> tuple[str, str, int]:
    deps: list[str] = []
    for raw in r.depends_on:  # every one a UUID (checked)
        dep = norm_uuid(raw)
        if dep is not None and dep not in deps:
            deps.append(dep)
    expires_us = r.idempotency_expires_at_us if r.idempotency_key else 0
    return "{" + ",".join(deps) + "}", r.idempotency_key, expires_us
