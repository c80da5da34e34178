"""What the group committer and its appliers share: the connection an applier
writes through (``Db``, which counts statements in ``Stats``), what it produced
(``Outcome``), the kinds of writes (``Method``, ``Applier``, ``Alone``) and
``Submit``, the committer's door for the store's own writers."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol, TypeVar

import asyncpg
from google.protobuf.message import Message

from taskyard.bus.v1 import event_pb2, task_record_pb2
from taskyard.core import contract

from .queries import STATEMENTS


@dataclasses.dataclass
class Stats:
    """Counters exposed for tests and metrics."""

    requests: int = 0
    drains: int = 0
    transactions: int = 0
    statements: int = 0
    rows: int = 0
    refused: int = 0
    failed_drains: int = 0
    # Drains run again after losing to a concurrent transaction (CONFLICTS).
    conflicts: int = 0
    # Drains that ran without BEGIN and COMMIT (``Alone``).
    alone: int = 0


class Db:
    """A connection that runs named statements, their parameters given by
    name (``queries.py``), and counts them.

    It also gathers, in ``waited_on``, the ids of the rows a statement returned
    with a true ``waited_on`` column: the statements that make tasks final
    return ``has_dependents`` so (writes/dependencies.py)."""

    def __init__(self, conn: asyncpg.Connection, stats: Stats) -> None:
        self.conn = conn
        self.stats = stats
        self.ran = 0
        self.waited_on: set[str] = set()

    async def fetch(self, query: str, /, **values: Any) -> list[asyncpg.Record]:
        self.stats.statements += 1
        self.ran += 1
        statement = STATEMENTS[query]
        rows: list[asyncpg.Record] = await self.conn.fetch(statement.sql, *statement.args(values))
        if rows and rows[0].get(WAITED_ON) is not None:
            self.waited_on.update(r["id"] for r in rows if r[WAITED_ON])
        return rows

    async def fetchval(self, query: str, /, **values: Any) -> Any:
        self.stats.statements += 1
        self.ran += 1
        statement = STATEMENTS[query]
        return await self.conn.fetchval(statement.sql, *statement.args(values))


# The column by which a statement's rows say some task depends on them.
WAITED_ON = "waited_on"


class Finals(list[task_record_pb2.TaskRecord]):
    """The final records of one commit (``Committer``'s ``on_finals``), and the
    ids of those some task depends on: their rows said so (``Db.waited_on``)."""

    def __init__(self, records: Iterable[task_record_pb2.TaskRecord], waited_on: frozenset[str]) -> None:
        super().__init__(records)
        self.waited_on = waited_on


# A stream's message to publish after COMMIT (EventPublisher.publish_message).
Outbound = tuple[contract.Stream[Any, Any], Message]


@dataclasses.dataclass
class Outcome:
    """What one applier produced for its group: a reply per request, in order."""

    replies: list[Message]
    events: list[event_pb2.Event] = dataclasses.field(default_factory=list)
    finals: list[task_record_pb2.TaskRecord] = dataclasses.field(default_factory=list)
    # Final records this write changed without a transition (a refused late outcome
    # noted on the row): cached like finals, never counted as another finish.
    refreshed: list[task_record_pb2.TaskRecord] = dataclasses.field(default_factory=list)
    # Attempts leased by this write that their pool may start at once (fast path).
    leased: list[task_record_pb2.TaskRecord] = dataclasses.field(default_factory=list)
    # Other envelopes for the events topic after COMMIT, as (stream, message): e.g.
    # contract.GRAPH_RELEASED for attempts a pool handed back to the queue (writes/requeues.py).
    messages: list[Outbound] = dataclasses.field(default_factory=list)
    # Records of sampled tasks (core/hops.py) among the above: stamped after COMMIT.
    sampled: list[task_record_pb2.TaskRecord] = dataclasses.field(default_factory=list)
    # Records this write changed that carry a trace context, for their commit spans
    # (spans.py), from the appliers that do not reply with the records (reports):
    # filled only while tracing is on.
    traced: list[task_record_pb2.TaskRecord] = dataclasses.field(default_factory=list)


Applier = Callable[[Db, list[Any]], Awaitable[Outcome]]
# Whether an applier's writes of these requests need no transaction: each
# statement it runs for them is a guarded write that stands on its own (a retry
# of it is refused, or repeated harmlessly, by the same guards) and logs its
# events itself (a task's: the tables' triggers) or none. Reads may follow.
Alone = Callable[[list[Any]], bool]


R = TypeVar("R", bound=Message)
# A kind of write: the method of the bus contract it carries out (or one of the
# store's own, never on the wire), whose reply type ``submit`` returns.
Method = contract.Method[Any, Any]


class Submit(Protocol):
    """``Committer.submit``, as the store's own writers (the dependency resolver,
    the silent pools' sweep) are handed it."""

    async def __call__(
        self, method: contract.Method[Any, R], request: Any, rows: int = 1, request_id: str = ""
    ) -> R: ...
