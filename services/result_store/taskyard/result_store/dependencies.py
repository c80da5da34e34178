"""Dependencies: PENDING tasks are released or cancelled when what they wait on ends.

The hook: every write of the store goes through the group committer, and every
final transition it commits (reports, rescues, cancels, and this module's own
cascades) comes back through ``Committer.on_finals`` (``ResultStore._cache_finals``)
right after COMMIT. ``Resolver.finals`` collects those ids and queues ONE
``KIND_GRAPH_RESOLVE`` write for all of them (merged with whatever else the
committer drains next); ``apply_resolve`` then finds their PENDING dependents
with the GIN index on ``depends_on`` and, in two multi-row statements, cancels
the ones with a failed or cancelled dependency (transitively, in one recursive
statement) and releases the ones whose dependencies all succeeded (QUEUED, or
SCHEDULED while an ETA is ahead). Released QUEUED tasks are published to the
scheduler as a ``KIND_GRAPH_RELEASED`` message on the events topic.

Races: a dependency finishing while its dependent is inserted cannot strand it,
because the insert applier resolves its new PENDING rows in the same
transaction (``resolve_inserted``) and every store write is serialised by the
one writer loop. A crash between a commit and its resolve step is repaired by
the sweep (``Resolver.run_sweep``), which re-resolves every PENDING task at
start-up and then periodically.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from taskyard.bus.v1 import envelope_pb2, event_pb2, graph_pb2, task_record_pb2
from taskyard.core import errors, states
from taskyard.core.errors import FieldViolation
from taskyard.core.states import TaskState

from .committer import Db, Outcome
from .insert_row import NO_DEPENDENCIES, InsertRow
from .records import event_for_record, record_from_row, record_queued_ref

log = logging.getLogger(__name__)

S = TaskState
# The sources of CANCELLED / of a release (PENDING -> QUEUED or SCHEDULED).
SRC_CASCADE = states.db_names(states.sources_of(S.CANCELLED))
SRC_RELEASE = states.db_names(
    frozenset(states.sources_of(S.QUEUED)) & frozenset(states.sources_of(S.SCHEDULED)) & {S.PENDING}
)
_QUEUED = int(S.QUEUED)
SWEEP_PAGE = 1000


@dataclasses.dataclass(frozen=True, kw_only=True)
class Resolution:
    released: list[task_record_pb2.TaskRecord]
    cancelled: list[task_record_pb2.TaskRecord]

    @property
    def events(self) -> list[event_pb2.Event]:
        return [event_for_record(r) for r in self.cancelled + self.released]


async def check_refs(db: Db, rows: Sequence[InsertRow], base: Sequence[int]) -> None:
    """Refuse records whose dependencies or parent do not exist (one statement).

    ``base[i]`` is the index of ``rows[i]`` inside its own request, for the path."""
    wanted: set[str] = set()
    for row in rows:
        if row.parent_id:
            wanted.add(row.parent_id)
        if row.depends_on != NO_DEPENDENCIES:  # every insert passes here: most rows have none
            wanted.update(row.dependencies())
    wanted.difference_update(row.id for row in rows)  # earlier tasks of the same batch
    if not wanted:
        return
    missing = {r["id"] for r in await db.fetch("graph_missing_refs", ids=sorted(wanted))}
    if not missing:
        return
    violations: list[FieldViolation] = []
    for row, i in zip(rows, base, strict=True):
        if row.parent_id in missing:
            violations.append(
                FieldViolation(field=f"tasks[{i}].parent_id", description=f"no task {row.parent_id}")
            )
        for j, dep in enumerate(row.dependencies()):
            if dep in missing:
                violations.append(
                    FieldViolation(field=f"tasks[{i}].depends_on[{j}]", description=f"no task {dep}")
                )
    raise errors.invalid(violations, "; ".join(f"{v.field}: {v.description}" for v in violations[:3]))


async def resolve(db: Db, candidates: Sequence[str]) -> Resolution:
    """Cancel or release the PENDING tasks among ``candidates``."""
    if not candidates:
        return Resolution(released=[], cancelled=[])
    ids = sorted(set(candidates))
    cancelled = [record_from_row(r) for r in await db.fetch("graph_cascade", ids=ids, sources=SRC_CASCADE)]
    released = [record_from_row(r) for r in await db.fetch("graph_release", ids=ids, sources=SRC_RELEASE)]
    return Resolution(released=released, cancelled=cancelled)


# Bumped whenever PENDING rows are inserted: a resolver that saw none (its
# sweep found the table without PENDING rows) looks again after any change.
_pending_generation = [0]


async def resolve_inserted(db: Db, ids: Sequence[str]) -> Resolution:
    """New PENDING rows, checked in the insert's own transaction: a dependency
    that is already final decides at once (SUCCESS met, FAILURE/CANCELLED cancels)."""
    if ids:
        _pending_generation[0] += 1
    return await resolve(db, ids)


async def apply_resolve(db: Db, reqs: list[graph_pb2.ResolveRequest]) -> Outcome:
    """The KIND_GRAPH_RESOLVE applier (inside the group-commit transaction)."""
    finals = sorted({i for r in reqs for i in r.final_ids})
    candidates = {i for r in reqs for i in r.candidate_ids}
    if finals:
        candidates.update(r["id"] for r in await db.fetch("graph_dependents", ids=finals))
    res = await resolve(db, sorted(candidates))
    reply = graph_pb2.ResolveReply(cancelled=[r.id for r in res.cancelled])
    for rec in res.released:
        if rec.state == _QUEUED:
            reply.queued.append(record_queued_ref(rec))
        else:
            reply.scheduled.append(rec.id)
    # Every request of the drain gets the same (merged) reply; only the
    # resolver sends these, and it publishes each queued ref once per reply.
    replies: list[graph_pb2.ResolveReply] = [reply] + [graph_pb2.ResolveReply() for _ in reqs[1:]]
    return Outcome(replies=list(replies), events=res.events, finals=res.cancelled)


Submit = Callable[[int, Any, int], Awaitable[Any]]
Publish = Callable[[int, Any], None]


class Resolver:
    """Collects final ids after each commit and resolves their dependents in
    the background, one committer write at a time."""

    def __init__(self, submit: Submit, publish: Publish, *, sweep_interval: float) -> None:
        self._submit = submit
        self._publish = publish
        self.sweep_interval = sweep_interval
        self._pending: set[str] = set()
        self._wake = asyncio.Event()
        # Ids this resolver just cancelled: their dependents were cascaded already.
        self._own: set[str] = set()
        self.resolved = 0
        # The generation at which a sweep found no PENDING task at all: until the
        # next insert of one, finals need no look (the hot path stays one statement).
        self._idle_at: int | None = None

    @property
    def idle(self) -> bool:
        return self._idle_at is not None and self._idle_at == _pending_generation[0]

    def finals(self, records: Sequence[task_record_pb2.TaskRecord]) -> None:
        """Called after COMMIT with the drain's final records (never blocks)."""
        if self.idle:
            return
        for rec in records:
            if rec.id in self._own:
                self._own.discard(rec.id)
                continue
            self._pending.add(rec.id)
        if self._pending:
            self._wake.set()

    async def apply(self, db: Db, reqs: list[graph_pb2.ResolveRequest]) -> Outcome:
        """``apply_resolve``, remembering what it cascaded: those come back through
        ``finals`` right after COMMIT and need no second look (their PENDING
        dependents were cancelled by the same recursive statement)."""
        if not any(r.final_ids or r.candidate_ids for r in reqs):
            # The probe runs in the writer loop, between drains: no insert of a
            # PENDING row can be half-committed now, so "none" is the truth.
            generation = _pending_generation[0]
            found = await db.fetchval("graph_any_pending")
            self._idle_at = None if found else generation
            return Outcome(replies=[graph_pb2.ResolveReply() for _ in reqs])
        out = await apply_resolve(db, reqs)
        if len(self._own) > 100_000:  # bounded: a stale id only delays one resolve to the sweep
            self._own.clear()
        self._own.update(r.id for r in out.finals)
        return out

    async def run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            if not self._pending:
                continue
            batch, self._pending = sorted(self._pending), set()
            try:
                await self.resolve(graph_pb2.ResolveRequest(final_ids=batch))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the sweep repairs what is missed here
                log.warning("resolving dependents of %d tasks failed: %s", len(batch), exc)

    async def resolve(self, req: graph_pb2.ResolveRequest) -> graph_pb2.ResolveReply:
        rows = max(1, len(req.final_ids) + len(req.candidate_ids))
        reply: graph_pb2.ResolveReply = await self._submit(envelope_pb2.KIND_GRAPH_RESOLVE, req, rows)
        if reply.queued:
            self._publish(envelope_pb2.KIND_GRAPH_RELEASED, graph_pb2.ReleasedTasks(tasks=reply.queued))
        self.resolved += len(reply.queued) + len(reply.scheduled) + len(reply.cancelled)
        return reply

    async def sweep(self, read_page: Callable[[int | None, str, int], Awaitable[list[Any]]]) -> int:
        """Re-resolve every PENDING task, a page at a time; returns how many changed."""
        cursor: tuple[int, str] | None = None
        changed = 0
        # An empty request is the probe (see apply): is any task PENDING at all?
        await self._submit(envelope_pb2.KIND_GRAPH_RESOLVE, graph_pb2.ResolveRequest(), 1)
        while True:
            rows = await read_page(cursor[0] if cursor else None, cursor[1] if cursor else "", SWEEP_PAGE)
            if not rows:
                return changed
            reply = await self.resolve(graph_pb2.ResolveRequest(candidate_ids=[r["id"] for r in rows]))
            changed += len(reply.queued) + len(reply.scheduled) + len(reply.cancelled)
            if len(rows) < SWEEP_PAGE:
                return changed
            cursor = (rows[-1]["created_at_us"], rows[-1]["id"])

    async def run_sweep(self, read_page: Callable[[int | None, str, int], Awaitable[list[Any]]]) -> None:
        while True:
            with contextlib.suppress(Exception):
                n = await self.sweep(read_page)
                if n:
                    log.info("dependency sweep resolved %d pending tasks", n)
            await asyncio.sleep(self.sweep_interval)
