"""Dispatch: lease queued tasks to pools with free slots, then send them.

Every dispatch is recorded as a lease in the store *before* it is sent, so a
message lost on the way only delays the task until its lease lapses.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Sequence

from taskyard.bus.v1 import lanes_pb2, leases_pb2, task_record_pb2, tasks_pb2, views_pb2
from taskyard.core import contract, errors, ids, rpc
from taskyard.core.background import Background
from taskyard.core.priority import Priority
from taskyard.core.states import TaskState, WorkerState
from taskyard.core.transport import varint
from taskyard.scheduler import spans
from taskyard.scheduler.flow import Flow
from taskyard.scheduler.headroom import Headroom
from taskyard.scheduler.lanes import Lanes, Ref
from taskyard.scheduler.pools import Pool, PoolRegistry

log = logging.getLogger(__name__)

# Bounded so a lease reply of max-size payloads fits Settings.max_message_bytes.
MAX_DISPATCH_BATCH = 200
# How long a fast-path lease's PAIR copy waits for the pool to report the attempt
# done (the store's post-commit stream delivered it; see Dispatcher.send_backup).
BACKUP_DELAY = 0.1
QUEUED = TaskState.QUEUED.value
# A record the scheduler hands on: in full, or as the head it parsed (whose
# unknown fields carry the rest, payload included, unchanged).
Record = task_record_pb2.TaskRecord | views_pb2.TaskRecordHead
# Priority by wire value (0 = NORMAL): a tuple index, where Priority(value) is an
# enum lookup that costs more than the rest of a ref.
_BY_WIRE = (Priority.NORMAL, *sorted(Priority))
# Dispatch.tasks (and every other records field 1): tag of a length-delimited field 1.
_RECORDS_TAG = b"\x0a"


def ref_of(record: lanes_pb2.QueuedRef | tasks_pb2.InsertedTask | Record) -> Ref:
    p = record.priority
    priority = _BY_WIRE[p] if 0 <= p < len(_BY_WIRE) else Priority.from_wire(p)
    if not record.HasField("flow"):
        return Ref(record.id, record.name, priority, record.queue, "", (), record.tenant)
    flow = record.flow
    uses = tuple((u.limit, u.key, u.units or 1) for u in flow.uses)
    return Ref(record.id, record.name, priority, record.queue, flow.fairness_key, uses, record.tenant)


def lease_tokens(prefix: str, n: int) -> list[str]:
    """``n`` tokens as ``ids.new_lease_token(prefix)`` makes them, from one read of
    the system's random source instead of one per token."""
    hexes = os.urandom(8 * n).hex()
    return [prefix + hexes[i : i + 16] for i in range(0, 16 * n, 16)]


def dispatch_payload(records: Sequence[Record]) -> bytes:
    """A serialized Dispatch of ``records``: each record's own bytes as one entry of
    field 1, so a head goes out with its unknown fields, i.e. the whole record."""
    parts: list[bytes] = []
    for record in records:
        data = record.SerializeToString()
        parts.append(_RECORDS_TAG + varint(len(data)) + data)
    return b"".join(parts)


