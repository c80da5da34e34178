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

Which finals get a look: only those some task depends on. A task's row says so
(``has_dependents``, migration 0012): the insert of a dependent sets it on each
unfinished dependency, and every statement that makes a task final returns it
(``waited_on``; ``Db`` gathers them, ``Finals.waited_on``). A drain of finals
nothing depends on (the common case: no dependencies at all) costs no
statement, and the look needs no knowledge of the inserts of other stores.

Races, with several stores on one database: a dependency finishing while its
dependent is inserted (through another store, or this one) cannot strand it.
The insert's transaction holds each dependency before its rows go in
(``check_refs(hold=True)``, graph_hold_refs: the has_dependents update, or FOR
SHARE once set), and every final transition is an UPDATE of the row: the two
conflict, so the second waits until the first commits.
- The final first: the insert's own resolve (``resolve_inserted``, later
  statements of its transaction, so later snapshots) sees the dependency
  final and releases or cancels the new rows at once.
- The insert first: the final's UPDATE reads the row as the insert left it,
  has_dependents set, and its store resolves the dependents after its commit,
  which comes after the insert's.
So the sweep (``Resolver.run_sweep``, at start-up and then periodically) is
only what repairs a crash between a commit and its resolve step.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from taskyard.bus.v1 import event_pb2, graph_pb2, task_record_pb2
from taskyard.core import contract, errors, states
from taskyard.core.errors import FieldViolation
from taskyard.core.retry import Backoff
from taskyard.core.states import TaskState

from ..appliers import Db, Finals, Outcome, Submit
from ..records import event_for_record, record_from_row, record_queued_ref
from .insert_row import NO_DEPENDENCIES, InsertRow

log = logging.getLogger(__name__)

S = TaskState
# The sources of CANCELLED / of a release (PENDING -> QUEUED or SCHEDULED).
SRC_CASCADE = states.db_names(states.sources_of(S.CANCELLED))
SRC_RELEASE = states.db_names(
    frozenset(states.sources_of(S.QUEUED)) & frozenset(states.sources_of(S.SCHEDULED)) & {S.PENDING}
)
_QUEUED = int(S.QUEUED)
SWEEP_PAGE = 1000
# The first pause and the cap before a look for dependents that failed UNAVAILABLE
# is made again (core.retry.Backoff: jittered, so stores that lost the same write
# race do not race again in step).
RESOLVE_PAUSE = (0.1, 2.0)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Resolution:
    released: list[task_record_pb2.TaskRecord]
    cancelled: list[task_record_pb2.TaskRecord]

    @property
    def events(self) -> list[event_pb2.Event]:
        return [event_for_record(r) for r in self.cancelled + self.released]


async def check_refs(
    db: Db, rows: Sequence[InsertRow], base: Sequence[int], *, hold: bool = False
) -> list[str]:
    """Refuse records whose dependencies or parent do not exist (one statement).

    ``base[i]`` is the index of ``rows[i]`` inside its own request, for the path.
    ``hold``: inside the insert's transaction, before its rows: the parents and
    dependencies are held until COMMIT (graph_hold_refs, see the module's doc).
    Returns the dependencies that are tasks of the same batch, for
    ``hold_batch_refs`` once the rows are in."""
    wanted: set[str] = set()
    depended: set[str] = set()
    for row in rows:
        if row.parent_id:
            wanted.add(row.parent_id)
        if row.depends_on != NO_DEPENDENCIES:  # every insert passes here: most rows have none
            depended.update(row.dependencies())
    if not wanted and not depended:
        return []
    wanted |= depended
    wanted.difference_update(row.id for row in rows)  # tasks of the same batch
    in_batch = sorted(depended - wanted)
    if not wanted:
        return in_batch
    if hold:
        found = await db.fetch("graph_hold_refs", ids=sorted(wanted), dependencies=sorted(depended & wanted))
        missing = {(r["id"], row.tenant) for r in found for row in rows}
    else:
        # Each reference with the tenant that makes it: another tenant's task is
        # missing for it (a child's tenant is its parent's already: store.py).
        named = sorted(
            {
                (ref, row.tenant)
                for row in rows
                for ref in (row.parent_id, *row.dependencies())
                if ref in wanted
            }
        )
        found = await db.fetch(
            "graph_missing_refs", ids=[ref for ref, _ in named], tenants=[tenant for _, tenant in named]
        )
        missing = {(r["id"], r["tenant"]) for r in found}
    if not missing:
        return in_batch
    violations: list[FieldViolation] = []
    for row, i in zip(rows, base, strict=True):
        if (row.parent_id, row.tenant) in missing:
            violations.append(
                FieldViolation(field=f"tasks[{i}].parent_id", description=f"no task {row.parent_id}")
            )
        for j, dep in enumerate(row.dependencies()):
            if (dep, row.tenant) in missing:
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


