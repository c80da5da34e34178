"""The result-store: the only holder of a PostgreSQL connection.

``ResultStore`` owns the asyncpg pool, the group committer, the result cache,
the event publisher and the NOTIFY listener, and exposes one handler per
``KIND_STORE_*`` kind (``routes()``) for ``core.rpc.Responder``.
"""
# Length: one facade class; each of its ~30 bus handlers hands off to a module beside it in a line or two.

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Iterable, Sequence
from typing import Any, TypeVar

import asyncpg
from google.protobuf.message import Message

from taskyard.bus.v1 import (
    counters_pb2,
    envelope_pb2,
    event_log_pb2,
    graph_pb2,
    lanes_pb2,
    leases_pb2,
    pools_pb2,
    task_record_pb2,
    tasks_pb2,
)
from taskyard.core import contract, errors, hops, roles, rpc
from taskyard.core.background import Background
from taskyard.core.clock import Clock, SystemClock
from taskyard.core.config import StoreSettings

from . import bus_requests, counters, event_log, key_waits, leadership
from .appliers import Stats
from .arrivals import Arrivals
from .cache import ResultCache
from .committer import Committer
from .database_errors import OUTAGE
from .events import EventPublisher
from .failure_service import FailureRoutes
from .failure_service import appliers as failure_appliers
from .listener import NotifyListener
from .migrate import migrate
from .names import DeclaredNames
from .operations import Operations
from .operations import appliers as ops_appliers
from .queries import bind
from .readiness import Readiness
from .reads import event_summary, explain, failures, trees
from .reads.tasks import Reads
from .silent_pools import LOSE_POOLS, SilentPools
from .tenants import Tenants
from .uuids import norm_uuid
from .writes import (
    cancels,
    dependencies,
    heartbeats,
    inserts,
    leases,
    logs,
    promotions,
    reconciliation,
    refunds,
    reports,
)
from .writes.insert_checks import validate_insert
from .writes.insert_row import InsertRow
from .writes.limits import Limits
from .writes.schedules import Schedules

log = logging.getLogger(__name__)

K = envelope_pb2
C = contract
M = TypeVar("M", bound=Message)

# Session settings of every store connection: the NOTIFY trigger skips the
# store's own inserts (it publishes its own events after commit).
STORE_SERVER_SETTINGS = {"taskyard.origin": "store", "application_name": "taskyard-result-store"}
# The committer's own connections plan each prepared statement once. Its
# statements are batched by design (unnest of parameter arrays, ids by
# primary key, partial indexes named by literal states), so a generic plan is
# as good as a custom one, while re-planning the insert on every execution
# (PostgreSQL keeps custom plans for it: a custom plan knows the array holds
# one row) cost 0.46 ms of its 0.7 ms. Reads keep custom plans.
#
# No writer statement waits for a lock longer than WRITER_LOCK_TIMEOUT_MS: a
# session outside the store that keeps a task's row locked (an application's
# transaction that reused an expired idempotency key, a maintenance session)
# would otherwise hold up every write behind the drain that meets it. A drain
# that times out lost to a concurrent transaction (write_errors.CONFLICTS): it
# runs again, then fails UNAVAILABLE, so the writer waits (1 + CONFLICT_RUNS)
# times this at most. Keyed inserts wait less and go on aside (key_waits.py).
WRITER_LOCK_TIMEOUT_MS = 500
WRITER_SERVER_SETTINGS = {
    **STORE_SERVER_SETTINGS,
    "plan_cache_mode": "force_generic_plan",
    "lock_timeout": str(WRITER_LOCK_TIMEOUT_MS),
}

# A generic plan is made at a statement's first execution and kept: made on a
# nearly empty tasks table (a fresh database), it scans the table whole, and
# goes on doing so as the table grows, until something invalidates it (an
# ANALYZE of tasks, which autovacuum runs only within its nap time, and never
# where it is off). So the store reads the table's size every
# PLAN_CHECK_SECONDS (no I/O: the size of its file) and, each time it has
# doubled since the writer's plans were made, has every writer connection run
# DISCARD PLANS before its next drain: its statements stay prepared, and their
# next execution plans for the table as it is then (the planner reads the
# current number of pages, statistics or not). An ANALYZE would do it too, for
# every session, but costs PostgreSQL 0.1-0.3 s a time on a table of 20,000+ rows.
PLAN_CHECK_SECONDS = 1.0
# Drains the writer has in flight at once (committer.py). One: with three, on two
# cores, PostgreSQL spent 2-3x the CPU a task (92-134 against 201-210 µs in
# bench/store_writes, interleaved) for less throughput: overlapping writers
# contend in the database more than the overlap saves.
WRITER_DRAINS = 1
# Below this many pages a whole scan costs about what the index probes would.
PLAN_MIN_PAGES = 32
TASKS_PAGES = "SELECT pg_relation_size(to_regclass('tasks')) / current_setting('block_size')::int"


