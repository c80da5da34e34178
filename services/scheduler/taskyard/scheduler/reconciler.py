"""Restart reconciliation: leases a previous scheduler issued that no pool holds.

A scheduler leases a task (QUEUED -> ASSIGNED in the store) *before* it sends
the task to a pool. Killed between the two, it leaves rows that no pool will
ever run; the foundation rescues them only when their lease lapses (up to
``lease_seconds`` late). A (re)started scheduler knows better as soon as the
pools have told it what they hold: at the first survey a pool answers, the
scheduler asks the store (``KIND_STORE_RECONCILE``) to put back to QUEUED (no
attempt burned, guarded on state and lease token, by the database clock) every
ASSIGNED lease of that pool that

- the pool did not report holding (by lease token),
- was issued in an earlier term of the leadership (election.py): a leader's
  tokens start with ``t<term>.`` (``token_prefix``), so every lease issued
  before this leadership began, and none since (outside an election, term 0:
  a random per-instance prefix, and every lease without it),
- was issued more than ``reconcile_margin`` before the survey was sent
  (``updated_at`` of an ASSIGNED row is its lease time; nothing moves it back).

The released tasks go straight back into the lanes.

The races, and why each is safe:

- **A dispatch of ours in flight** (leased, not yet received by the pool when
  it answered): its token has our term, it is never released. Same for a
  fast-path lease the store committed for us and publishes to the pool right
  after commit (``publish_leased``) while our PAIR copy follows. The term, not
  a timestamp, is what tells ours apart: a timestamp cut-off would race with the
  request's own transit and the group commit's queue.
- **A predecessor's dispatch in flight**: it sent the lease before it died
  (kernel buffer) or the store is streaming its fast-path lease; either lands
  within milliseconds. The margin before the survey covers it: a lease younger
  than that is kept and lapses (late, never lost, never run twice). So is a
  predecessor's lease request the store commits only after we started (the
  sender is dead; only the store's stream could still deliver it, and that
  lands before our next survey).
- **A silent pool** (its survey socket not redialled yet, a partition) may well
  run the attempts: only pools that answered are named, the others keep their
  leases. It is reconciled at its own first answer (per pool, once); until
  then, and for at most one lease period, the scheduler surveys again quickly
  (``pending``) and does not count those rounds as missed surveys.
- **A pool that registers late** is reconciled when it first answers a survey.
  **A pool that is gone** (not registered, never answers) is never named: its
  leases are rescued by lapse, as before.
- **A started attempt** (RUNNING) is never touched: it is the pool's to report,
  or its lease's to lapse (then a started death: a retry, not a free release).
- **Lease token, not task id**: a pool that holds an older attempt of a task
  does not protect a newer lease.
- **Several schedulers**: only the leader reconciles, and the request carries
  its term: the store releases nothing for a term that is over (a deposed leader
  that has not noticed yet), and only leases of earlier terms. Those were all
  committed before this term began, since the store refuses a lease of a term
  that is over (the statement that raced the election's commit lands within the
  margin, as a predecessor's in-flight dispatch does).

The residual race: an attempt a pool finished *and* whose outcome has not been
committed by the time of the reconcile (the pool builds its reply, then we wait
for the others or the survey window, then ask the store). The row is still
ASSIGNED (start and completion travel together for a fast task) and no longer
held, so it is released; the late report is refused by the lease fence and the
task runs again: at-least-once, what a lapse would do to the same attempt.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Sequence

from taskyard.bus.v1 import dispatch_pb2, leases_pb2
from taskyard.core import contract, errors, rpc
from taskyard.scheduler.dispatcher import ref_of
from taskyard.scheduler.lanes import Ref

log = logging.getLogger(__name__)

PAGE = 1000


class Reconciler:
    def __init__(
        self,
        store: rpc.Caller,
        *,
        margin: float,
        horizon: float,
        term: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._margin = max(0.0, margin)
        self._horizon = horizon
        self._clock = clock
        self._started = clock()
        self.term = term
        # Every lease token this instance issues starts with it (Dispatcher); the
        # store reads the term back out of it (sql/tasks.sql release_orphaned_leases).
        self.token_prefix = f"t{term}." if term else os.urandom(4).hex() + "."
        # Pools reconciled since this scheduler started (each once).
        self.reconciled: set[str] = set()
        self.released = 0

    def pending(self, pool_ids: Iterable[str]) -> bool:
        """No pool known yet, or a known pool not reconciled yet, while a predecessor's
        leases may still be current (after one lease period every one has lapsed)."""
        if self._clock() - self._started > self._horizon:
            return False
        known = list(pool_ids)
        return not known or any(p not in self.reconciled for p in known)

    async def after_survey(
        self, replies: Sequence[dispatch_pb2.SurveyReply], surveyed_at: float
    ) -> list[Ref]:
        """Release the orphaned leases of the pools answering for the first time
        (``surveyed_at``: our clock when the survey went out); the refs to enqueue.
        A failure is logged and retried at the next survey."""
        fresh = [r for r in replies if r.pool_id and r.pool_id not in self.reconciled]
        if not fresh:
            return []
        request = leases_pb2.ReconcileRequest(
            pool_ids=sorted({r.pool_id for r in fresh}),
            held_tokens=sorted({ref.lease_token for r in fresh for ref in r.running if ref.lease_token}),
            own_token_prefix=self.token_prefix,
            limit=PAGE,
            term=self.term,
        )
        refs: list[Ref] = []
        try:
            while True:
                # The cut-off as an age, which the store applies to its own clock.
                age = self._clock() - surveyed_at + self._margin
                request.issued_before_ms_ago = int(age * 1000)
                reply = await self._store.call(contract.STORE_RECONCILE, request)
                refs.extend(ref_of(t) for t in reply.released)
                if len(reply.released) < PAGE:
                    break
        except errors.TaskyardError as exc:
            log.warning("restart reconciliation of %s: %s", ", ".join(request.pool_ids), exc)
            return refs
        self.reconciled.update(request.pool_ids)
        if refs:
            self.released += len(refs)
            log.info("released %d leases no pool holds (issued by a previous scheduler)", len(refs))
        return refs
