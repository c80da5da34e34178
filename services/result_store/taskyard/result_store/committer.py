"""Group commit.

Write requests are queued by kind. The writer loop drains everything waiting (up
to a cap), merges the requests of one kind into ONE multi-row statement (the
kind's ``Applier``), runs all groups of the drain in ONE transaction, commits,
then caches final records, resolves each request's future with its own reply,
and only then publishes the drain's events, in the order the drains committed.

A task's events are logged by the statement that changes it (the tasks
table's triggers), so a drain of one kind that says it needs no transaction
(``Alone``: a lone submit, lease or outcome, say) runs without BEGIN and
COMMIT: one round trip, its events committed with it or not at all. Other
drains write their other events (pools, queues: one COPY) and their recorded
request ids in their transaction.

``max_drains`` lets drains of kinds not already in flight start while one
waits for its commit, each on its own connection (as if several stores shared
the database); two drains of one kind never overlap, so one sender's writes
keep their order. The store runs one at a time (store.WRITER_DRAINS: on two
cores, drains in flight together cost PostgreSQL more CPU than they saved).

If a drain fails, its requests are retried one per transaction, so one bad
request (say invalid JSON) fails alone instead of failing its neighbours. A
drain that lost to a concurrent transaction (a deadlock, a serialization
failure, a lock not available: several stores share the database) was rolled
back whole and runs again as it is, after a short jittered pause; if it still
loses, its requests fail UNAVAILABLE, which callers retry.

A drain with a keyed insert (a request_id or an idempotency key, which another
transaction may hold uncommitted: an application's ``taskyard_submit``) waits
for a lock ``key_waits.LOCK_TIMEOUT_MS`` at most; then it runs again without
its keyed inserts, which are retried on their own, off the writer loop, until
that transaction ends or ``key_waits.BOUND`` passes (key_waits.py).
"""
# Length: _commit is one drain of the group-commit loop; its failure handling reads in the order it happens.

from __future__ import annotations

import asyncio
import collections
import dataclasses
import functools
import heapq
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

import asyncpg
from google.protobuf.message import Message

from taskyard.bus.v1 import event_pb2, task_record_pb2
from taskyard.core import contract, errors, hops, seal, tracing

from . import bus_requests, event_log, key_waits, write_errors
from . import metrics as store_metrics
from . import spans as store_spans
from .appliers import Alone, Applier, Db, Finals, Method, Outcome, R, Stats

log = logging.getLogger(__name__)


@dataclasses.dataclass
class _Pending:
    # The order of arrival, across kinds: the kind whose oldest request came
    # first is drained first.
    seq: int
    kind: int
    request: Any
    rows: int
    future: asyncio.Future[Message]
    # The envelope's message id of a request carried out once per database
    # (bus_requests.py); empty for the others.
    request_id: str = ""
    # May wait on another transaction's unique key (key_waits.py).
    keyed: bool = False


# Each applied group of a drain, with its outcome.
_Results = list[tuple[list[_Pending], Outcome]]