async def hold_batch_refs(db: Db, ids: Sequence[str]) -> None:
    """``check_refs(hold=True)`` for the dependencies that are tasks of the insert's
    own batch, once its rows are in: new ones (marked has_dependents), or one
    that was there already under its id. Only when a batch holds a task and its
    dependent; one that no row has is not refused here (it never was)."""
    if ids:
        await db.fetch("graph_hold_refs", ids=ids, dependencies=ids)


async def resolve_inserted(db: Db, ids: Sequence[str]) -> Resolution:
    """New PENDING rows, checked in the insert's own transaction: a dependency
    that is already final decides at once (SUCCESS met, FAILURE/CANCELLED cancels)."""
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


# The store's own write of the resolver, never on the wire.
GRAPH_RESOLVE = contract.GRAPH_RESOLVE
# EventPublisher.publish_message: a stream's message, after the commit.
Publish = Callable[[contract.Stream[Any, Any], Any], None]


class Resolver:
    """Collects the final ids some task depends on after each commit and
    resolves their dependents in the background, one committer write at a time."""

    def __init__(self, submit: Submit, publish: Publish, *, sweep_interval: float) -> None:
        self._submit = submit
        self._publish = publish
        self.sweep_interval = sweep_interval
        self._pending: set[str] = set()
        self._wake = asyncio.Event()
        self.resolved = 0

    def finals(self, records: Sequence[task_record_pb2.TaskRecord]) -> None:
        """Called after COMMIT with the drain's final records (never blocks).

        Only those some task depends on get a look (``Finals.waited_on``; see the
        module's doc for why no dependent, of this store or another, is missed).
        Records that do not say (a plain sequence) all get one. Those this
        resolver cascaded itself get one too: a dependent another store inserted
        while the cascade waited for its dependency's row is not in the cascade."""
        waited = records.waited_on if isinstance(records, Finals) else None
        if waited is not None and not waited:
            return  # the hot path: nothing depends on any of them
        self._pending.update(r.id for r in records if waited is None or r.id in waited)
        if self._pending:
            self._wake.set()

    async def apply(self, db: Db, reqs: list[graph_pb2.ResolveRequest]) -> Outcome:
        """The KIND_GRAPH_RESOLVE applier (``apply_resolve``)."""
        return await apply_resolve(db, reqs)

    async def run(self) -> None:
        first, cap = RESOLVE_PAUSE
        backoff = Backoff(first=first, cap=cap)
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
            except errors.TaskyardError as exc:
                if exc.code is not errors.Code.UNAVAILABLE:  # the sweep repairs what is missed here
                    log.warning("resolving dependents of %d tasks failed: %s", len(batch), exc)
                    continue
                # The database is away, or the write kept losing to other stores'
                # (write_errors.CONFLICTS): the same look again, after a pause.
                log.info("resolving dependents of %d tasks: %s; again", len(batch), exc)
                self._pending.update(batch)
                await asyncio.sleep(backoff.next_delay())
                self._wake.set()
            except Exception as exc:  # the sweep repairs what is missed here
                log.warning("resolving dependents of %d tasks failed: %s", len(batch), exc)
            else:
                backoff.reset()

    async def resolve(self, req: graph_pb2.ResolveRequest) -> graph_pb2.ResolveReply:
        rows = max(1, len(req.final_ids) + len(req.candidate_ids))
        reply = await self._submit(GRAPH_RESOLVE, req, rows)
        if reply.queued:
            self._publish(contract.GRAPH_RELEASED, graph_pb2.ReleasedTasks(tasks=reply.queued))
        self.resolved += len(reply.queued) + len(reply.scheduled) + len(reply.cancelled)
        return reply

    async def sweep(self, read_page: Callable[[int | None, str, int], Awaitable[list[Any]]]) -> int:
        """Re-resolve every PENDING task, a page at a time; returns how many changed."""
        cursor: tuple[int, str] | None = None
        changed = 0
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
