"""Flow control for one term of leadership: admission and gates, fed from the store.

- The limits and fairness weights are read from the store at once when a
  ``limit.*`` event says they changed, and every ``LIMITS_INTERVAL`` in case an
  event was lost (an unchanged version costs one cheap read), so a change takes
  effect within a second.
- The leased attempts that use limits are read at the term's start, before any
  task that uses one is admitted (a predecessor's attempts hold their units),
  and again every ``RESYNC_INTERVAL``: an end this scheduler missed (a report
  lost with its pool) frees its units then at the latest.
- Limits a task name declares (@task(rate_limit=..., concurrency=...)) are added
  to each submitted task of that name, keyed by the declared keyword argument.
- FLOW_GATES answers what holds a queued task and how busy the limits are.
- Tenants (tenants.py) are read with the limits, and at once on a ``tenant.*``
  event: their weights, suspensions and quotas. A named tenant's task waits for
  the term's first read of them (its quota may hold it); the default tenant's
  never do (it has no quota).
- Circuit breakers (breakers.py) hear every attempt's outcome from the pools'
  notices (``outcome``); their opens and closes go to the store's event log, and
  the failed attempts they count as an outage's to the store as refunds
  (STORE_BREAKER_REFUNDS, fenced by this term), so those spend no retry.
"""
# Length: the term's flow-control loops, the dispatcher's hooks and the gates route share one state.

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Sequence

from google.protobuf import timestamp_pb2

from taskyard.bus.v1 import dispatch_pb2, envelope_pb2, flow_pb2, tenants_pb2, views_pb2
from taskyard.core import contract, errors, rpc
from taskyard.core import limits as rules
from taskyard.core import tenants as tenant_names
from taskyard.scheduler.admission import CATALOG, QUOTA_CONCURRENCY, QUOTAS, Admission, Gate, bucket_of
from taskyard.scheduler.breakers import Refund
from taskyard.scheduler.gates import Gates
from taskyard.scheduler.lanes import Lanes, Ref
from taskyard.scheduler.tenants import Tenants
from taskyard.v1 import limit_pb2, task_service_pb2

log = logging.getLogger(__name__)

LIMITS_INTERVAL = 0.5
RESYNC_INTERVAL = 2.0
# The longest wait between tries to settle a failed lease's units with the store.
RESYNC_SOON_BACKOFF = 0.5
LEASED_PAGE = 5000
# The least time between two looks at a rate gate: its tasks go back to their
# lanes in small batches rather than one per emission interval.
MIN_GATE_WAIT = 0.01
MAX_GATE_TASKS = 100
# How long a submission waits for a new term's first read of the limits before it
# is refused UNAVAILABLE (the gateway's client sends it again).
LOAD_WAIT = 2.0
# Tasks remembered as sent back by a gate (past it, the sweep alone finds unused room).
MAX_OPENED = 100_000
# Breaker changes per request to the store.
BREAKER_BATCH = 1000
# Refunds per request to the store (its cap: result_store/writes/refunds.py MAX_REFUNDS).
REFUND_BATCH = 1000
# A refund the store could not make yet (its attempt's failure not written: the
# pool's notice overtook its report; or the store out of reach) is asked again
# after REFUND_RETRY, until REFUND_PATIENCE after it was decided: past it the
# report was lost with its pool, and the lapsed lease's death is not the outage's.
REFUND_RETRY = 0.25
REFUND_PATIENCE = 60.0
R = task_service_pb2
# The scope of the suite's own requests to the store (the store's default is the default tenant's rows).
ALL_TENANTS = tenants_pb2.TenantScope(all=True)


