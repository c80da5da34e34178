"""The rules a task record must meet to be stored, in one implementation.

The gateway checks every submission with them (``codec.build_records``, field
paths as the client wrote them: ``task.timeout``, ``tasks[2].args[1]``) and the
result-store checks every record it inserts with them (``validate_insert``,
bus field paths: ``tasks[0].timeout_ms``), whoever sent it: a gateway, a
scheduler lane, a task submitting children, a schedule's run. So nothing is
stored that the edge would refuse, and a row that is stored can be read back.

Only what a record cannot express stays with the conversion from a
``TaskSpec`` (a malformed duration or timestamp, eta and countdown together);
what the store alone knows (ids, initial states) stays with the store.
"""
# Length: check_record reads each field of a record once, in order, for every task submitted (the hot path).

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Container, Mapping, Sequence

from taskyard.bus.v1 import task_record_pb2
from taskyard.core import errors, ids, names, payload
from taskyard.v1 import task_pb2

# Limits that are not deployment settings (README, "Limits").
MAX_NAME_CHARS = 255
MAX_QUEUE_CHARS = names.MAX_CHARS  # and its charset: core/names.py
MAX_REQUEST_ID_CHARS = 255
MAX_LABELS = 64
MAX_LABEL_KEY_CHARS = 63
MAX_LABEL_VALUE_CHARS = 255
MAX_TIMEOUT_MS = 24 * 3600 * 1000
MAX_RETRIES_LIMIT = 100
MAX_DEPENDENCIES = 100
MAX_IDEMPOTENCY_KEY_CHARS = 255
MAX_IDEMPOTENCY_WINDOW_MS = 30 * 24 * 3600 * 1000
MAX_ETA_DAYS = 365
MAX_AHEAD_US = MAX_ETA_DAYS * 24 * 3600 * 1_000_000
# W3C traceparent/tracestate, as the gateway stores them with the task. gRPC caps a
# call's metadata at 8 KiB, so what a client sends never reaches this.
MAX_TRACE_HEADERS = 8
MAX_TRACE_HEADER_CHARS = 8192
# How much of a bad value a violation description may quote.
QUOTE_CHARS = 64

# Reasons (ErrorInfo.reason / BadRequest.FieldViolation.reason).
INVALID_ARGUMENT = "INVALID_ARGUMENT"
UNKNOWN_TASK_NAME = "UNKNOWN_TASK_NAME"
PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
PAYLOAD_TOO_DEEP = "PAYLOAD_TOO_DEEP"
NUL_CHARACTER = "NUL_CHARACTER"

PRIORITIES = frozenset(v for v in task_pb2.Priority.values() if v != 0)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Violation(errors.FieldViolation):
    """A field violation with a machine-readable reason."""

    reason: str = INVALID_ARGUMENT


@dataclasses.dataclass(frozen=True, kw_only=True)
class _MapLimits:
    """The bounds of a string map field: its size, then each key and value."""

    entries: int
    too_many: str  # the violation past ``entries``; ``{count}`` is the size found
    key_chars: int
    value_chars: int


