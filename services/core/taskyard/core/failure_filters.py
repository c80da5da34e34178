"""The rules of FailureService's requests (failure_service.proto), in one place.

The gateway checks every request with them before anything reaches the store
(INVALID_ARGUMENT with the fields named, nothing sent); the store checks a
filter again with the same function (reads/dead_letters.check_filter), since any
sender of the bus may reach it: one set of rules for both. A filter field counts
as set when it is present (a time at the epoch is a condition, not "unset").
What only the store knows (an unknown group, a task that is not a dead letter,
how many a filter matches) stays with it.
"""

from __future__ import annotations

import math
import re

from google.protobuf import timestamp_pb2

from taskyard.core import validation
from taskyard.v1 import failure_service_pb2 as fs
from taskyard.v1 import task_pb2

Violation = validation.Violation

# The limits failure_service.proto states.
MAX_TASK_IDS = 1000
MAX_RATE = 10_000.0
# The least rate: one task every 100 s. Slower, a RUNNING redrive would barely
# ever step (1e-9 a second is one task in 30 years) while it holds its tasks
# from every other redrive and counts against MAX_ACTIVE_REDRIVES.
MIN_RATE = 0.01
# Redrives RUNNING or PAUSED at once, at most (the store refuses one more):
# each is a stream of re-queues against a downstream, and the leader reads them
# all every second.
MAX_ACTIVE_REDRIVES = 100
MAX_NOTE_BYTES = 1024
DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
# A page token is the store's opaque keyset cursor: bounded, printable.
MAX_PAGE_TOKEN_CHARS = 1024
# A group id and a redrive id are short, URL-safe words the store made.
MAX_ID_CHARS = 64
_WORD = re.compile(r"[A-Za-z0-9_-]{1,64}")
_TOKEN = re.compile(r"[A-Za-z0-9_=.-]*")
REASONS = frozenset(task_pb2.DeadLetterReason.values())
# google.protobuf.Timestamp's range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
MIN_TIMESTAMP_SECONDS = -62_135_596_800
MAX_TIMESTAMP_SECONDS = 253_402_300_799
FILTER_EMPTY = "FILTER_EMPTY"


def _filter_is_empty(f: fs.FailureFilter) -> bool:
    return not (
        f.group_id
        or f.queue
        or f.name
        or f.HasField("failed_after")
        or f.HasField("failed_before")
        or f.labels
        or f.task_ids
        or f.reason
    )


def _valid_timestamp(ts: timestamp_pb2.Timestamp) -> bool:
    """Within google.protobuf.Timestamp's range: a time past it (seconds=10**15) is no
    instant, and would overflow the store's microseconds."""
    return MIN_TIMESTAMP_SECONDS <= ts.seconds <= MAX_TIMESTAMP_SECONDS and 0 <= ts.nanos < 1_000_000_000


def _task_ids(out: list[Violation], path: str, raw: list[str]) -> list[str]:
    if len(raw) > MAX_TASK_IDS:
        out.append(Violation(field=path, description=f"at most {MAX_TASK_IDS} ids, got {len(raw)}"))
        return []
    canonical: list[str] = []
    for i, value in enumerate(raw):
        found = validation.canonical_uuid(value)
        if found is None:
            out.append(
                Violation(
                    field=f"{path}[{i}]",
                    description=f"must be a task id (UUID), got {validation.quote(value)}",
                )
            )
        else:
            canonical.append(found)
    return canonical


def check_filter(f: fs.FailureFilter, path: str = "filter", *, groups: bool = False) -> fs.FailureFilter:
    """``f`` checked, its task ids made canonical; INVALID_ARGUMENT otherwise. ``groups``:
    ListFailureGroups' reading (group_id and task_ids ignored, an empty filter is every group)."""
    out: list[Violation] = []
    checked = filter_violations(out, f, path, groups=groups)
    raise_if(out)
    return checked