class Flow:
    def __init__(
        self,
        lanes: Lanes,
        store: rpc.Caller,
        *,
        wake: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        term: int = 0,
    ) -> None:
        self.lanes = lanes
        self._store = store
        self._wake = wake
        self._clock = clock
        self._wall = wall
        self.term = term
        self.admission = Admission(clock)
        self.gates = Gates(lanes)
        self.tenants = Tenants(store, lanes, self.admission)
        # Whether a live pool serves a task name and tenant (the scheduler's pools;
        # None: not asked), for FLOW_GATES to say NO_POOL.
        self.serving: Callable[[str, str], bool] | None = None
        self._version = -1
        # Task name -> the limits it declares.
        self.declared: dict[str, list[limit_pb2.Limit]] = {}
        # Both the limits and the leased attempts were read once.
        self.ready = False
        self._counted = False
        # Set by a limit.* event: read the limits now rather than at the next poll.
        self.changed = asyncio.Event()
        # Reads of the limits begun, and the tasks waiting at CATALOG with the count
        # when they arrived there: a read begun after that settles their unknown limits.
        self._reads = 0
        self._unknown: dict[str, int] = {}
        self._settled: set[str] = set()
        self._reading = asyncio.Lock()
        # Set once the limits were read: a submission waits for it (LOAD_WAIT), so a
        # task accepted right after a takeover gets the limits its name declares.
        self.loaded = asyncio.Event()
        # A lease failed with an unknown outcome: resync at the next turn of run().
        self._resync_soon = False
        # Tenants whose concurrency quota is new or changed: their tasks wait until a
        # resync begun since counts what their running attempts hold (admitted before
        # the quota was known, they hold nothing here yet).
        self._recounting: set[str] = set()
        # Tasks a concurrency gate sent back to their lanes, by that gate.
        self._opened: dict[str, Gate] = {}
        # Set when a breaker opened or closed: send_breaker_events logs it.
        self.breaker_news = asyncio.Event()
        # Set when a breaker decided a refund: send_breaker_refunds sends it.
        self.refund_news = asyncio.Event()
        # Refunds to send again (the store said pending, or was out of reach), with
        # when each was decided.
        self._refunds_again: list[tuple[float, Refund]] = []

    # --- the dispatcher's hooks ----------------------------------------------------
    def new_batch(self) -> int:
        """A number for the attempts that go to the store in one lease request."""
        return self.admission.flights.new_batch()

    def admit(
        self, refs: Sequence[Ref], seqs: Sequence[int], tokens: Sequence[str], batch: int | None = None
    ) -> list[int]:
        """The indexes of ``refs`` admitted; the others wait at their gates. ``batch``
        (``new_batch``): the lease request they go in, when others join it (None: a
        request of their own)."""
        if batch is None:
            batch = self.new_batch()
        out: list[int] = []
        reopen: list[Gate] = []
        now = self._clock()
        admission, gates = self.admission, self.gates
        quotas, tenants_read = admission.quota_uses, self.tenants.read_once
        for i, ref in enumerate(refs):
            if not ref.uses and (not ref.tenant or (tenants_read and ref.tenant not in quotas)):
                out.append(i)
                continue
            if not self.ready or (ref.tenant and (not tenants_read or ref.tenant in self._recounting)):
                gates.hold(CATALOG, seqs[i], ref, now)
                continue
            refusal = admission.admit(ref, tokens[i], batch=batch, known=ref.id in self._settled)
            self._settled.discard(ref.id)
            came_from = self._opened.pop(ref.id, None) if self._opened else None
            if refusal is None:
                out.append(i)
                continue
            if refusal.gate == CATALOG:
                self._unknown[ref.id] = self._reads
                gates.hold(CATALOG, seqs[i], ref, now)
            else:
                at = None if refusal.at is None else max(refusal.at, now + MIN_GATE_WAIT)
                gates.hold(refusal.gate, seqs[i], ref, now, at=at)
            if came_from is not None and came_from != refusal.gate:
                # It was sent back for room it did not take: the next one may take it.
                reopen.append(came_from)
        if reopen:
            self._open(reopen)
        return out

    def admit_at_insert(self, ref: Ref, token: str, batch: int) -> bool:
        """Whether a task of a tenant with a quota, and no limits of its own, may be
        leased at its insert (the fast path): its quota admits it now and no task of
        its tenant waits at a quota gate, so none is overtaken. Its units are then
        taken: ``confirm`` or ``release`` them by the insert's outcome
        (``lease_failed`` when it is unknown)."""
        admission = self.admission
        if ref.uses or not self.ready or not self.tenants.read_once or ref.tenant in self._recounting:
            return False
        for name, key, _units in admission.quota_uses.get(ref.tenant, ()):
            limit = admission.limit_of(name, key)
            if limit is None or self.gates.waiting((name, bucket_of(limit, name, key, ref.tenant))):
                return False
        return admission.admit(ref, token, batch=batch) is None

    def lease_failed(self, refs: Iterable[tuple[str, str]]) -> None:
        """A lease whose outcome is unknown (its request failed): its units stay held
        (it may have committed) until a resync, asked for at once, says which."""
        self.confirm(refs)
        self._resync_soon = True
        self.changed.set()

    def confirm(self, refs: Iterable[tuple[str, str]]) -> None:
        """These (task id, lease token) attempts are leased in the store now."""
        now = self._clock()
        landed: list[Gate] = []
        for task_id, token in refs:
            landed += self.admission.confirm(task_id, token, now)
        if landed:
            self._open(landed)

    def release(self, task_id: str, token: str) -> None:
        """An attempt ended, or its lease was refused or handed back."""
        self._open(self.admission.release(task_id, token))

    def outcome(self, task_id: str, token: str, *, failed: bool, attempt: int = 0) -> None:
        """An attempt ended with a result (before its ``release``): the breakers it
        went through count it; one that closed sends its tasks back to their lanes,
        one that opened again is looked at when its cool-down ends. An outage's
        failures (``attempt``: its number) are refunded."""
        changed = self.admission.outcome(task_id, token, failed=failed, attempt=attempt)
        if self.admission.breakers.refunds:
            self.refund_news.set()
        if not changed:
            return
        self._breakers_changed(changed)
        if self.admission.breakers.changes:
            self.breaker_news.set()

    def _breakers_changed(self, gates: Iterable[Gate]) -> None:
        for gate in gates:
            if self.admission.room(gate) > 0:
                self._open([gate])
            else:
                at = self.admission.next_admission(gate)
                if at is not None and self.gates.waiting(gate):
                    self.gates.schedule(gate, at)

    def release_tasks(self, task_ids: Iterable[str], *, before: float) -> None:
        """These tasks' leases ended in the store (lapsed, reconciled) by a request
        sent at ``before``."""
        freed: list[Gate] = []
        for task_id in task_ids:
            if self.admission.holds(task_id):
                freed += self.admission.release_task(task_id, before=before)
        self._open(freed)

    def tick(self) -> float | None:
        """Open the rate gates whose time came; returns the clock time of the next one."""
        now = self._clock()
        opened = 0
        for gate in self.gates.due(now):
            limit = self.admission.limit_of(*gate)
            if limit is not None and limit.is_breaker:
                # Half-open now (probes), or still open: looked at again when its
                # cool-down ends; a probe's outcome opens it, not the clock.
                opened += self._opened_from(
                    gate, self.gates.open(gate, min(self.admission.room(gate), MAX_GATE_TASKS))
                )
                at = self.admission.next_admission(gate)
                if at is not None and self.gates.waiting(gate):
                    self.gates.schedule(gate, at)
                continue
            room = self.admission.room(gate)
            opened += self._opened_from(gate, self.gates.open(gate, min(max(1, room), MAX_GATE_TASKS)))
            if self.gates.waiting(gate):
                interval = limit.interval if limit is not None else 0
                self.gates.schedule(gate, now + max(MIN_GATE_WAIT, interval))
        if opened:
            self._wake()
        return self.gates.next_due()

    def drop(self, task_id: str) -> None:
        """A queued task was cancelled: it waits nowhere now."""
        self.gates.drop(task_id)
        self._unknown.pop(task_id, None)
        self._settled.discard(task_id)
        came_from = self._opened.pop(task_id, None)
        if came_from is not None:
            self._open([came_from])

    def _open(self, gates: Iterable[Gate]) -> None:
        opened = 0
        for gate in set(gates):
            opened += self._opened_from(gate, self.gates.open(gate, self.admission.room(gate)))
        if opened:
            self._wake()

    def _opened_from(self, gate: Gate, task_ids: list[str]) -> int:
        """Remember which gate sent these tasks back (until they are admitted or held
        again), so room they do not take is offered to the next task there."""
        if gate != CATALOG:
            for task_id in task_ids:
                self._opened[task_id] = gate
            if len(self._opened) > MAX_OPENED:
                self._opened.clear()  # a shortcut only: the sweep finds what is left
        return len(task_ids)

    def sweep(self) -> None:
        """Open every concurrency gate that has room and tasks waiting. The room a
        task sent back did not take (its name has no pool now, its queue was paused)
        is found here at the latest."""
        admission = self.admission
        opened = 0
        for gate in self.gates.gates():
            limit = admission.limit_of(*gate)
            if gate != CATALOG and (limit is None or not limit.is_rate):
                room = admission.room(gate)
                if room > 0:
                    opened += self._opened_from(gate, self.gates.open(gate, room))
        if opened:
            self._wake()

    # --- the store -------------------------------------------------------------------
    async def run(self) -> None:
        """Read the limits and the leased attempts, then keep them current."""
        last_resync = -RESYNC_INTERVAL
        delay = LIMITS_INTERVAL
        while True:
            try:
                await self.read_limits()
                try:
                    await self.read_tenants()
                except errors.TaskyardError as exc:  # the limits' resync goes on regardless
                    log.warning("flow control: reading the tenants failed: %s", exc)
                if self._resync_soon or self._clock() - last_resync >= RESYNC_INTERVAL:
                    last_resync = self._clock()
                    self._resync_soon = False
                    try:
                        await self.resync()
                    except errors.TaskyardError:
                        self._resync_soon = True  # the store is down: as soon as it is back
                        raise
                self.admission.prune()
                self.sweep()
                delay = LIMITS_INTERVAL
            except errors.TaskyardError as exc:
                log.warning("flow control: reading the store failed: %s", exc)
                delay = min(2 * delay, RESYNC_SOON_BACKOFF if self._resync_soon else 2.0)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), delay)
            self.changed.clear()

    async def read_limits(self) -> None:
        # One read at a time (the poll, a pool's registration, an event): a reply
        # applied after a newer one would put older limits back.
        async with self._reading:
            await self._read_limits()

    async def _read_limits(self) -> None:
        self._reads += 1
        began = self._reads
        reply = await self._store.call(
            contract.STORE_LIMITS,
            # Every tenant's limits: the suite's own read, not a caller's.
            flow_pb2.ReadLimitsRequest(known_version=max(self._version, 0), scope=ALL_TENANTS),
        )
        if self._unknown:
            self._settle(began)
        if (reply.unchanged and self._version >= 0) or reply.version < self._version:
            return
        self._version = reply.version
        changed = self.admission.set_limits(reply.limits)
        self.loaded.set()
        # The store keeps a tenant's keys qualified, with the tenant beside them.
        self.lanes.weights = {
            (w.tenant, tenant_names.strip(w.tenant, w.key)): w.weight for w in reply.weights if w.weight > 0
        }
        declared: dict[str, list[limit_pb2.Limit]] = {}
        for limit in reply.limits:
            if limit.task_name:
                declared.setdefault(limit.task_name, []).append(limit)
        self.declared = declared
        if changed:
            log.info("flow control: %d limits (%d changed)", len(reply.limits), len(changed))
            self.gates.open_limits(changed)
            self._wake()
        self._become_ready()

    async def read_tenants(self) -> None:
        """Read the tenants if they changed (tenants.py) and act on what changed."""
        async with self._reading:
            applied = await self.tenants.read()
        if applied is None:
            return
        recount = {g[1] for g in applied.gates if g[0] == QUOTA_CONCURRENCY and self.admission.limit_of(*g)}
        if recount and self._counted:  # (the term's first resync counts them anyway)
            self._recounting |= recount
            self._resync_soon = True
            self.changed.set()
        self._open(applied.gates)
        if applied.woke:
            if self.ready:  # named tenants' tasks held until the tenants were read
                self.gates.open(CATALOG, 1 << 30)
            self._wake()

    async def resync(self) -> None:
        before = self._clock()
        leased: list[tuple[str, str, list[tuple[str, str, int]], str]] = []
        after = ""
        tenants = self.tenants.concurrency_quotas()
        counting = set(self._recounting)
        while True:
            reply = await self._store.call(
                contract.STORE_LEASED_FLOW,
                flow_pb2.LeasedFlowRequest(limit=LEASED_PAGE, after_id=after, tenants=tenants),
            )
            for a in reply.attempts:
                uses = [(u.limit, u.key, u.units or 1) for u in a.flow.uses]
                leased.append((a.task_id, a.lease_token, uses, a.tenant))
            if not reply.next_after_id or not reply.attempts:
                break
            after = reply.next_after_id
        self._open(self.admission.resync(leased, before=before))
        if counting:
            self._recounting -= counting
            if self.gates.open(CATALOG, 1 << 30):
                self._wake()
        if not self._counted:
            self._counted = True
            log.info("flow control: %d leased attempts use limits", len(leased))
            self._become_ready()

    def _settle(self, began: int) -> None:
        """A read of the limits begun after these tasks met an unknown limit: after it,
        an unknown limit is one that is gone (their use of it is ignored)."""
        settled = [task_id for task_id, reads in self._unknown.items() if reads < began]
        for task_id in settled:
            del self._unknown[task_id]
            if task_id in self.gates:
                self._settled.add(task_id)
        if settled and self.ready and self.gates.open(CATALOG, 1 << 30):
            self._wake()

    def _become_ready(self) -> None:
        if not self.ready and self.admission.ready and self._counted:
            self.ready = True
            if self.gates.open(CATALOG, 1 << 30):
                self._wake()

    async def send_breaker_events(self) -> None:
        """Log the breakers' opens and closes in the store (WatchEvents), as they come."""
        while True:
            await self.breaker_news.wait()
            self.breaker_news.clear()
            await self.flush_breaker_events()

    async def flush_breaker_events(self) -> None:
        """Send the changes not logged yet. Lossy past its bound (Breakers.MAX_CHANGES)
        and when the store refuses: the events tell, the breakers themselves live here."""
        breakers = self.admission.breakers
        while breakers.changes:
            batch, breakers.changes = breakers.changes[:BREAKER_BATCH], breakers.changes[BREAKER_BATCH:]
            wall, now = self._wall(), self._clock()
            request = flow_pb2.BreakerEventsRequest(term=self.term)
            for change in batch:
                request.changes.add(
                    limit=change.gate[0],
                    key=change.gate[1],
                    change=change.change,
                    failures=change.failures,
                    next_probe_at_us=int((wall + change.probe_at - now) * 1e6) if change.probe_at else 0,
                )
                log.info("circuit breaker %s [%s] %s", change.gate[0], change.gate[1], change.change)
            try:
                await self._store.call(contract.STORE_BREAKER_EVENTS, request)
            except errors.TaskyardError as exc:
                log.warning("circuit breaker events not logged: %s", exc)
                if exc.code == errors.Code.FAILED_PRECONDITION:
                    breakers.changes = []  # a new leader's: this term's breakers tell nothing
                    return

    async def send_breaker_refunds(self) -> None:
        """Send the breakers' refunds to the store as they come, and again those it
        could not make yet."""
        while True:
            await self.refund_news.wait()
            self.refund_news.clear()
            if await self.flush_breaker_refunds():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.refund_news.wait(), REFUND_RETRY)
                self.refund_news.set()

    async def flush_breaker_refunds(self) -> bool:
        """Send the refunds decided and those to send again, REFUND_BATCH a request,
        fenced by this term; returns whether some are kept to send again. Exact
        whatever is sent twice: the store refunds an attempt once. A refusal of the
        term (a new leader) drops them: a deposed leader's breakers decide nothing."""
        breakers, now = self.admission.breakers, self._clock()
        todo = self._refunds_again + [(now, r) for r in breakers.refunds]
        breakers.refunds, self._refunds_again = [], []
        keep: list[tuple[float, Refund]] = []
        while todo:
            batch, todo = todo[:REFUND_BATCH], todo[REFUND_BATCH:]
            wall = self._wall()
            request = flow_pb2.BreakerRefundsRequest(term=self.term)
            for _decided, r in batch:
                request.refunds.add(
                    task_id=r.task_id,
                    attempt=r.attempt,
                    next_probe_at_us=max(0, int((wall + r.probe_at - now) * 1e6)),
                )
            try:
                reply = await self._store.call(contract.STORE_BREAKER_REFUNDS, request)
            except errors.TaskyardError as exc:
                if exc.code == errors.Code.FAILED_PRECONDITION:
                    log.warning("circuit breaker refunds dropped: %s", exc)
                    return False
                # The store out of reach: patience counts from when it answers again.
                log.warning("circuit breaker refunds not sent yet: %s", exc)
                keep += [(self._clock(), r) for _d, r in batch]
                continue
            if reply.refunded or reply.revived:
                log.info(
                    "circuit breakers refunded %d failed attempts (%d tasks retried again)",
                    reply.refunded,
                    reply.revived,
                )
            pending = {(p.task_id, p.attempt) for p in reply.pending}
            keep += [(d, r) for d, r in batch if (r.task_id, r.attempt) in pending]
        self._refunds_again = [(d, r) for d, r in keep if self._clock() - d < REFUND_PATIENCE]
        if len(self._refunds_again) < len(keep):
            log.warning(
                "circuit breakers: %d refunds given up (no failure written within %.0f s)",
                len(keep) - len(self._refunds_again),
                REFUND_PATIENCE,
            )
        return bool(self._refunds_again)

    # --- declared limits ---------------------------------------------------------------
    async def wait_loaded(self) -> None:
        """Until the limits were read once; UNAVAILABLE past LOAD_WAIT."""
        try:
            await asyncio.wait_for(self.loaded.wait(), LOAD_WAIT)
        except TimeoutError:
            raise errors.TaskyardError(
                errors.Code.UNAVAILABLE,
                "LIMITS_NOT_LOADED",
                "the scheduler has not read the limits yet (it just took over?): try again",
            ) from None

    def declare(self, payload: bytes) -> bytes:
        """``payload`` (a SubmitRequest) with the limits its tasks' names declare
        added to their flow; unchanged when no name declares any."""
        heads = views_pb2.TaskRecordHeads.FromString(payload)
        if not any(h.name in self.declared for h in heads.tasks):
            return payload
        request = dispatch_pb2.SubmitRequest.FromString(payload)
        for record in request.tasks:
            limits = self.declared.get(record.name)
            if limits:
                rules.add_declared(record, limits)
        return request.SerializeToString()

    def declared_limits(self) -> list[limit_pb2.Limit]:
        """Every limit a task name declares (a schedule's runs get theirs in the store)."""
        return [limit for limits in self.declared.values() for limit in limits]

    # --- FLOW_GATES -------------------------------------------------------------------
    async def on_gates(
        self, request: flow_pb2.FlowGatesRequest, env: envelope_pb2.Envelope
    ) -> flow_pb2.FlowGatesReply:
        reply = flow_pb2.FlowGatesReply(term=self.term)
        # The caller's scope, for the task ids and the limits alike: another tenant's
        # task answers as one not waiting here, and its holders and buckets are left out.
        within = None if request.scope.all else request.scope.tenant
        for task_id in request.task_ids[:100]:
            gate = reply.gates.add(task_id=task_id)
            if within is None or self._tenant_of(task_id) in (within, None):
                self._explain(task_id, gate, within)
        names = list(request.limits)
        if "*" in names:
            names = sorted(self.admission.limits)
            if within is not None:  # a tenant's caller: its own tenant's limits only
                names = [n for n in names if tenant_names.split(n)[0] == within]
        elif within is not None:  # its own, and the declared ones its tasks use
            names = [n for n in names if tenant_names.split(n)[0] == within or self._declared(n)]
        for name in names[:10_000]:
            usage = self.admission.usage(name, self.gates.waiting_by_key(name), within)
            if usage is not None:
                reply.usage[name].CopyFrom(usage)
        return reply

    def _tenant_of(self, task_id: str) -> str | None:
        """The tenant of a task waiting or holding units here (None: neither)."""
        ref = self.lanes.get(task_id)
        if ref is not None:
            return ref.tenant
        found = self.gates.tenant_of(task_id)
        return found if found is not None else self.admission.tenant_of(task_id)

    def _declared(self, name: str) -> bool:
        """A limit a task name declares: the pool's, every tenant's tasks in buckets of their own."""
        limit = self.admission.limits.get(name)
        return limit is not None and bool(limit.spec.task_name) and tenant_names.SEPARATOR not in name

    def usage(self) -> dict[str, limit_pb2.LimitUsage]:
        """Every limit's live usage (metrics)."""
        out: dict[str, limit_pb2.LimitUsage] = {}
        for name in list(self.admission.limits):
            usage = self.admission.usage(name, self.gates.waiting_by_key(name))
            if usage is not None:
                out[name] = usage
        return out

    def _explain(self, task_id: str, out: flow_pb2.TaskGate, within: str | None = None) -> None:
        """Why ``task_id`` waits; ``within``: the caller's tenant (None: every tenant),
        whose own holders only are named, by the keys it knows."""
        held = self.gates.where(task_id)
        now = self._clock()
        suspended = self.lanes.suspended
        if held is not None and suspended and self.gates.tenant_of(task_id) in suspended:
            out.reason = R.WAIT_REASON_TENANT_SUSPENDED  # its gate's opening will not send it
            return
        if held is not None:
            (limit, key), since = held
            shown = key
            if within and limit not in QUOTAS and tenant_names.split(limit)[0] != within:
                shown = tenant_names.strip(within, key)  # a declared limit's bucket of its own
            out.gate.limit, out.gate.key = limit, shown
            if since:
                out.gate.waited.FromMilliseconds(int((now - since) * 1000))
            state = self.admission.limit_of(limit, key)
            if (limit, key) == CATALOG or state is None:
                out.reason = R.WAIT_REASON_DISPATCHING
            elif limit in QUOTAS:
                out.reason = R.WAIT_REASON_TENANT_QUOTA
                if state.is_rate:
                    due = self.admission.next_admission((limit, key)) or now
                    out.gate.next_admission_at.CopyFrom(_wall_at(self._wall() + (due - now)))
                else:
                    out.gate.holder_ids.extend(self.admission.holder_ids((limit, key), within))
            elif state.is_breaker:
                out.reason = R.WAIT_REASON_BREAKER_OPEN
                at = self.admission.next_admission((limit, key))
                if at is not None:
                    out.gate.next_admission_at.CopyFrom(_wall_at(self._wall() + (at - now)))
            elif state.is_rate:
                out.reason = R.WAIT_REASON_RATE_LIMITED
                at = self.admission.next_admission((limit, key)) or now
                out.gate.next_admission_at.CopyFrom(_wall_at(self._wall() + (at - now)))
            else:
                out.reason = R.WAIT_REASON_CONCURRENCY_FULL
                out.gate.holder_ids.extend(self.admission.holder_ids((limit, key), within))
            return
        if self.lanes.held_by_suspension(task_id):
            out.reason = R.WAIT_REASON_TENANT_SUSPENDED
            return
        ref = self.lanes.get(task_id)
        if ref is not None and self.serving is not None and not self.serving(ref.name, ref.tenant):
            out.reason = R.WAIT_REASON_NO_POOL
            return
        standing = self.lanes.standing(task_id)
        if standing is not None and standing[2] > 0:
            out.reason = R.WAIT_REASON_FAIR_SHARE
            out.gate.key, out.gate.position, out.gate.keys_ahead = standing


def _wall_at(seconds: float) -> timestamp_pb2.Timestamp:
    ts = timestamp_pb2.Timestamp()
    ts.FromNanoseconds(int(seconds * 1e9))
    return ts
