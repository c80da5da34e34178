"""Dead letters, their groups and redrives as the client shows them (FailureService).

A ``FailureFilter`` chooses dead letters: the conjunction of what is set. One with
nothing set is refused (INVALID_ARGUMENT, field "filter") by every call but
``failures.groups``, unless ``all=True`` says every dead letter is meant.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
from collections.abc import Mapping, Sequence
from typing import Any, Generic, TypeVar

from taskyard.v1 import failure_service_pb2 as fs
from taskyard.v1 import task_pb2

T = TypeVar("T")


def _when(msg: Any, field: str) -> datetime.datetime | None:
    return getattr(msg, field).ToDatetime(tzinfo=datetime.UTC) if msg.HasField(field) else None


class DeadLetterReason(enum.IntEnum):
    UNSPECIFIED = task_pb2.DEAD_LETTER_REASON_UNSPECIFIED
    # Its retries were spent.
    RETRIES_EXHAUSTED = task_pb2.DEAD_LETTER_REASON_RETRIES_EXHAUSTED
    # Its worker died under it as often as allowed.
    QUARANTINED = task_pb2.DEAD_LETTER_REASON_QUARANTINED
    # It failed with an error marked not retryable.
    NOT_RETRYABLE = task_pb2.DEAD_LETTER_REASON_NOT_RETRYABLE


class RedriveState(enum.IntEnum):
    UNSPECIFIED = fs.REDRIVE_STATE_UNSPECIFIED
    RUNNING = fs.REDRIVE_STATE_RUNNING
    PAUSED = fs.REDRIVE_STATE_PAUSED
    DONE = fs.REDRIVE_STATE_DONE
    CANCELLED = fs.REDRIVE_STATE_CANCELLED


class RedriveOutcome(enum.IntEnum):
    UNSPECIFIED = fs.REDRIVE_OUTCOME_UNSPECIFIED
    PENDING = fs.REDRIVE_OUTCOME_PENDING
    REQUEUED = fs.REDRIVE_OUTCOME_REQUEUED
    SKIPPED = fs.REDRIVE_OUTCOME_SKIPPED
    CANCELLED = fs.REDRIVE_OUTCOME_CANCELLED


@dataclasses.dataclass(frozen=True, kw_only=True)
class FailureFilter:
    group_id: str = ""
    queue: str = ""
    name: str = ""
    # The final failure at or after / before these instants (aware datetimes).
    failed_after: datetime.datetime | None = None
    failed_before: datetime.datetime | None = None
    labels: Mapping[str, str] = dataclasses.field(default_factory=dict)
    task_ids: Sequence[str] = ()
    reason: DeadLetterReason = DeadLetterReason.UNSPECIFIED
    all: bool = False

    def to_proto(self) -> fs.FailureFilter:
        f = fs.FailureFilter(
            group_id=self.group_id,
            queue=self.queue,
            name=self.name,
            labels=dict(self.labels),
            task_ids=list(self.task_ids),
            reason=int(self.reason),  # type: ignore[arg-type]
            all=self.all,
        )
        if self.failed_after is not None:
            f.failed_after.FromDatetime(self.failed_after)
        if self.failed_before is not None:
            f.failed_before.FromDatetime(self.failed_before)
        return f

    @classmethod
    def from_proto(cls, f: fs.FailureFilter) -> FailureFilter:
        return cls(
            group_id=f.group_id,
            queue=f.queue,
            name=f.name,
            failed_after=_when(f, "failed_after"),
            failed_before=_when(f, "failed_before"),
            labels=dict(f.labels),
            task_ids=tuple(f.task_ids),
            reason=DeadLetterReason(f.reason),
            all=f.all,
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class FailureGroup:
    group_id: str
    queue: str
    name: str
    # The fingerprint: exception type, masked message, innermost frame of the task's code.
    type: str
    message: str
    frame: str
    count: int
    first_seen: datetime.datetime | None
    last_seen: datetime.datetime | None
    sample_task_ids: tuple[str, ...]
    sample_traceback: str

    # Whose it is ("" the default tenant): an operator reading every tenant tells them apart by it.
    tenant: str = ""

    @classmethod
    def from_proto(cls, g: fs.FailureGroup) -> FailureGroup:
        return cls(
            group_id=g.group_id,
            queue=g.queue,
            name=g.name,
            type=g.type,
            message=g.message,
            frame=g.frame,
            count=g.count,
            first_seen=_when(g, "first_seen"),
            last_seen=_when(g, "last_seen"),
            sample_task_ids=tuple(g.sample_task_ids),
            sample_traceback=g.sample_traceback,
            tenant=g.tenant,
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class DeadLetter:
    task_id: str
    queue: str
    name: str
    reason: DeadLetterReason
    group_id: str
    # Its final failure.
    attempt: int
    type: str
    message: str
    traceback: str
    failed_at: datetime.datetime | None
    labels: Mapping[str, str]
    # Times it was redriven before and failed again.
    redrives: int

    # Whose it is ("" the default tenant): an operator reading every tenant tells them apart by it.
    tenant: str = ""

    @classmethod
    def from_proto(cls, d: fs.DeadLetter) -> DeadLetter:
        f = d.failure
        return cls(
            task_id=d.task_id,
            queue=d.queue,
            name=d.name,
            reason=DeadLetterReason(d.reason),
            group_id=d.group_id,
            attempt=f.attempt,
            type=f.type,
            message=f.message,
            traceback=f.traceback,
            failed_at=_when(f, "failed_at"),
            labels=dict(d.labels),
            redrives=d.redrives,
            tenant=d.tenant,
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class Redrive:
    """One redrive and its progress: its own audit record."""

    id: str
    filter: FailureFilter
    rate: float
    state: RedriveState
    created_by: str
    created_at: datetime.datetime | None
    updated_at: datetime.datetime | None
    finished_at: datetime.datetime | None
    matched: int
    requeued: int
    skipped: int
    note: str

    # Whose it is ("" the default tenant): an operator reading every tenant tells them apart by it.
    tenant: str = ""

    @classmethod
    def from_proto(cls, r: fs.Redrive) -> Redrive:
        return cls(
            id=r.id,
            filter=FailureFilter.from_proto(r.filter),
            rate=r.rate,
            state=RedriveState(r.state),
            created_by=r.created_by,
            created_at=_when(r, "created_at"),
            updated_at=_when(r, "updated_at"),
            finished_at=_when(r, "finished_at"),
            matched=r.matched,
            requeued=r.requeued,
            skipped=r.skipped,
            note=r.note,
            tenant=r.tenant,
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class RedriveItem:
    task_id: str
    outcome: RedriveOutcome
    failed_attempt: int
    new_attempt: int
    at: datetime.datetime | None
    detail: str

    @classmethod
    def from_proto(cls, i: fs.RedriveItem) -> RedriveItem:
        return cls(
            task_id=i.task_id,
            outcome=RedriveOutcome(i.outcome),
            failed_attempt=i.failed_attempt,
            new_attempt=i.new_attempt,
            at=_when(i, "at"),
            detail=i.detail,
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class RedriveStarted:
    """A redrive's answer: ``redrive`` is None for a dry run."""

    redrive: Redrive | None
    matched: int
    sample: tuple[DeadLetter, ...]

    @classmethod
    def from_proto(cls, r: fs.RedriveResponse) -> RedriveStarted:
        return cls(
            redrive=Redrive.from_proto(r.redrive) if r.HasField("redrive") else None,
            matched=r.matched,
            sample=tuple(DeadLetter.from_proto(d) for d in r.sample),
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class Page(Generic[T]):
    """One page; ``next_page_token`` is "" on the last."""

    items: tuple[T, ...]
    next_page_token: str
