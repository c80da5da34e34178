"""The durable event log: what WatchEvents streams (docs/events.md).

A task's events are logged by the statement that changes it (the triggers of
migrations/0016_task_events.sql: one INSERT ... SELECT over its transition
tables), so a lone write is one autocommit statement. Writers add the other
user-facing events (pools, workers, queues, schedules, limits) in the
transaction of their change (``write``: one binary COPY). ``read`` returns a
page in commit order, only below the watermark (the oldest transaction still
running), so no event can later appear before a cursor already handed out.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import asyncpg

from taskyard.bus.v1 import event_log_pb2, event_pb2
from taskyard.core import errors, event_cursor, tenants, transport
from taskyard.v1 import event_service_pb2 as pub

from .queries import bind

if TYPE_CHECKING:
    from .appliers import Db

# The kind of an event by the subject of its type ("task.succeeded" -> task).
KIND_BY_SUBJECT: Mapping[str, int] = {
    "task": pub.EVENT_KIND_TASK,
    "worker": pub.EVENT_KIND_WORKER,
    "pool": pub.EVENT_KIND_POOL,
    "queue": pub.EVENT_KIND_QUEUE,
    "schedule": pub.EVENT_KIND_SCHEDULE,
    "limit": pub.EVENT_KIND_LIMIT,
    "breaker": pub.EVENT_KIND_BREAKER,
    "tenant": pub.EVENT_KIND_TENANT,
}
# The bus events this module logs: the lifecycle of pools, workers and queues;
# not a task's state changes (the tables' triggers log those), wake-ups,
# heartbeats, log lines or cancel flags.
LOGGED_TYPES = frozenset(
    {
        "queue.paused",
        "queue.resumed",
        "pool.registered",
        "pool.stopped",
        "pool.lost",
        "worker.started",
        "worker.stopped",
        "worker.died",
    }
)
# Events per page of a read, at most (the gateway asks for less).
MAX_PAGE = 5000

# The events columns a writer fills, in the order of ``records``' tuples (the
# others: xid, id and at by their defaults).
COLUMNS = (
    "kind", "type", "task_id", "task_name", "queue", "root_id", "state", "attempt", "priority",
    "worker_id", "pool_id", "schedule_id", "schedule_name", "attributes", "tenant",
)  # fmt: skip


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Entry:
    """An event that no bus event describes (a schedule's run or change, a
    limit's or a fairness weight's change: its attributes say which)."""

    type: str
    task_id: str = ""
    task_name: str = ""
    queue: str = ""
    schedule_id: str = ""
    schedule_name: str = ""
    attributes: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # Whose it is ("" the default tenant's, and the suite's own: pools, workers).
    tenant: str = ""


def _other_record(ev: event_pb2.Event, subject: str) -> tuple[Any, ...]:
    """A queue's, a pool's or a worker's event (name: the queue; worker_id: the pool or worker)."""
    queue = pool = worker = None
    if subject == "queue":
        queue = ev.name or None
    elif subject == "pool":
        pool = ev.worker_id or None
    else:
        worker = ev.worker_id or None
        pool = transport.pool_of_worker(worker) or None if worker else None
    return (
        KIND_BY_SUBJECT[subject], ev.type, None, None, queue, None, None, None, None,
        worker, pool, None, None, None, _tenant_of_queue(subject, queue),
    )  # fmt: skip


def _tenant_of_queue(subject: str, queue: str | None) -> str:
    """A queue event's tenant: its qualified name's (core/tenants.py); the suite's own otherwise."""
    return tenants.split(queue)[0] if subject == "queue" and queue else ""


def records(events: Iterable[event_pb2.Event], entries: Iterable[Entry] = ()) -> list[tuple[Any, ...]]:
    """The rows (``COLUMNS``, None for unset) of the logged ones of ``events`` and ``entries``."""
    out: list[tuple[Any, ...]] = []
    for ev in events:
        t = ev.type
        if t not in LOGGED_TYPES:
            continue
        out.append(_other_record(ev, t.partition(".")[0]))
    for e in entries:
        out.append(
            (
                KIND_BY_SUBJECT[e.type.partition(".")[0]],
                e.type,
                e.task_id or None,
                e.task_name or None,
                e.queue or None,
                e.task_id or None,
                None,
                None,
                None,
                None,
                None,
                e.schedule_id or None,
                e.schedule_name or None,
                json.dumps(dict(e.attributes)) if e.attributes else None,
                e.tenant,
            )
        )
    return out


