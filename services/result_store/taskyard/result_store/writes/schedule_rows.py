"""Schedules: rows <-> ``taskyard.v1.Schedule``, checks, page tokens and the task of a run."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from google.protobuf import json_format, timestamp_pb2

from taskyard.bus.v1 import task_record_pb2
from taskyard.core import codec, errors, names, tenants, tracing, validation
from taskyard.core import schedule as timing
from taskyard.core.errors import FieldViolation
from taskyard.v1 import schedule_pb2 as pub
from taskyard.v1 import task_pb2

from ..uuids import norm_uuid

_TOKEN_TAG = "schedules:"


# --- rows <-> messages ------------------------------------------------------------
def _ts(us: int) -> timestamp_pb2.Timestamp:
    t = timestamp_pb2.Timestamp()
    t.FromMicroseconds(us)
    return t


def schedule_from_row(row: Mapping[str, Any]) -> pub.Schedule:
    s = pub.Schedule(
        id=row["id"],
        name=row["name"],
        time_zone=row["time_zone"],
        paused=row["paused"],
        overlap=row["overlap"],
        times_run=row["times_run"],
        times_skipped=row["times_skipped"],
        last_task_id=row["last_task_id"],
        declared=row["declared"],
    )
    json_format.Parse(row["task"], s.task, ignore_unknown_fields=True)
    if row["cron"]:
        s.cron = row["cron"]
    else:
        s.interval.FromMilliseconds(row["interval_ms"])
    for field, col in (
        ("next_run_at", "next_run_at_us"),
        ("last_run_at", "last_run_at_us"),
        ("created_at", "created_at_us"),
        ("updated_at", "updated_at_us"),
    ):
        if row[col] and not (field == "next_run_at" and row["paused"]):
            getattr(s, field).CopyFrom(_ts(row[col]))
    return s


def spec_of(s: pub.Schedule | Mapping[str, Any], anchor_us: int = 0) -> timing.Spec:
    if isinstance(s, pub.Schedule):
        which = s.WhichOneof("spec")
        interval = codec.duration_ms(s.interval) if which == "interval" else 0
        return timing.Spec(
            interval_ms=interval if interval is not None else -1,
            cron=s.cron if which == "cron" else "",
            time_zone=s.time_zone,
            anchor_us=anchor_us,
        )
    return timing.Spec(
        interval_ms=s["interval_ms"],
        cron=s["cron"],
        time_zone=s["time_zone"],
        anchor_us=anchor_us or s["created_at_us"],
    )


def check(s: pub.Schedule, field: str = "schedule") -> timing.Spec:
    """What the store itself insists on (the gateway checks the rest first)."""
    violations: list[FieldViolation] = []
    if not names.fits(s.name):
        violations += validation.chosen_name_violations(f"{field}.name", s.name, required=True)
    if not s.task.name:
        violations.append(FieldViolation(field=f"{field}.task.name", description="must not be empty"))
    spec = spec_of(s)
    try:
        spec.check()
    except timing.ScheduleError as exc:
        violations.append(FieldViolation(field=f"{field}.{exc.field}", description=exc.description))
    if violations:
        raise errors.invalid(violations)
    return spec


def bare_names(s: pub.Schedule, tenant: str) -> None:
    """A tenant's schedule with its name, its task's queue and limits as the tenant
    knows them (core/tenants.strip): the store keeps the name qualified and the
    template's names bare; each run's task has its names qualified (Schedules.fire).
    Another tenant's name stays qualified, and the rules refuse it."""
    s.name = tenants.strip(tenant, s.name)
    s.task.queue = tenants.strip(tenant, s.task.queue)
    for use in s.task.limits:
        use.limit = tenants.strip(tenant, use.limit)


def template_json(s: pub.Schedule) -> str:
    return json_format.MessageToJson(s.task, indent=None, sort_keys=True)


def overlap(s: pub.Schedule) -> int:
    return int(s.overlap) or pub.OVERLAP_POLICY_SKIP


def id_and_name(text: str, tenant: str = "") -> dict[str, str | None]:
    """The parameters of a lookup by id or by name (``get_schedule``, ``lock_schedule``);
    a name of ``tenant``'s, bare or qualified, as stored (qualified)."""
    return {"id": norm_uuid(text), "name": tenants.qualify(tenant, tenants.strip(tenant, text))}


def encode_token(name: str) -> str:
    return base64.urlsafe_b64encode((_TOKEN_TAG + name).encode()).decode().rstrip("=")


def decode_token(token: str) -> str:
    try:
        raw = base64.urlsafe_b64decode((token + "=" * (-len(token) % 4)).encode("ascii")).decode()
    except (binascii.Error, UnicodeError, ValueError) as exc:
        raise errors.invalid(
            [FieldViolation(field="page_token", description="not a token from a previous page")]
        ) from exc
    if not raw.startswith(_TOKEN_TAG):
        raise errors.invalid(
            [FieldViolation(field="page_token", description="not a token from a previous page")]
        )
    return raw[len(_TOKEN_TAG) :]


def already_exists(name: str) -> errors.TaskyardError:
    return errors.TaskyardError(
        errors.Code.ALREADY_EXISTS,
        "SCHEDULE_EXISTS",
        f"a schedule named {codec.quote(name)} already exists",
    )


def run_record(row: Mapping[str, Any], due_us: int, *, manual: bool) -> task_record_pb2.TaskRecord:
    """The task of one run, built from the template like a submission."""
    spec = task_pb2.TaskSpec()
    json_format.Parse(row["task"], spec, ignore_unknown_fields=True)
    (rec,) = codec.build_records(
        [spec],
        known_names=None,  # the store checks the run like any insert (Schedules._checked)
        limits=codec.Limits(max_payload_bytes=1 << 30),
        field="task",
        single=True,
        trace_headers={},
    )
    # request_id makes a replayed claim insert nothing new.
    rec.request_id = (
        f"schedule:{row['id']}:manual:{rec.id}" if manual else f"schedule:{row['id']}:{timing.iso(due_us)}"
    )
    rec.schedule_id = row["id"]
    # A run is its schedule's tenant's, whatever its template says.
    rec.tenant = row["tenant"]
    # Each run starts a trace of its own (linked to the trigger's span when a
    # person triggered it), named after its schedule.
    with tracing.sending([rec], own_traces=True, attributes={tracing.SCHEDULE: row["name"]}):
        return rec