class Dispatcher:
    def __init__(
        self,
        lanes: Lanes,
        pools: PoolRegistry,
        store: rpc.RawCaller,
        *,
        lease_ms: int,
        token_prefix: str = "",
        term: int = 0,
        flow: Flow | None = None,
    ) -> None:
        # Marks the lease tokens of this scheduler instance (see reconciler.py).
        self.token_prefix = token_prefix
        # The leadership's term (election.py) every lease carries: the store leases
        # nothing for a term that is over (0: unfenced, outside an election).
        self.term = term
        self.lanes = lanes
        self.pools = pools
        self._store = store
        self._lease_ms = lease_ms
        # Admission by limits (flow.py); None: every task taken is leased.
        self.flow = flow
        # Slots held for the tenants with a few tasks waiting or none, beside another's backlog.
        self.headroom = Headroom(waiting=lanes.waiting_tenants)
        self.wake = asyncio.Event()
        # Leases and sends under way, each an errand of its own.
        self._inflight = Background("scheduler dispatch")
        self._backups: set[asyncio.TimerHandle] = set()
        self.closed = False
        self.dispatched = 0

    async def run(self) -> None:
        while True:
            due = self.flow.tick() if self.flow is not None else None
            ends = self.headroom.ends_at()  # the held slots go back to the lanes then
            if ends is not None:
                due = ends if due is None else min(due, ends)
            if due is None:
                await self.wake.wait()
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), max(0.0, due - time.monotonic()))
            self.wake.clear()
            self.dispatch_once()

    def close(self) -> None:
        """The term is over: nothing more goes out. The leases and sends in flight are
        cancelled, and no PAIR copy follows a fast-path lease: the pool may be running
        that attempt already (the store's stream delivered it), and a copy that failed
        on the closed link would hand its lease back while it runs. A lease taken but
        not sent lapses, or the next leader's reconciliation releases it."""
        self.closed = True
        for handle in self._backups:
            handle.cancel()
        self._backups.clear()
        self._inflight.cancel()

    def dispatch_once(self) -> None:
        if self.closed or not self.lanes:
            return
        headroom = self.headroom
        for pool in list(self.pools.pools.values()):
            free = min(pool.free, MAX_DISPATCH_BATCH)
            if free <= 0:
                continue
            held = headroom.held(pool.capacity)
            # One lease request per pool: a rate bucket has one in flight at most (flights.py).
            batch = self.flow.new_batch() if self.flow is not None else 0
            refs, tokens = self._take(pool, free - held, pool.tenants, batch) if free > held else ([], [])
            few = headroom.few if held else frozenset()
            if few and pool.tenants is not None:
                few &= pool.tenants
            if few and len(refs) < free:
                # The held slots: tasks of tenants with only a few waiting.
                more, more_tokens = self._take(pool, free - len(refs), few, batch, few=True)
                refs += more
                tokens += more_tokens
            if not refs:
                continue
            now = time.monotonic()
            for ref in refs:
                pool.inflight[ref.id] = now
            self._inflight.spawn(self._lease_and_send(pool, refs, tokens), name=f"dispatch to {pool.pool_id}")

    def _take(
        self, pool: Pool, want: int, tenants: frozenset[str] | None, batch: int, *, few: bool = False
    ) -> tuple[list[Ref], list[str]]:
        """Up to ``want`` tasks for ``pool`` of ``tenants`` (None: every one) that the
        limits admit, with their lease tokens; the refused ones wait at their gates, so
        the lanes are taken from again until ``want`` is met or nothing this pool runs
        is left. ``few``: from those tenants' short queues (Lanes.take_few), not by the
        turns."""
        refs: list[Ref] = []
        tokens: list[str] = []
        flow = self.flow
        while len(refs) < want:
            # Arrival numbers, for the gates to put back what they hold.
            seqs: list[int] | None = [] if flow is not None else None
            if few and tenants is not None:
                taken = self.lanes.take_few(pool.names, tenants, want - len(refs), seqs)
            else:
                taken = self.lanes.take(pool.names, want - len(refs), seqs, tenants)
            if not taken:
                break
            fresh = lease_tokens(self.token_prefix, len(taken))
            if flow is None or seqs is None:
                return taken, fresh
            for i in flow.admit(taken, seqs, fresh, batch):
                refs.append(taken[i])
                tokens.append(fresh[i])
        return refs, tokens

    async def _lease_and_send(self, pool: Pool, refs: list[Ref], tokens: list[str]) -> None:
        began = spans.now_ns()
        request = leases_pb2.LeaseTasksRequest(pool_id=pool.pool_id, lease_ms=self._lease_ms, term=self.term)
        add = request.leases.add
        for ref, token in zip(refs, tokens, strict=True):
            add(task_id=ref.id, lease_token=token)
        try:
            # A LeaseTasksReply is a Dispatch on the wire (the records in field 1):
            # its bytes go to the pool as they came, only heads are parsed here.
            raw = await self._store.call_raw(contract.STORE_LEASE, request)
            leased = views_pb2.TaskRecordHeads.FromString(raw).tasks
        except errors.TaskyardError as exc:
            # Unknown outcome: rows that did get leased are refused at their next
            # lease and rescued when the lease lapses; the rest must wait again.
            # Their limit units stay held until the store says which (resync).
            log.warning("lease of %d tasks failed: %s", len(refs), exc)
            if self.flow is not None:
                self.flow.lease_failed(zip((r.id for r in refs), tokens, strict=True))
            for ref in refs:
                pool.inflight.pop(ref.id, None)
            self.lanes.push_all(refs)
            await asyncio.sleep(0.1)
            self.wake.set()
            return
        if self.flow is not None:
            self.flow.confirm((t.id, t.lease_token) for t in leased)
        if len(leased) < len(refs):
            got = {t.id for t in leased}
            refused = [ref for ref in refs if ref.id not in got]
            for ref in refused:  # cancelled or taken meanwhile, or the pool drains
                pool.inflight.pop(ref.id, None)
            if self.flow is not None:
                for ref, token in zip(refs, tokens, strict=True):
                    if ref.id not in got:
                        self.flow.release(ref.id, token)
            if refused and (pool.state != WorkerState.RUNNING.value or pool.benched):
                # The store refuses leases to a draining pool, and to one it declared
                # lost: these are still QUEUED and belong in the lanes for the other
                # pools (a cancelled one is refused again by lease_tasks and dropped
                # by its event).
                self.lanes.push_all(refused)
            self.wake.set()
        await self.send(pool, leased, raw)
        spans.dispatched(leased, pool_id=pool.pool_id, path="lanes", started_ns=began)

    async def send(
        self, pool: Pool, records: Sequence[Record], payload: bytes | None = None, *, release: bool = True
    ) -> None:
        """Send leased attempts to their pool; hand the leases back if it is unreachable
        (unless ``release`` is False, or the term ended meanwhile: then they lapse, or
        the next leader's reconciliation hands them back). ``payload``: the records
        already serialized as a Dispatch, when the caller has it."""
        if not records:
            return
        data = dispatch_payload(records) if payload is None else payload
        if await pool.send(data):
            self.dispatched += len(records)
            return
        # A send still waiting when the term ends fails as its link closes: the
        # lease stays for the next leader (the pool may have the attempt).
        if release and not self.closed:
            await self._release(pool, records)

    def _send_copy(self, pool: Pool, records: Sequence[Record]) -> None:
        """The PAIR copy of attempts the store's stream has most likely delivered
        already: never a release when it fails, since the pool may be running them."""
        if self.closed:
            return
        self._inflight.spawn(self.send(pool, records, release=False), name=f"copy to {pool.pool_id}")

    def send_backup(self, pool: Pool, records: Sequence[Record]) -> None:
        """The PAIR copy of fast-path leases, which the store already published to
        the pool right after COMMIT: sent only if, BACKUP_DELAY later, the pool has
        not reported the attempt done, so a lost stream message costs that delay
        (not a lease lapse) and a short task costs no second message (latency)."""
        if not records or self.closed:
            return
        stamps = {r.id: pool.inflight.get(r.id) for r in records}

        def due() -> None:
            self._backups.discard(handle)
            # The same dispatch still in flight (not done, not re-dispatched since).
            still = [r for r in records if r.id in pool.inflight and pool.inflight[r.id] == stamps[r.id]]
            if still:
                self._send_copy(pool, still)

        handle = asyncio.get_running_loop().call_later(BACKUP_DELAY, due)
        self._backups.add(handle)

    def fast_path_open(self) -> bool:
        """Whether reserve_fast_path could lease anything (it needs to read the records)."""
        return (not self.lanes or self.headroom.contended()) and any(
            p.free > 0 for p in self.pools.pools.values()
        )

    def reserve_fast_path(self, tasks: Sequence[Record]) -> tuple[Pool | None, list[leases_pb2.Lease]]:
        """Leases to take in the same transaction as the insert, for the tasks the
        lanes would serve next (nothing waits in any lane, or, while tenants contend,
        nothing more urgent and nothing of their tenant: headroom.py), on the pool
        with the most free slots that runs the first of them."""
        if not tasks:
            return None, []
        lanes = self.lanes
        first = tasks[0]
        pool = max(
            (p for p in self.pools.pools.values() if p.serves(first.name, first.tenant)),
            key=lambda p: p.free,
            default=None,
        )
        if pool is None:
            return None, []
        # The held slots are for a few tasks at a time: a batch larger than them
        # (a flood arriving while the lanes are empty) leaves them to the next.
        held = self.headroom.held(pool.capacity)
        room = pool.free if len(tasks) <= held else pool.free - held
        if room <= 0:
            return None, []
        leases: list[leases_pb2.Lease] = []
        now = time.monotonic()
        batch = self.flow.new_batch() if self.flow is not None else 0
        # serves_next by (priority, tenant): a batch is mostly one of each.
        next_of: dict[tuple[int, str], bool] = {}
        for record in tasks:
            if len(leases) >= room:
                break
            if lanes:
                at = (record.priority, record.tenant)
                is_next = next_of.get(at)
                if is_next is None:
                    is_next = next_of[at] = lanes.serves_next(ref_of(record).priority, record.tenant)
                if not is_next:
                    continue
            # A task that uses limits goes through the lanes' admission, as does a
            # suspended tenant's (parked there); its tenant's quota, when it has one,
            # admits it here or sends it there (flow.admit_at_insert).
            if not (
                pool.serves(record.name, record.tenant)
                and record.state == QUEUED
                and record.queue not in lanes.paused
                and not (record.HasField("flow") and record.flow.uses)
            ):
                continue
            token = ids.new_lease_token(self.token_prefix)
            tenant = record.tenant
            if tenant and not self._tenant_free(tenant) and not self._quota_admits(record, token, batch):
                continue
            pool.inflight[record.id] = now
            leases.append(leases_pb2.Lease(task_id=record.id, lease_token=token))
        return (pool, leases) if leases else (None, [])

    def _quota_admits(self, record: Record, token: str, batch: int) -> bool:
        """Whether the quota of a task's tenant (not suspended, its quota read) admits
        it at its insert; its units are taken then (flow.admit_at_insert)."""
        flow = self.flow
        if flow is None or record.tenant in self.lanes.suspended or not flow.tenants.read_once:
            return False
        return flow.admit_at_insert(ref_of(record), token, batch)

    def _tenant_free(self, tenant: str) -> bool:
        """Whether a named tenant's task may skip the lanes: the tenants were read,
        and it is neither suspended nor bound by a quota."""
        if tenant in self.lanes.suspended:
            return False
        flow = self.flow
        return flow is None or (flow.tenants.read_once and tenant not in flow.admission.quota_uses)

    async def _release(self, pool: Pool, tasks: Sequence[Record]) -> None:
        """The pool could not be reached: hand the leases back at once."""
        request = leases_pb2.ReportRequest(
            released=[
                leases_pb2.Release(
                    ref=task_record_pb2.AttemptRef(task_id=t.id, attempt=t.attempt, lease_token=t.lease_token)
                )
                for t in tasks
            ]
        )
        for t in tasks:
            pool.inflight.pop(t.id, None)
        try:
            reply = await self._store.call(contract.STORE_REPORT, request)
        except errors.TaskyardError as exc:
            log.warning("release after failed send: %s (leases will lapse)", exc)
            return
        # Only what the store handed back is free: one it refused (the pool did get
        # it and started it) keeps its units and its lease.
        released = set(reply.released)
        back = [t for t in tasks if t.id in released]
        if self.flow is not None:
            for t in back:
                self.flow.release(t.id, t.lease_token)
        self.lanes.push_all(ref_of(t) for t in back)
        self.wake.set()