async def write(db: Db, events: Sequence[event_pb2.Event], entries: Sequence[Entry] = ()) -> bool:
    """Add the logged ones of ``events`` and ``entries`` in ``db``'s transaction; True if any.

    Binary COPY: about half the database's time of a multi-row INSERT from
    arrays once a drain has a hundred events, no slower for a few
    (docs/events.md); a drain without a logged event writes nothing."""
    rows = records(events, entries)
    if not rows:
        return False
    db.stats.statements += 1
    db.ran += 1
    await db.conn.copy_records_to_table("events", records=rows, columns=COLUMNS)
    return True


# read_events' columns after xid, id and at_us, in its order: Event fields of the same names.
_READ_FIELDS = (
    "kind", "type", "task_id", "task_name", "queue", "state", "attempt", "root_id", "priority",
    "worker_id", "pool_id", "schedule_id", "schedule_name", "tenant",
)  # fmt: skip


def _event(row: asyncpg.Record) -> pub.Event:
    """A row of read_events by position; only set fields go to the constructor
    (each keyword costs about as much as a set field, even an empty one)."""
    xid, id_, at_us, *values, attributes = row.values()
    kw = {f: v for f, v in zip(_READ_FIELDS, values, strict=True) if v}
    seconds, micros = divmod(at_us, 1_000_000)
    ev = pub.Event(
        cursor=event_cursor.encode(int(xid), id_), time={"seconds": seconds, "nanos": micros * 1000}, **kw
    )
    if attributes:
        ev.attributes.update(json.loads(attributes))
    return ev


def expired(after: tuple[int, int], horizon: tuple[int, int]) -> errors.TaskyardError | None:
    """The refusal of a cursor before what the store keeps, or None."""
    if after >= horizon:
        return None
    return errors.TaskyardError(
        errors.Code.OUT_OF_RANGE,
        "CURSOR_EXPIRED",
        "the events after this cursor are no longer kept (TASKYARD_EVENT_RETENTION); "
        "start again with start=WATCH_START_OLDEST or NOW",
    )


async def read(
    pool: asyncpg.Pool, req: event_log_pb2.ReadEventsRequest, *, page: int
) -> event_log_pb2.ReadEventsReply:
    """A page of final events after ``req.after`` (see ReadEventsRequest).

    The horizon and the rows are read in one REPEATABLE READ snapshot: a retention
    purge committed between two separate reads would delete rows after a cursor the
    horizon check had just let through, and the reader would skip them unawares."""
    async with pool.acquire() as conn, conn.transaction(isolation="repeatable_read", readonly=True):
        return await _read(conn, req, page=page)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Position:
    """Where a read of the log starts and how far it may go, in one snapshot."""

    # None for a reader that begins now (no cursor, not from the oldest).
    after: tuple[int, int] | None
    # Every event below (xmin, 0) is final.
    watermark: tuple[int, int]


async def position(conn: asyncpg.Connection, after_cursor: str, *, oldest: bool = False) -> Position:
    """The read's start and the watermark; refuses a malformed or expired cursor."""
    if after_cursor and not oldest:
        try:
            after = event_cursor.decode(after_cursor)
        except ValueError:
            raise errors.invalid(
                [errors.FieldViolation(field="after", description="not an event cursor")]
            ) from None
    else:
        after = event_cursor.ORIGIN
    mark = await conn.fetchrow(*bind("event_watermark"))
    assert mark is not None  # event_horizon has its one row from the migration on
    watermark = (int(mark["xmin"]), 0)
    horizon = (int(mark["horizon_xid"]), mark["horizon_id"])
    if not after_cursor and not oldest:
        return Position(after=None, watermark=watermark)
    if oldest:
        after = horizon
    elif refusal := expired(after, horizon):
        raise refusal
    return Position(after=after, watermark=watermark)


async def _read(
    conn: asyncpg.Connection, req: event_log_pb2.ReadEventsRequest, *, page: int
) -> event_log_pb2.ReadEventsReply:
    at = await position(conn, req.after, oldest=req.oldest)
    after, watermark = at.after, at.watermark
    if after is None:  # a stream that begins now
        return event_log_pb2.ReadEventsReply(cursor=event_cursor.encode(*watermark))
    limit = min(req.limit or page, MAX_PAGE)
    rows = await conn.fetch(
        *bind("read_events", after_xid=str(after[0]), after_id=after[1], xmin=str(watermark[0]), limit=limit)
    )
    reply = event_log_pb2.ReadEventsReply(events=[_event(r) for r in rows])
    if len(rows) == limit:
        reply.cursor = reply.events[-1].cursor
    else:  # everything below the watermark has been read
        reply.cursor = event_cursor.encode(*max(after, watermark))
    return reply