class Committer:
    def __init__(
        self,
        pool: asyncpg.Pool,
        appliers: Sequence[tuple[Method, Applier]],
        *,
        on_events: Callable[[list[event_pb2.Event]], Awaitable[None]],
        on_finals: Callable[[list[task_record_pb2.TaskRecord]], None],
        on_leased: Callable[[list[task_record_pb2.TaskRecord]], None] | None = None,
        on_message: Callable[[contract.Stream[Any, Any], Message], None] | None = None,
        alone: Mapping[Method, Alone] | None = None,
        max_rows: int = 20_000,
        max_requests: int = 2_000,
        max_drains: int = 1,
    ) -> None:
        self._pool = pool
        self._appliers = {method.kind: applier for method, applier in appliers}
        self._order = [method.kind for method, _ in appliers]
        self._alone = {method.kind: test for method, test in (alone or {}).items()}
        self._on_events = on_events
        self._on_finals = on_finals
        self._on_leased = on_leased
        self._on_message = on_message
        self.max_rows = max_rows
        self.max_requests = max_requests
        # Drains in flight at once (each holds a connection of ``pool``): at least one.
        self.max_drains = max(1, max_drains)
        # Waiting requests by kind, each in order of arrival.
        self._queues: dict[int, collections.deque[_Pending]] = {
            method.kind: collections.deque() for method, _ in appliers
        }
        self._seq = 0
        self._waiting = 0
        # Kinds with a drain in flight, and those drains.
        self._busy: set[int] = set()
        self._flying: set[asyncio.Task[None]] = set()
        # Done once the last drain to commit has published its events (``_publish``).
        self._published: asyncio.Future[None] | None = None
        self._wake = asyncio.Event()
        self.stats = Stats()
        # Writer connections plan again (DISCARD PLANS) when the generation moves
        # on (``replan``); backend pid -> the generation its plans belong to.
        self._plans = 0
        self._planned: dict[int, int] = {}
        # Keyed inserts set aside while another transaction holds their key.
        self.key_waits: key_waits.KeyWaits[_Pending] = key_waits.KeyWaits(self._retry_keyed)

    def replan(self) -> None:
        """Have every writer connection plan its statements again before its next drain."""
        self._plans += 1

    async def submit(
        self,
        method: contract.Method[Any, R],
        request: Any,
        rows: int = 1,
        request_id: str = "",
        *,
        keyed: bool = False,
    ) -> R:
        """Queue one write of ``method``'s kind; returns its reply after COMMIT. With
        ``request_id`` (a bus request's message id) the write is carried out once per
        database: a request whose id is on record already raises ``seal.Replayed``
        (bus_requests.py). ``keyed``: it writes a unique key another transaction may
        hold (key_waits.py)."""
        kind = method.kind
        if kind not in self._appliers:
            raise errors.internal(f"no applier for {method}")
        fut: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._seq += 1
        self._queues[kind].append(_Pending(self._seq, kind, request, max(1, rows), fut, request_id, keyed))
        self._waiting += 1
        self.stats.requests += 1
        self._wake.set()
        # The applier registered for the method's kind replies with its reply type.
        return cast(R, await fut)

    @property
    def waiting(self) -> int:
        """Requests queued and not yet taken into a drain."""
        return self._waiting

    async def run(self) -> None:
        """The writer loop; runs until cancelled."""
        side = asyncio.get_running_loop().create_task(self.key_waits.run(), name="store-key-waits")
        try:
            while True:
                drain = self._take() if len(self._flying) < self.max_drains else []
                if not drain:
                    self._wake.clear()
                    await self._wake.wait()
                    continue
                kinds = frozenset(p.kind for p in drain)
                self._busy |= kinds
                flight = asyncio.get_running_loop().create_task(self._commit(drain, retry_alone=True))
                self._flying.add(flight)
                flight.add_done_callback(functools.partial(self._landed, kinds))
        finally:
            side.cancel()
            await asyncio.gather(side, return_exceptions=True)
            for flight in list(self._flying):
                flight.cancel()
            if self._flying:
                await asyncio.gather(*self._flying, return_exceptions=True)
            for queue in self._queues.values():
                for p in queue:
                    if not p.future.done():
                        p.future.set_exception(errors.unavailable("result-store is stopping"))
                queue.clear()
            self._waiting = 0

    def _landed(self, kinds: frozenset[int], flight: asyncio.Task[None]) -> None:
        """A drain is done: its kinds may be drained again."""
        self._flying.discard(flight)
        self._busy -= kinds
        if not flight.cancelled() and (exc := flight.exception()) is not None:
            log.error("a drain ended with an unexpected error: %r", exc)
        self._wake.set()

    def _take(self) -> list[_Pending]:
        """The next drain: the waiting requests of every kind with no drain in
        flight, in their order of arrival, up to the caps."""
        heads = [(q[0].seq, kind) for kind, q in self._queues.items() if q and kind not in self._busy]
        heapq.heapify(heads)
        drain: list[_Pending] = []
        rows = 0
        while heads and len(drain) < self.max_requests:
            _, kind = heads[0]
            queue = self._queues[kind]
            nxt = queue[0]
            if drain and rows + nxt.rows > self.max_rows:
                break
            drain.append(queue.popleft())
            rows += nxt.rows
            if queue:
                heapq.heapreplace(heads, (queue[0].seq, kind))
            else:
                heapq.heappop(heads)
        self._waiting -= len(drain)
        return drain

    async def _apply(self, db: Db, drain: list[_Pending], results: _Results) -> None:
        """Each kind's group of the drain through its applier, in the order the
        kinds were registered (inserts before the leases and reports of a drain)."""
        groups: dict[int, list[_Pending]] = {}
        for p in drain:
            groups.setdefault(p.kind, []).append(p)
        for kind in self._order:
            group = groups.get(kind)
            if not group:
                continue
            out = await self._appliers[kind](db, [p.request for p in group])
            if len(out.replies) != len(group):
                raise errors.internal(f"applier for kind {kind} returned a wrong reply count")
            results.append((group, out))

    async def _run(self, drain: list[_Pending], results: _Results, lock_ms: int) -> Db:
        """One run of a drain's appliers, in one transaction unless it needs none.
        Raises ``write_errors.Lost`` when a concurrent transaction won (``CONFLICTS``);
        with ``lock_ms`` (a drain with keyed inserts), ``key_waits.KeyBusy`` when a
        lock was not had within that many milliseconds."""
        async with self._pool.acquire() as conn:
            await self._plan(conn)
            db = Db(conn, self.stats)
            alone = not lock_ms and self._stands_alone(drain)
            try:
                if alone:
                    self.stats.alone += 1
                    # One guarded statement that stands on its own: durable when it
                    # returns, its task events (the triggers') with it, and a retry of
                    # it refused by the same guards. No BEGIN and COMMIT round trips.
                    await self._apply(db, drain, results)
                    # Such a kind logs no event of its own; one it did would still be
                    # logged (after its change, which is durable already).
                    await event_log.write(db, [ev for _, out in results for ev in out.events])
                else:
                    async with conn.transaction():
                        if lock_ms:
                            await conn.execute(key_waits.lock_timeout(lock_ms))
                        await self._apply(db, await self._record(db, drain), results)
                        # The drain's other user-facing events, committed with it (event_log.py).
                        await event_log.write(db, [ev for _, out in results for ev in out.events])
                        await self._keep_replies(db, results)
            except asyncpg.PostgresError as exc:
                if lock_ms and exc.sqlstate == key_waits.LOCK_NOT_AVAILABLE:
                    raise key_waits.KeyBusy(str(exc)) from exc
                if write_errors.is_conflict(exc):
                    # Rolled back whole, unless a statement before the one that lost
                    # stood alone (and committed): then a second run would repeat it.
                    raise write_errors.Lost(exc, rerun=not alone or db.ran == 1) from exc
                raise
        return db

    def _stands_alone(self, drain: list[_Pending]) -> bool:
        """Whether the drain runs without a transaction: its requests are of one kind,
        which says they need none (``Alone``), and none has a request id to record
        with its effect."""
        kind = drain[0].kind
        alone = self._alone.get(kind)
        if alone is None or any(p.kind != kind or p.request_id for p in drain):
            return False
        return alone([p.request for p in drain])

    async def _record(self, db: Db, drain: list[_Pending]) -> list[_Pending]:
        """Record the drain's request ids in its transaction (one statement, only for a
        drain that has some); the drain without the requests carried out before, whose
        futures get ``seal.Replayed`` with the reply kept for them, and without a second
        copy of one in this drain, whose future follows the first's."""
        named = [p for p in drain if p.request_id and not p.future.done()]
        if not named:
            return drain
        db.stats.statements += 1
        db.ran += 1
        fresh = await bus_requests.record(db.conn, [p.request_id for p in named], [p.kind for p in named])
        firsts: dict[str, _Pending] = {}
        repeats: list[_Pending] = []
        for p in named:
            first = firsts.get(p.request_id)
            if first is not None:
                first.future.add_done_callback(functools.partial(_follow, p.future))
            elif p.request_id in fresh:
                firsts[p.request_id] = p
            else:
                repeats.append(p)
        if repeats:
            db.stats.statements += 1
            db.ran += 1
            kept = await bus_requests.replies(db.conn, [p.request_id for p in repeats])
            for p in repeats:
                p.future.set_exception(seal.Replayed(p.kind, reply=kept.get(p.request_id)))
        run = {id(p) for p in firsts.values()}
        return [p for p in drain if not p.future.done() and (not p.request_id or id(p) in run)]

    async def _keep_replies(self, db: Db, results: _Results) -> None:
        """Keep the replies of the drain's recorded requests with their ids, in its
        transaction (bus_requests.py): a repeat of one is answered with its reply."""
        kept = [
            (p.request_id, reply)
            for group, out in results
            for p, reply in zip(group, out.replies, strict=True)
            if p.request_id
        ]
        if kept:
            db.stats.statements += 1
            db.ran += 1
            await bus_requests.keep_replies(db.conn, [i for i, _ in kept], [r for _, r in kept])

    async def _runs(self, drain: list[_Pending], results: _Results, lock_ms: int) -> Db:
        """``_run``, again after a short pause each time it lost to a concurrent
        transaction (``write_errors.CONFLICT_RUNS`` times at most); then the conflict is raised."""
        again = 0
        while True:
            try:
                return await self._run(drain, results, lock_ms)
            except write_errors.Lost as lost:
                if not lost.rerun or again == write_errors.CONFLICT_RUNS:
                    raise lost.error from None
                again += 1
                self.stats.conflicts += 1
                log.info("a drain of %d requests lost to a concurrent transaction: %s", len(drain), lost)
                results.clear()
                await asyncio.sleep(write_errors.conflict_pause(again))

    async def _commit(
        self, drain: list[_Pending], *, retry_alone: bool, lock_ms: int = key_waits.LOCK_TIMEOUT_MS
    ) -> None:
        """One drain: run, commit, reply, publish. ``lock_ms``: how long a drain with
        keyed inserts waits for a lock before it sets them aside (key_waits.py)."""
        drain = [p for p in drain if not p.future.done()]
        if not drain:
            return
        if not any(p.keyed for p in drain):
            lock_ms = 0
        results: _Results = []
        self.stats.drains += 1
        started = time.perf_counter()
        traced = tracing.enabled()
        started_ns = time.time_ns() if traced else 0
        try:
            db = await self._runs(drain, results, lock_ms)
            committed_ns = time.time_ns() if traced else 0
            self.stats.transactions += 1
        except asyncio.CancelledError:
            for p in drain:
                if not p.future.done():
                    p.future.set_exception(errors.unavailable("result-store is stopping"))
            raise
        except key_waits.KeyBusy as exc:
            # Rolled back whole: the keyed inserts wait on their own, the rest go on now.
            self.stats.failed_drains += 1
            log.info(
                "a drain of %d requests waited on a held key (%s); keyed inserts set aside", len(drain), exc
            )
            for p in drain:
                if p.keyed:
                    self.key_waits.set_aside(p)
            await self._commit([p for p in drain if not p.keyed], retry_alone=retry_alone)
            return
        except Exception as exc:
            self.stats.failed_drains += 1
            # A conflict is no request's fault: no use retrying them one by one.
            failed_alone = write_errors.is_connection_error(exc) or write_errors.is_conflict(exc)
            if retry_alone and len(drain) > 1 and not failed_alone:
                log.warning("group commit of %d requests failed (%s); retrying one by one", len(drain), exc)
                try:
                    for p in drain:
                        await self._commit([p], retry_alone=False)
                except asyncio.CancelledError:
                    for p in drain:  # stopping midway: the rest are not left waiting
                        if not p.future.done():
                            p.future.set_exception(errors.unavailable("result-store is stopping"))
                    raise
                return
            err = write_errors.to_taskyard_error(exc)  # a conflict: UNAVAILABLE, which its callers retry
            if err.code.name == "INTERNAL":
                log.error("write failed: %r", exc)
            for p in drain:
                if not p.future.done():
                    p.future.set_exception(err)
            return
        events: list[event_pb2.Event] = []
        finals: list[task_record_pb2.TaskRecord] = []
        refreshed: list[task_record_pb2.TaskRecord] = []
        leased: list[task_record_pb2.TaskRecord] = []
        for _, out in results:
            finals.extend(out.finals)
            refreshed.extend(out.refreshed)
            events.extend(out.events)
            leased.extend(out.leased)
            if out.sampled:
                hops.stamp(out.sampled, "store.committed")
        if leased and self._on_leased is not None:
            self._on_leased(leased)  # before the replies: the pool is the one waiting
        if self._on_message is not None:
            for _, out in results:
                for stream, message in out.messages:
                    self._on_message(stream, message)
        if finals or refreshed:
            self._on_finals(Finals(finals + refreshed, frozenset(db.waited_on)))
        rows = 0
        for group, out in results:
            rows += sum(p.rows for p in group)
            for p, reply in zip(group, out.replies, strict=True):
                if not p.future.done():
                    p.future.set_result(reply)
        self.stats.rows += rows
        elapsed = time.perf_counter() - started
        if events:
            await self._publish(events)
        try:
            store_metrics.committed(rows, elapsed, (r for _, out in results for r in out.replies), finals)
        except Exception:  # counting must never disturb what has been committed
            log.exception("counting a commit for the metrics failed")
        if traced:
            try:
                store_spans.committed(
                    [(group[0].kind, [p.request for p in group], out) for group, out in results],
                    started_ns=started_ns,
                    committed_ns=committed_ns,
                    rows=rows,
                )
            except Exception:  # nor must tracing it
                log.exception("recording a commit's spans failed")

    async def _publish(self, events: list[event_pb2.Event]) -> None:
        """Publish a drain's events after those of every drain that committed before
        it: drains in flight together must not reorder one task's events."""
        before, self._published = self._published, asyncio.get_running_loop().create_future()
        mine = self._published
        try:
            if before is not None and not before.done():
                await asyncio.wait([before])
            await self._on_events(events)
        except Exception:  # events are wake-ups; never fail a committed write
            log.exception("publishing events failed")
        finally:
            mine.set_result(None)

    async def _plan(self, conn: asyncpg.Connection) -> None:
        """DISCARD PLANS on a connection whose plans are older than ``replan``."""
        pid = conn.get_server_pid()
        made = self._planned.get(pid)
        if made == self._plans:
            return
        if made is not None:  # a new connection has no plans yet
            await conn.execute("DISCARD PLANS")
        self._planned[pid] = self._plans

    async def _retry_keyed(self, p: _Pending) -> None:
        """One more try of a set-aside keyed insert, alone (key_waits.py)."""
        await self._commit([p], retry_alone=False, lock_ms=key_waits.RETRY_LOCK_TIMEOUT_MS)


def _follow(copy: asyncio.Future[Message], first: asyncio.Future[Message]) -> None:
    """Settle ``copy``, a second copy of a request in the drain of its first, as ``first``."""
    if copy.done():
        return
    if first.cancelled():
        copy.cancel()
    elif (exc := first.exception()) is not None:
        copy.set_exception(exc)
    else:
        copy.set_result(first.result())
