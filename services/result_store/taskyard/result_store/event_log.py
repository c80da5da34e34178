"""The durable event log: what WatchEvents streams (docs/events.md).

Writers add the user-facing events of a change in the transaction of the
change itself (``write``: one multi-row statement); ``read`` returns a page in
commit order, only below the watermark (the oldest transaction still running),
so no event can later appear before a cursor already handed out.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import asyncpg

from taskyard.bus.v1 import event_log_pb2, event_pb2
from taskyard.core import errors, event_cursor, transport
from taskyard.v1 import event_service_pb2 as pub

from .queries import bind
from .records import EVENT_BY_STATE

if TYPE_CHECKING:
    from .committer import Db

# The kind of an event by the subject of its type ("task.succeeded" -> task).
KIND_BY_SUBJECT: Mapping[str, int] = {
    "task": pub.EVENT_KIND_TASK,
    "worker": pub.EVENT_KIND_WORKER,
    "pool": pub.EVENT_KIND_POOL,
    "queue": pub.EVENT_KIND_QUEUE,
    "schedule": pub.EVENT_KIND_SCHEDULE,
}
# The bus events kept in the log: state changes and the lifecycle of pools and
# queues; not wake-ups, heartbeats, log lines or cancel flags.
LOGGED_TYPES = frozenset({*EVENT_BY_STATE.values(), "queue.paused", "queue.resumed", "pool.registered"})
# Events per page of a read, at most (the gateway asks for less).
MAX_PAGE = 5000

_COLUMNS = (
    "kinds",
    "types",
    "task_ids",
    "task_names",
    "queues",
    "states",
    "attempts",
    "priorities",
    "worker_ids",
    "pool_ids",
    "schedule_ids",
    "schedule_names",
    "attributes",
)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Entry:
    """An event that no bus event describes (a schedule's run or change)."""

    type: str
    task_id: str = ""
    task_name: str = ""
    queue: str = ""
    schedule_id: str = ""
    schedule_name: str = ""
    attributes: Mapping[str, str] = dataclasses.field(default_factory=dict)


def _attributes(ev: event_pb2.Event) -> str:
    if ev.HasField("record") and ev.record.HasField("failure") and ev.record.failure.type:
        return json.dumps({"failure_type": ev.record.failure.type})
    return ""


def columns(events: Iterable[event_pb2.Event], entries: Iterable[Entry] = ()) -> dict[str, list[Any]] | None:
    """The insert_events arrays for the logged ones of ``events`` and ``entries``; None if none."""
    cols: dict[str, list[Any]] = {c: [] for c in _COLUMNS}
    (
        kinds,
        types,
        task_ids,
        names,
        queues,
        states,
        attempts,
        priorities,
        workers,
        pools,
        sids,
        snames,
        attrs,
    ) = cols.values()
    for ev in events:
        t = ev.type
        if t not in LOGGED_TYPES:
            continue
        subject = t.partition(".")[0]
        kinds.append(KIND_BY_SUBJECT[subject])
        types.append(t)
        task_ids.append(ev.task_id)
        queue = ev.name if subject == "queue" else ""
        names.append("" if queue else ev.name)
        queues.append(queue)
        states.append(ev.state)
        attempts.append(ev.attempt)
        priorities.append(ev.priority)
        worker = ev.worker_id
        pool = worker if subject == "pool" else transport.pool_of_worker(worker)
        workers.append("" if subject == "pool" else worker)
        pools.append(pool)
        sids.append("")
        snames.append("")
        attrs.append(_attributes(ev))
    for e in entries:
        kinds.append(KIND_BY_SUBJECT[e.type.partition(".")[0]])
        types.append(e.type)
        task_ids.append(e.task_id)
        names.append(e.task_name)
        queues.append(e.queue)
        states.append(0)
        attempts.append(0)
        priorities.append(0)
        workers.append("")
        pools.append("")
        sids.append(e.schedule_id)
        snames.append(e.schedule_name)
        attrs.append(json.dumps(dict(e.attributes)) if e.attributes else "")
    return cols if kinds else None


async def write(db: Db, events: Sequence[event_pb2.Event], entries: Sequence[Entry] = ()) -> bool:
    """Add the logged ones of ``events`` and ``entries`` in ``db``'s transaction; True if any."""
    cols = columns(events, entries)
    if cols is None:
        return False
    await db.fetch("insert_events", **cols)
    return True


def _event(row: Mapping[str, Any]) -> pub.Event:
    ev = pub.Event(
        cursor=event_cursor.encode(int(row["xid"]), row["id"]),
        kind=row["kind"],
        type=row["type"],
        task_id=row["task_id"],
        task_name=row["task_name"],
        queue=row["queue"],
        state=row["state"],
        attempt=row["attempt"],
        root_id=row["root_id"],
        priority=row["priority"],
        worker_id=row["worker_id"],
        pool_id=row["pool_id"],
        schedule_id=row["schedule_id"],
        schedule_name=row["schedule_name"],
    )
    at_us = row["at_us"]
    ev.time.seconds, micros = divmod(at_us, 1_000_000)
    ev.time.nanos = micros * 1000
    if attributes := row["attributes"]:
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
    conn: asyncpg.Connection | asyncpg.Pool, req: event_log_pb2.ReadEventsRequest, *, page: int
) -> event_log_pb2.ReadEventsReply:
    """A page of final events after ``req.after`` (see ReadEventsRequest)."""
    if req.after and not req.oldest:
        try:
            after = event_cursor.decode(req.after)
        except ValueError:
            raise errors.invalid(
                [errors.FieldViolation(field="after", description="not an event cursor")]
            ) from None
    else:
        after = event_cursor.ORIGIN
    mark = await conn.fetchrow(*bind("event_watermark"))
    assert mark is not None  # event_horizon has its one row from the migration on
    xmin = int(mark["xmin"])
    horizon = (int(mark["horizon_xid"]), mark["horizon_id"])
    watermark = (xmin, 0)
    if not req.after and not req.oldest:  # a stream that begins now
        return event_log_pb2.ReadEventsReply(cursor=event_cursor.encode(*watermark))
    if req.oldest:
        after = horizon
    elif refusal := expired(after, horizon):
        raise refusal
    limit = min(req.limit or page, MAX_PAGE)
    rows = await conn.fetch(
        *bind("read_events", after_xid=str(after[0]), after_id=after[1], xmin=str(xmin), limit=limit)
    )
    reply = event_log_pb2.ReadEventsReply(events=[_event(r) for r in rows])
    if len(rows) == limit:
        reply.cursor = reply.events[-1].cursor
    else:  # everything below the watermark has been read
        reply.cursor = event_cursor.encode(*max(after, watermark))
    return reply