def plans_outgrown(planned_pages: int, pages: int) -> bool:
    """Whether plans made when tasks had ``planned_pages`` should be made again
    now that it has ``pages``."""
    return pages >= PLAN_MIN_PAGES and pages >= 2 * planned_pages


async def _keep_session(conn: asyncpg.Connection) -> None:
    """Skip asyncpg's default reset on release (a full round trip on every use).

    The store's pool connections hold no session state between uses: no LISTEN
    (the listener has its own connection), no temporary tables, no advisory
    locks (migrations use their own connection), and every transaction is closed
    by its context manager. The session settings they do have are wanted.
    """


class ResultStore:
    def __init__(
        self,
        settings: StoreSettings,
        pool: asyncpg.Pool,
        *,
        publisher: EventPublisher,
        cache: ResultCache,
        writer_pool: asyncpg.Pool | None = None,
    ) -> None:
        self.settings = settings
        self.pool = pool
        self.writer_pool = writer_pool
        self.publisher = publisher
        self.cache = cache
        # Resolves the dependents of every committed final transition.
        self.resolver = dependencies.Resolver(
            self._submit,
            publisher.publish_message,
            sweep_interval=settings.graph_sweep_interval,
        )
        self.committer = Committer(
            writer_pool or pool,
            [
                (C.STORE_INSERT, inserts.apply_insert),
                (C.STORE_LEASE, leases.apply_lease),
                (C.STORE_REPORT, reports.apply_report),
                (C.STORE_RENEW, leases.apply_renew),
                (C.STORE_CANCEL, cancels.apply_cancel),
                (C.STORE_RESCUE, leases.apply_rescue),
                (C.STORE_PROMOTE_DUE, promotions.apply_promote),
                (C.STORE_HEARTBEAT, heartbeats.apply_heartbeat),
                (LOSE_POOLS, heartbeats.apply_lose_pools),
                *ops_appliers(settings),  # logs, queue operations
                (dependencies.GRAPH_RESOLVE, self.resolver.apply),
                # scheduler restart: leases no answering pool holds (writes/reconciliation.py).
                (C.STORE_RECONCILE, reconciliation.apply_reconcile),
                *failure_appliers(),  # a redrive's steps (failure_service.py)
                # a circuit breaker's refunds of failed attempts (writes/refunds.py).
                (C.STORE_BREAKER_REFUNDS, refunds.apply_refunds),
            ],
            on_events=publisher.publish,
            on_finals=self._cache_finals,
            on_leased=publisher.publish_leased,
            on_message=publisher.publish_message,
            alone={
                C.STORE_INSERT: inserts.alone,
                C.STORE_LEASE: leases.lease_alone,
                C.STORE_REPORT: reports.alone,
                C.STORE_RENEW: leases.one_request,
                C.STORE_LOGS: logs.alone,
            },
            max_rows=max(1000, settings.max_batch * 20),
            max_drains=WRITER_DRAINS,
        )
        # A keyed insert set aside is answered before its sender's request times out.
        self.committer.key_waits.bound = min(key_waits.BOUND, settings.request_timeout / 2)
        self.reads = Reads(pool, cache, self.committer.stats)
        # Task names ever declared: the name rule of every insert (writes/insert_checks.py).
        self.names = DeclaredNames(pool, self.committer.stats)
        # Logs, queues, servers, retention (see operations.py).
        self.ops = Operations(self, cache.clock)
        self.silent_pools = SilentPools(
            self._submit,
            lost_after=settings.pool_lost_after,
            clock=cache.clock,
        )
        # Periodic schedules: their own routes, see writes/schedules.py.
        self.schedules = Schedules(
            pool,
            publisher,
            self.committer.stats,
            names=self.names,
            max_payload_bytes=settings.max_payload_bytes,
        )
        # Flow control's limits, weights and leased attempts: their own routes, see writes/limits.py.
        self.limits = Limits(pool, publisher, self.committer.stats)
        # Tenants: their rows, version and changes (tenants.py).
        self.tenants = Tenants(pool, publisher, self.committer.stats)
        # Dead letters, their groups and purge, and redrives (failure_service.py).
        self.failures = FailureRoutes(self)
        # Whether it commits, and its clock agrees with the database's (readiness.py).
        self.readiness = Readiness(
            writer_pool or pool,
            clock=cache.clock,
            tolerance=settings.bus_replay_window,
        )
        self.listener: NotifyListener | None = None
        # Tasks inserted outside the store, read on its notifications (arrivals.py).
        self.arrivals: Arrivals | None = None
        # Its loops: one that ends while the store runs ends the process (core.background).
        self.background = Background("result-store")
        # The size of tasks (pages) the writer's plans were last made for.
        self._planned_pages = 0

    @property
    def stats(self) -> Stats:
        return self.committer.stats

    # --- lifecycle -------------------------------------------------------------
    @classmethod
    async def open(
        cls,
        settings: StoreSettings,
        *,
        clock: Clock | None = None,
        publish: bool = True,
        run_migrations: bool = True,
    ) -> ResultStore:
        if not settings.database_url:
            raise ValueError("TASKYARD_DATABASE_URL (or DATABASE_URL) is not set")
        if run_migrations:
            conn = await asyncpg.connect(settings.database_url)
            try:
                await migrate(
                    conn,
                    notify_channel=settings.notify_channel,
                    max_payload_bytes=settings.max_payload_bytes,
                )
            finally:
                await conn.close()
        pool = await asyncpg.create_pool(
            settings.database_url,
            min_size=min(2, settings.db_pool_size),
            max_size=settings.db_pool_size,
            server_settings=STORE_SERVER_SETTINGS,
            reset=_keep_session,
        )
        assert pool is not None
        writer_pool: asyncpg.Pool | None = None
        try:
            # A connection for each drain in flight, one for a reconnect while an
            # old one is being closed, and one for the keyed inserts set aside while
            # another transaction holds their key (key_waits.py).
            writer_pool = await asyncpg.create_pool(
                settings.database_url,
                min_size=1,
                max_size=WRITER_DRAINS + 2,
                server_settings=WRITER_SERVER_SETTINGS,
                reset=_keep_session,
            )
            assert writer_pool is not None
            publisher = EventPublisher(
                settings.events_listen_address if publish else None,
                max_message_bytes=settings.max_message_bytes,
                pools_address=settings.pool_stream_listen_address,
                scheduler_address=settings.scheduler_stream_listen_address,
            )
        except BaseException:
            # Nothing half-open stays behind (a caller in the same process may retry).
            if writer_pool is not None:
                await writer_pool.close()
            await pool.close()
            raise
        cache = ResultCache(clock=clock or SystemClock(), ttl_seconds=settings.result_ttl)
        return cls(settings, pool, publisher=publisher, cache=cache, writer_pool=writer_pool)

    def start(self, *, listen: bool | None = None, sweep: bool = True) -> None:
        """Start the writer loop, the NOTIFY listener and the cache sweeper."""
        start = self.background.start
        start(self.committer.run(), name="store-committer")
        start(self._keep_plans(), name="store-plans")
        start(self.resolver.run(), name="store-graph-resolver")
        start(self.resolver.run_sweep(self._pending_page), name="store-graph-sweep")
        if self.settings.use_notify if listen is None else listen:
            self.arrivals = Arrivals(self.pool, self.publisher)
            self.listener = NotifyListener(
                self.settings.database_url,
                self.settings.notify_channel,
                self.arrivals.notified,
                on_connected=self.arrivals.connected,
            )
            start(self.arrivals.run(), name="store-arrivals")
            start(self.listener.run(), name="store-listener")
        if sweep:
            start(self.cache.run_sweeper(), name="store-cache-sweeper")
            if self.settings.purge_interval > 0:  # the hourly retention purge
                start(self.ops.purger.run(self.settings.purge_interval), name="store-retention")
            start(self.silent_pools.run(), name="store-silent-pools")

    async def reachable(self) -> None:
        """Returns once the database commits and the clocks agree (readiness.py): the
        readiness probe's check, on the writer's pool (the readers' pool may be taken
        by a burst of reads)."""
        await self.readiness.check()

    async def close(self) -> None:
        await self.background.close()
        self.publisher.close()
        if self.writer_pool is not None:
            await self.writer_pool.close()
        await self.pool.close()

    async def __aenter__(self) -> ResultStore:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def check_plans(self) -> bool:
        """Have the writer plan its statements again if tasks has outgrown its
        plans (``plans_outgrown``); True when so."""
        pages = await self.pool.fetchval(TASKS_PAGES)
        if pages is None or not plans_outgrown(self._planned_pages, pages):
            return False
        self._planned_pages = pages
        self.committer.replan()
        log.debug("tasks has %d pages: the writer plans its statements again", pages)
        return True

    async def _keep_plans(self) -> None:
        while True:
            try:
                await self.check_plans()
            except OUTAGE as exc:  # OSError: timeouts too
                log.debug("reading the size of tasks failed: %s", exc)
            except Exception:  # anything else must not end the checks silently
                log.exception("reading the size of tasks failed")
            await asyncio.sleep(PLAN_CHECK_SECONDS)

    def _cache_finals(self, records: list[task_record_pb2.TaskRecord]) -> None:
        for rec in records:
            self.cache.put(rec)
        self.resolver.finals(records)

    async def _task_tree(self, req: graph_pb2.TaskTreeRequest) -> graph_pb2.TaskTreeReply:
        return await self._read(trees.task_tree(self.pool, self.stats, req))

    async def _pending_page(self, after_us: int | None, after_id: str, limit: int) -> list[Any]:
        page = bind("graph_pending_page", after_us=after_us, after_id=after_id or None, limit=limit)
        rows: list[Any] = await self._read(self.pool.fetch(*page))
        return rows

    # --- handlers -----------------------------------------------------------------
    def _lease_ms(self, value: int) -> int:
        return value if value > 0 else int(self.settings.lease_seconds * 1000)

    async def insert(self, req: tasks_pb2.InsertTasksRequest) -> tasks_pb2.InsertTasksReply:
        if len(req.tasks) > self.settings.max_batch * 10:
            raise errors.invalid(
                [FieldViolationish("tasks", f"at most {self.settings.max_batch * 10} tasks per request")]
            )
        hops.stamp(req.tasks, "store.received")
        if any(r.parent_id and not r.tenant for r in req.tasks):
            # A child with no tenant (a pool sends the children its task code
            # submits so, or an operator) is its parent's tenant's.
            await self._read(self._inherit_tenants(req))
        # The gateway's rules, whoever sent the records (a lane, a task's children, a forger).
        await self._read(self._ensure_names(r.name for r in req.tasks))
        rows = validate_insert(
            req,
            known_names=self.names,
            max_payload_bytes=self.settings.max_payload_bytes,
            now_us=time.time_ns() // 1000,
            # A scheduler relays only JSON a gateway or the scheduler itself checked
            # (scheduler/payloads.py): not decoded a second time.
            payloads_checked=rpc.sender_role() == roles.SCHEDULER,
        )
        if not rows:
            return tasks_pb2.InsertTasksReply()
        # Missing dependencies / parent refused here, on the pool, so a bad request
        # fails alone instead of failing its whole drain in the writer (which
        # would then retry every request of the drain one by one). The applier
        # checks again as a backstop (a row purged in between).
        if any(row.parent_id or row.has_dependencies for row in rows):
            await self._check_refs(rows)
        # A request_id or an idempotency key may be held by another transaction (an
        # application's taskyard_submit): such an insert must not hold up the writer.
        keyed = any(row.request_id or row.idempotency_key for row in rows)
        return await self.committer.submit(C.STORE_INSERT, (req, rows), len(rows), keyed=keyed)

    async def _inherit_tenants(self, req: tasks_pb2.InsertTasksRequest) -> tasks_pb2.InsertTasksRequest:
        """Each child record without a tenant given its parent's: one indexed read of
        the parents, the ones of the same request read from it (a missing parent is
        refused by the reference checks after). A record that names its tenant (a
        tenant's submission through a gateway) keeps it, so the reference checks
        answer another tenant's parent exactly as a missing one: no task."""
        own = {norm_uuid(r.id): r.tenant for r in req.tasks}
        parents = {r.parent_id: norm_uuid(r.parent_id) for r in req.tasks if r.parent_id and not r.tenant}
        wanted = sorted({p for p in parents.values() if p is not None and p not in own})
        found = own
        if wanted:
            self.stats.statements += 1
            rows = await self.pool.fetch(*bind("parent_tenants", ids=wanted))
            found = {**own, **{r["id"]: r["tenant"] for r in rows}}
        for r in req.tasks:
            if r.parent_id in parents and (tenant := found.get(parents[r.parent_id])) is not None:
                r.tenant = tenant
        return req

    async def _ensure_names(self, names: Iterable[str]) -> pools_pb2.TaskNamesReply:
        await self.names.ensure(names)
        return pools_pb2.TaskNamesReply()

    async def _check_refs(self, rows: list[InsertRow]) -> None:
        from .appliers import Db
        from .write_errors import to_taskyard_error

        try:
            async with self.pool.acquire() as conn:
                await dependencies.check_refs(Db(conn, self.committer.stats), rows, range(len(rows)))
        except OUTAGE as exc:
            raise to_taskyard_error(exc) from exc

    async def get(self, req: tasks_pb2.GetTasksRequest) -> tasks_pb2.GetTasksReply:
        return await self._read(self.reads.get(req))

    async def list(self, req: tasks_pb2.ListTasksRequest) -> tasks_pb2.ListTasksReply:
        return await self._read(self.reads.list(req))

    async def lease(self, req: leases_pb2.LeaseTasksRequest) -> leases_pb2.LeaseTasksReply:
        if not req.leases:
            return leases_pb2.LeaseTasksReply()
        return await self._submit(C.STORE_LEASE, (req, self._lease_ms(req.lease_ms)), len(req.leases))

    async def report(self, req: leases_pb2.ReportRequest) -> leases_pb2.ReportReply:
        n = len(req.started) + len(req.completed) + len(req.released) + len(req.died)
        if n == 0:
            return leases_pb2.ReportReply()
        hops.stamp(req.completed, "store.received")
        return await self._submit(C.STORE_REPORT, req, n)

    async def renew(self, req: leases_pb2.RenewLeasesRequest) -> leases_pb2.RenewLeasesReply:
        if not req.refs:
            return leases_pb2.RenewLeasesReply()
        return await self._submit(C.STORE_RENEW, (req, self._lease_ms(req.lease_ms)), len(req.refs))

    async def rescue(self, req: leases_pb2.RescueRequest) -> leases_pb2.RescueReply:
        if req.max_rescues <= 0:  # the sender left the quarantine cap to the deployment
            req.max_rescues = self.settings.max_rescues
        return await self._submit(C.STORE_RESCUE, req, max(1, req.limit))

    async def cancel(
        self, req: tasks_pb2.CancelTasksRequest, request_id: str = ""
    ) -> tasks_pb2.CancelTasksReply:
        """``request_id``: the bus request's message id, carried out once (bus_requests.py)."""
        if not req.ids:
            return tasks_pb2.CancelTasksReply()
        return await self._submit(C.STORE_CANCEL, req, len(req.ids), request_id)

    async def load_queued(self, req: lanes_pb2.LoadQueuedRequest) -> lanes_pb2.LoadQueuedReply:
        return await self._read(self.reads.load_queued(req))

    async def promote_due(self, req: lanes_pb2.PromoteDueRequest) -> lanes_pb2.PromoteDueReply:
        return await self._submit(C.STORE_PROMOTE_DUE, req, max(1, req.limit))

    async def heartbeat(self, req: pools_pb2.HeartbeatRequest) -> pools_pb2.HeartbeatReply:
        if not req.pool_id:
            raise errors.invalid([FieldViolationish("pool_id", "must not be empty")])
        return await self._submit(C.STORE_HEARTBEAT, req, 1)

    async def task_names(self, req: pools_pb2.TaskNamesRequest) -> pools_pb2.TaskNamesReply:
        # What gateways probe a store with: one that cannot commit says so at once,
        # so a gateway is ready only while some store is (gateway/server.py).
        if not self.readiness.ready:
            raise errors.TaskyardError(
                errors.Code.UNAVAILABLE,
                contract.STORE_NOT_READY,
                "result-store not ready: it cannot commit, or its clock is off",
            )
        if req.max_age_ms < 0:  # the probe: its answer is the verdict above, no read per probe
            return await self._read(self._held_names())
        if req.max_age_ms == 0:  # what may be submitted: every name ever declared
            return await self._read(self._all_names())
        return await self._read(self.reads.task_names(req))  # what live pools serve now

    async def _all_names(self) -> pools_pb2.TaskNamesReply:
        return pools_pb2.TaskNamesReply(names=await self.names.all())

    async def _held_names(self) -> pools_pb2.TaskNamesReply:
        return pools_pb2.TaskNamesReply(names=await self.names.held())

    def _time_read(self, fn: Any) -> Any:
        """A timing read (due rows, failures, explain facts: ``fn(pool, stats, request)``)."""

        async def read(req: Message) -> Message:
            return await self._read(fn(self.pool, self.stats, req))

        return read

    async def _submit(
        self, method: contract.Method[Any, M], request: Any, rows: int = 1, request_id: str = ""
    ) -> M:
        """Write through the committer (``committer.Submit``)."""
        return await self.committer.submit(method, request, rows, request_id)

    async def _read(self, coro: Awaitable[M]) -> M:
        from .write_errors import to_taskyard_error

        try:
            return await coro
        except errors.TaskyardError:
            raise
        except OUTAGE as exc:
            raise to_taskyard_error(exc) from exc

    # --- routes ---------------------------------------------------------------------
    def routes(self) -> Sequence[rpc.Route[Any]]:
        # Requests carried out once per database are refused while this store's clock
        # is off the database's (bus_requests.py, readiness.py).
        return bus_requests.refused_while_clock_off(self._routes(), lambda: self.readiness.clock_agrees)

    def _routes(self) -> Sequence[rpc.Route[Any]]:
        serve = rpc.serve_call
        return [
            serve(contract.STORE_INSERT, self.insert),
            serve(contract.STORE_GET, self.get),
            serve(contract.STORE_LIST, self.list),
            serve(contract.STORE_LEASE, self.lease),
            serve(contract.STORE_REPORT, self.report),
            serve(contract.STORE_RENEW, self.renew),
            serve(contract.STORE_RESCUE, self.rescue),
            # Carried out once per database, whichever store a copy reaches (bus_requests.py).
            rpc.serve(contract.STORE_RECONCILE, bus_requests.once(self._reconcile)),
            rpc.serve(contract.STORE_CANCEL, bus_requests.once(self.cancel)),
            serve(contract.STORE_LOAD_QUEUED, self.load_queued),
            serve(contract.STORE_PROMOTE_DUE, self.promote_due),
            serve(contract.STORE_HEARTBEAT, self.heartbeat),
            serve(contract.STORE_TASK_NAMES, self.task_names),
            serve(contract.STORE_TREE, self._task_tree),
            serve(contract.STORE_COUNTERS, self._counters),
            serve(contract.STORE_READ_EVENTS, self._read_events),
            serve(contract.STORE_SUMMARIZE_EVENTS, self._summarize_events),
            *self.schedules.routes(),
            *self.limits.routes(),
            *self.tenants.routes(),
            *refunds.routes(self._submit),
            *self.ops.routes(),
            *self.failures.routes(),
            # The scheduler's due heap, failures of each attempt, explain facts.
            serve(contract.STORE_LOAD_DUE, self._time_read(promotions.load_due)),
            serve(contract.STORE_FAILURES, self._time_read(failures.get_failures)),
            serve(contract.STORE_EXPLAIN, self._time_read(explain.explain_facts)),
            serve(contract.STORE_LEADERSHIP, self._time_read(leadership.lead)),  # the schedulers' election
        ]

    async def _reconcile(
        self, req: leases_pb2.ReconcileRequest, request_id: str = ""
    ) -> leases_pb2.ReconcileReply:
        return await self._submit(C.STORE_RECONCILE, req, max(1, req.limit), request_id)

    async def _read_events(self, req: event_log_pb2.ReadEventsRequest) -> event_log_pb2.ReadEventsReply:
        page = self.settings.event_page_size
        return await self._read(event_log.read(self.pool, req, page=page))

    async def _summarize_events(
        self, req: event_log_pb2.SummarizeEventsRequest
    ) -> event_log_pb2.SummarizeEventsReply:
        return await self._read(event_summary.summarize(self.pool, req))

    async def _counters(self, req: counters_pb2.CountersRequest) -> counters_pb2.CountersReply:
        return await self._read(counters.read_counters(self.pool, self.stats, req))


def FieldViolationish(field: str, description: str) -> errors.FieldViolation:
    return errors.FieldViolation(field=field, description=description)