def filter_violations(
    out: list[Violation], f: fs.FailureFilter, path: str = "filter", *, groups: bool = False
) -> fs.FailureFilter:
    """``check_filter``'s violations added to ``out``; the filter to send when there are none."""
    checked = fs.FailureFilter()
    checked.CopyFrom(f)
    if groups:
        checked.ClearField("group_id")
        checked.ClearField("task_ids")
    elif _filter_is_empty(checked) and not checked.all:
        out.append(
            Violation(
                field=path,
                description="set at least one of group_id, queue, name, failed_after, failed_before, "
                "labels, task_ids, reason; or all=true to match every dead letter",
                reason=FILTER_EMPTY,
            )
        )
    if checked.group_id and not _WORD.fullmatch(checked.group_id):
        out.append(
            Violation(
                field=f"{path}.group_id",
                description=f"must be a group id (letters, digits, '_', '-'; at most {MAX_ID_CHARS}), "
                f"got {validation.quote(checked.group_id)}",
            )
        )
    validation.check_chosen_name(out, f"{path}.queue", checked.queue, required=False)
    validation.check_text(out, f"{path}.name", checked.name, max_chars=validation.MAX_NAME_CHARS)
    if len(checked.labels) > validation.MAX_LABELS:
        out.append(Violation(field=f"{path}.labels", description=f"at most {validation.MAX_LABELS} labels"))
    else:
        for key, value in checked.labels.items():
            kp = f"{path}.labels[{validation.quote(key)}]"
            validation.check_text(out, kp, key, max_chars=validation.MAX_LABEL_KEY_CHARS, required=True)
            validation.check_text(out, kp, value, max_chars=validation.MAX_LABEL_VALUE_CHARS)
    bad_time = False
    for field in ("failed_after", "failed_before"):
        if checked.HasField(field) and not _valid_timestamp(getattr(checked, field)):
            bad_time = True
            out.append(
                Violation(
                    field=f"{path}.{field}",
                    description="not a valid timestamp (0001-01-01 to 9999-12-31 UTC, nanos 0..999999999)",
                )
            )
    if (
        not bad_time
        and checked.HasField("failed_after")
        and checked.HasField("failed_before")
        and checked.failed_after.ToNanoseconds() >= checked.failed_before.ToNanoseconds()
    ):
        out.append(Violation(field=f"{path}.failed_before", description="must be after failed_after"))
    if checked.reason not in REASONS:
        out.append(Violation(field=f"{path}.reason", description=f"unknown reason {checked.reason}"))
    ids = _task_ids(out, f"{path}.task_ids", list(checked.task_ids))
    if not groups:
        del checked.task_ids[:]
        checked.task_ids.extend(ids)
    return checked


def check_page(out: list[Violation], page_size: int, page_token: str) -> None:
    """page_size 1..1000 (0: 100); a page token as a previous page gave it."""
    if not 0 <= page_size <= MAX_PAGE_SIZE:
        out.append(
            Violation(
                field="page_size",
                description=f"must be between 1 and {MAX_PAGE_SIZE} (0: 100), got {page_size}",
            )
        )
    if len(page_token) > MAX_PAGE_TOKEN_CHARS or not _TOKEN.fullmatch(page_token):
        out.append(Violation(field="page_token", description="not a token from a previous page"))


def check_rate(out: list[Violation], rate: float) -> None:
    if not (math.isfinite(rate) and MIN_RATE <= rate <= MAX_RATE):
        out.append(
            Violation(
                field="rate",
                description=f"must be at least {MIN_RATE:g} and at most {MAX_RATE:,.0f} a second, "
                f"got {rate:g}",
            )
        )


def check_note(out: list[Violation], note: str) -> None:
    size = len(note.encode("utf-8"))
    if size > MAX_NOTE_BYTES:
        out.append(Violation(field="note", description=f"must be at most {MAX_NOTE_BYTES} bytes, got {size}"))
    elif "\x00" in note:
        validation.check_text(out, "note", note, max_chars=MAX_NOTE_BYTES)


def redrive_id(value: str, path: str = "id") -> str:
    """A redrive's id as the store gave it, else INVALID_ARGUMENT."""
    if not value:
        raise validation.invalid([Violation(field=path, description="must not be empty")])
    if not _WORD.fullmatch(value):
        raise validation.invalid(
            [Violation(field=path, description=f"must be a redrive id, got {validation.quote(value)}")]
        )
    return value


def raise_if(out: list[Violation]) -> None:
    if out:
        raise validation.invalid(out)