_LABELS = _MapLimits(
    entries=MAX_LABELS,
    too_many=f"at most {MAX_LABELS} labels, got {{count}}",
    key_chars=MAX_LABEL_KEY_CHARS,
    value_chars=MAX_LABEL_VALUE_CHARS,
)
_TRACE_HEADERS = _MapLimits(
    entries=MAX_TRACE_HEADERS,
    too_many=f"at most {MAX_TRACE_HEADERS} trace headers",
    key_chars=MAX_TRACE_HEADER_CHARS,
    value_chars=MAX_TRACE_HEADER_CHARS,
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Fields:
    """What a caller calls the record fields that differ from the public ones."""

    args: str
    kwargs: str
    timeout: str
    run_at: str
    idempotency_window: str


# A TaskSpec's names (the gateway); ``run_at`` is "countdown" for a spec that set one.
SPEC_FIELDS = Fields(
    args="args", kwargs="kwargs", timeout="timeout", run_at="eta", idempotency_window="idempotency_window"
)
# A TaskRecord's own names (the store).
RECORD_FIELDS = Fields(
    args="args_json",
    kwargs="kwargs_json",
    timeout="timeout_ms",
    run_at="run_at_us",
    idempotency_window="idempotency_expires_at_us",
)

# The order violations of one task are reported in (a spec's field order).
_ORDER = {
    name: i
    for i, name in enumerate(
        (
            "name",
            "args",
            "args_json",
            "kwargs",
            "kwargs_json",
            "priority",
            "queue",
            "timeout",
            "timeout_ms",
            "max_retries",
            "request_id",
            "parent_id",
            "labels",
            "eta",
            "countdown",
            "run_at_us",
            "depends_on",
            "idempotency_key",
            "idempotency_window",
            "idempotency_expires_at_us",
            "trace_headers",
            "limits",
            "fairness_key",
            "flow",
        )
    )
}

_UNPARSED = object()


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


# One decoder for every record (json.loads with options builds one per call).
_DECODER = json.JSONDecoder(parse_constant=_no_constant)


def quote(value: str) -> str:
    """A bounded, printable rendering of user input for an error message."""
    if len(value) > QUOTE_CHARS:
        value = value[:QUOTE_CHARS] + "…"
    return repr(value)


def canonical_uuid(value: str) -> str | None:
    """The canonical lowercase hyphenated form, or None when ``value`` is not a UUID."""
    if len(value) > 64 or not ids.is_uuid(value):
        return None
    return str(uuid.UUID(value))


def check_text(
    out: list[Violation], path: str, value: str, *, max_chars: int, required: bool = False
) -> None:
    if not value:
        if required:
            out.append(Violation(field=path, description="must not be empty"))
        return
    if len(value) > max_chars:
        out.append(
            Violation(field=path, description=f"must be at most {max_chars} characters, got {len(value)}")
        )
    if "\x00" in value:
        out.append(Violation(field=path, description="must not contain NUL (\\u0000)", reason=NUL_CHARACTER))


def check_name(out: list[Violation], path: str, name: str, known_names: Container[str] | None) -> None:
    """Required, bounded, and declared by some worker pool (``known_names``; None: not checked)."""
    if not name:
        out.append(Violation(field=path, description="must not be empty"))
    elif len(name) > MAX_NAME_CHARS or "\x00" in name:
        check_text(out, path, name, max_chars=MAX_NAME_CHARS)
    elif known_names is not None and name not in known_names:
        out.append(
            Violation(
                field=path,
                description=f"no worker pool serves a task named {quote(name)}",
                reason=UNKNOWN_TASK_NAME,
            )
        )


def chosen_name_violations(path: str, name: str, *, required: bool) -> list[Violation]:
    """A queue's or a schedule's name (core/names.py): empty passes unless ``required``."""
    found = names.problem(name, required=required)
    return [] if found is None else [Violation(field=path, description=found[0], reason=found[1])]


def check_chosen_name(out: list[Violation], path: str, name: str, *, required: bool) -> None:
    out.extend(chosen_name_violations(path, name, required=required))


def chosen_name(name: str, path: str, *, required: bool) -> str:
    """``name`` if it is a valid queue or schedule name, else INVALID_ARGUMENT (one violation)."""
    out = chosen_name_violations(path, name, required=required)
    if out:
        raise invalid(out)
    return name


def check_value(
    out: list[Violation], path: str, text: bytes, *, value: payload.JSON = _UNPARSED, kind: type | None = None
) -> None:
    """One JSON payload: decodable (as ``kind``, list or dict, when given), no NUL,
    nested at most ``payload.MAX_NESTING`` deep. ``value`` is ``text`` already
    decoded, when the caller has it (the gateway built ``text`` from it)."""
    if value is _UNPARSED:
        try:
            value = _DECODER.decode(text.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            out.append(Violation(field=path, description="must be UTF-8 JSON text"))
            return
    if kind is not None and not isinstance(value, kind):
        what = "a list" if kind is list else "an object"
        out.append(Violation(field=path, description=f"must be {what} in JSON"))
        return
    for bad, is_key in payload.nul_paths(value, text, path):
        what = "key" if is_key else "string"
        out.append(
            Violation(field=bad, description=f"{what} must not contain NUL (\\u0000)", reason=NUL_CHARACTER)
        )
    if payload.could_nest_over(text) and payload.nesting(value) > payload.MAX_NESTING:
        out.append(Violation(field=path, description=payload.too_deep_message(), reason=PAYLOAD_TOO_DEEP))


def check_payloads(
    out: list[Violation],
    rec: task_record_pb2.TaskRecord,
    *,
    path: str,
    fields: Fields,
    values: tuple[payload.JSON, payload.JSON] | None = None,
) -> None:
    """The rules of ``rec``'s args and kwargs JSON (``check_value``), their size apart."""
    args, kwargs = values if values is not None else (_UNPARSED, _UNPARSED)
    args_json, kwargs_json = rec.args_json, rec.kwargs_json
    if args_json and args_json != payload.EMPTY_LIST_JSON:
        check_value(out, f"{path}.{fields.args}", args_json, value=args, kind=list)
    if kwargs_json and kwargs_json != payload.EMPTY_OBJECT_JSON:
        check_value(out, f"{path}.{fields.kwargs}", kwargs_json, value=kwargs, kind=dict)


def check_record(
    rec: task_record_pb2.TaskRecord,
    *,
    path: str,
    fields: Fields,
    known_names: Container[str] | None,
    max_payload_bytes: int,
    now_us: int,
    values: tuple[payload.JSON, payload.JSON] | None = None,
) -> list[Violation]:
    """Every violation of ``rec`` (field paths under ``path``), in field order.

    ``values`` are args and kwargs already decoded (the gateway), else the JSON
    text is decoded here (the store). ``now_us`` stands for the acceptance time
    when the record has no ``created_at_us``.
    """
    out: list[Violation] = []
    # A field's path is built only when a rule could fail (most records pass them all).
    name = rec.name
    if (
        not name
        or len(name) > MAX_NAME_CHARS
        or "\x00" in name
        or (known_names is not None and name not in known_names)
    ):
        check_name(out, f"{path}.name", name, known_names)

    check_payloads(out, rec, path=path, fields=fields, values=values)
    args_json, kwargs_json = rec.args_json, rec.kwargs_json
    size = len(args_json) + len(kwargs_json)
    if size > max_payload_bytes:
        big = fields.args if len(args_json) >= len(kwargs_json) else fields.kwargs
        out.append(
            Violation(
                field=f"{path}.{big}",
                description=(
                    f"payload is {size} bytes of JSON (args and kwargs together), "
                    f"over the {max_payload_bytes}-byte limit"
                ),
                reason=PAYLOAD_TOO_LARGE,
            )
        )

    priority = rec.priority
    if priority and priority not in PRIORITIES:
        out.append(Violation(field=f"{path}.priority", description=f"unknown priority {int(priority)}"))
    queue = rec.queue
    if queue and not names.fits(queue):
        check_chosen_name(out, f"{path}.queue", queue, required=False)
    if rec.timeout_ms < 0:  # 0: the task's own timeout, else the deployment default
        out.append(Violation(field=f"{path}.{fields.timeout}", description="must be positive"))
    elif rec.timeout_ms > MAX_TIMEOUT_MS:
        out.append(Violation(field=f"{path}.{fields.timeout}", description="must be at most 24h"))
    if not -1 <= rec.max_retries <= MAX_RETRIES_LIMIT:  # -1: the task's own budget, else the default
        out.append(
            Violation(
                field=f"{path}.max_retries",
                description=f"must be between 0 and {MAX_RETRIES_LIMIT}, got {rec.max_retries}",
            )
        )
    request_id = rec.request_id
    if len(request_id) > MAX_REQUEST_ID_CHARS or "\x00" in request_id:
        check_text(out, f"{path}.request_id", request_id, max_chars=MAX_REQUEST_ID_CHARS)
    if rec.parent_id and canonical_uuid(rec.parent_id) is None:
        out.append(
            Violation(field=f"{path}.parent_id", description=f"must be a UUID, got {quote(rec.parent_id)}")
        )
    if rec.labels:
        _check_map(out, f"{path}.labels", rec.labels, _LABELS)

    accepted_us = rec.created_at_us or now_us
    if rec.run_at_us and rec.run_at_us - accepted_us > MAX_AHEAD_US:
        ahead = f"must be at most {MAX_ETA_DAYS} days ahead"
        out.append(Violation(field=f"{path}.{fields.run_at}", description=ahead))
    if rec.depends_on:
        _check_dependencies(out, f"{path}.depends_on", rec.depends_on)
    if rec.idempotency_key:
        check_text(out, f"{path}.idempotency_key", rec.idempotency_key, max_chars=MAX_IDEMPOTENCY_KEY_CHARS)
        window_us = rec.idempotency_expires_at_us - accepted_us
        if window_us <= 0:
            out.append(Violation(field=f"{path}.{fields.idempotency_window}", description="must be positive"))
        elif window_us > MAX_IDEMPOTENCY_WINDOW_MS * 1000:
            out.append(
                Violation(field=f"{path}.{fields.idempotency_window}", description="must be at most 30 days")
            )
    if rec.trace_headers:
        _check_map(out, f"{path}.trace_headers", rec.trace_headers, _TRACE_HEADERS)
    return out


def _check_map(out: list[Violation], path: str, entries: Mapping[str, str], limits: _MapLimits) -> None:
    if len(entries) > limits.entries:
        out.append(Violation(field=path, description=limits.too_many.format(count=len(entries))))
        return
    key_chars, value_chars = limits.key_chars, limits.value_chars
    for key, value in entries.items():
        if _fits(key, key_chars) and _fits(value, value_chars):
            continue  # the common case: no path to build
        kp = payload.key_path(path, key)
        check_text(out, kp, key, max_chars=key_chars)
        check_text(out, kp, value, max_chars=value_chars)


def _check_dependencies(out: list[Violation], path: str, deps: Sequence[str]) -> None:
    if len(deps) > MAX_DEPENDENCIES:
        out.append(
            Violation(field=path, description=f"at most {MAX_DEPENDENCIES} dependencies, got {len(deps)}")
        )
        return
    for j, raw in enumerate(deps):
        if canonical_uuid(raw) is None:
            out.append(
                Violation(field=f"{path}[{j}]", description=f"must be a task id (UUID), got {quote(raw)}")
            )


def _fits(value: str, max_chars: int) -> bool:
    return len(value) <= max_chars and "\x00" not in value


def in_field_order(violations: list[Violation], path: str) -> list[Violation]:
    """``violations`` of the task at ``path`` sorted by field (stable within a field)."""
    start = len(path) + 1

    def rank(v: Violation) -> int:
        rest = v.field[start:]
        stem = rest.split(".", 1)[0].split("[", 1)[0]
        return _ORDER.get(stem, len(_ORDER))

    return sorted(violations, key=rank)


def invalid(violations: Sequence[errors.FieldViolation], message: str = "") -> errors.TaskyardError:
    """INVALID_ARGUMENT; the reason is the violations' common reason, if they share one."""
    reasons = {getattr(v, "reason", INVALID_ARGUMENT) for v in violations}
    reason = reasons.pop() if len(reasons) == 1 else INVALID_ARGUMENT
    if not message:
        shown = "; ".join(f"{v.field}: {v.description}" for v in violations[:3])
        more = len(violations) - 3
        message = shown + (f" (and {more} more)" if more > 0 else "")
    return errors.TaskyardError(errors.Code.INVALID_ARGUMENT, reason, message, tuple(violations))
