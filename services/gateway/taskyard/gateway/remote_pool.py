"""A worker on the public stream, as a pool on the bus.

The scheduler knows pools, not streams: each ``WorkerService.Work`` stream gets a
pool id and everything a pool has on the bus (a sealed PAIR listener the scheduler
dials, registration, survey answers, heartbeats to the store, the store's streams
of leased attempts and cancel requests, lease renewals), so priorities, fair
share, limits and fencing apply to it unchanged. What the worker says about an
attempt is fenced here first (remote_attempts.py), then reported to the store
(outcomes.py), which fences it again.

The stream's own rules on top of a pool's: a timeout is enforced here (the
attempt is failed with TimeoutError and revoked at its deadline); a cancel is
passed on and, if the attempt is still held ``cancel_deadline`` later, revoked
and reported as killed (CANCELLED, step KILL); a worker that stops sending
heartbeats for three intervals is a pool that died.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

import pynng

from taskyard.bus.v1 import dispatch_pb2, leases_pb2, task_record_pb2
from taskyard.core import contract, dialer, ids, limit_declarations, roles, rpc, transport
from taskyard.core.config import GatewaySettings
from taskyard.core.held_starts import HeldStarts
from taskyard.core.pair_peers import SchedulerPeers
from taskyard.core.states import WorkerState
from taskyard.gateway.outcomes import StoreWriter
from taskyard.gateway.remote_attempts import Held, HeldAttempts, bus_ref, public_ref
from taskyard.gateway.remote_codec import Terms, late_completion, outcome_json
from taskyard.gateway.remote_presence import Presence
from taskyard.v1 import limit_pb2, task_pb2
from taskyard.worker.v1 import worker_service_pb2 as wpb

log = logging.getLogger(__name__)

# How long a new stream waits for the store to take its functions' declared limits
# before it is welcomed anyway (the declaration goes on in the background).
LIMITS_DECLARE_WAIT = 5.0
# Every socket of a remote pool signs as a pool does, with the worker-pool role's key
# (the gateway holds it: contract.KEYS_HELD), so the scheduler and the store grant it
# a pool's rights and no more (contract.SENDERS).
AS_POOL = roles.WORKER_POOL
# An outcome with neither a result nor a failure.
_NO_OUTCOME = wpb.Failure(type="Error", message="the worker reported neither a result nor a failure")

Send = Callable[[wpb.WorkResponse], None]


class RemotePool:
    """One stream's pool. ``send`` queues a message to the worker; ``on_dead`` ends
    the stream (the worker stopped answering)."""

    def __init__(
        self,
        settings: GatewaySettings,
        hello: wpb.Hello,
        *,
        tenant: str,
        send: Send,
        on_dead: Callable[[str], None],
        declared: list[limit_pb2.Limit] | None = None,
        clock: Callable[[], float] = time.monotonic,
        store: rpc.Caller | None = None,
    ) -> None:
        self._settings = settings
        self.hello = hello
        self.pool_id = ids.new_instance_id("worker")
        self.tenant = tenant
        self._send = send
        self.attempts = HeldAttempts(hello.slots)
        self.state = WorkerState.STARTING
        self.declarations = {d.name: d for d in hello.tasks}
        self._declared = declared or []
        self.task_names = sorted(self.declarations)
        self._terms = Terms(settings, hello.tasks)
        mmb = settings.max_message_bytes
        # The store's REQ sockets: the pool's own, unless a test gives a fake.
        self._own_store: rpc.Requester | None = None
        if store is None:
            store = self._own_store = rpc.Requester(
                settings.store_addresses, max_message_bytes=mmb, timeout=4.0, sign_as=AS_POOL
            )
        self._store = store
        # A slot notice goes with each request to the store (StoreWriter's batches,
        # which grow while one is in flight): one notice per batch of outcomes. Sent
        # any sooner (per message of the worker), the scheduler refills a slot or two
        # at a time and the stream settles into many small messages each way.
        self.writer = StoreWriter(self._store, on_send=self._send_notice)
        self._notice: dispatch_pb2.PoolReport | None = None
        self._starts = HeldStarts()
        self._starts_tick: asyncio.TimerHandle | None = None
        self._pair: SchedulerPeers | None = None
        self.pair_address = ""
        self._streams: transport.Inbox | None = None
        self.presence = Presence(self, settings, store, sign_as=AS_POOL, on_dead=on_dead, clock=clock)
        self._registration = self.presence.registration
        self._tasks: list[asyncio.Task[Any]] = []
        self._timers: dict[tuple[str, int], asyncio.TimerHandle] = {}
        self._drained = asyncio.Event()

    # ------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        s = self._settings
        sock = transport.open_pair(
            max_message_bytes=s.max_message_bytes,
            listen=s.pool_pair_listen_address(self.pool_id),
            several=True,
            audience=AS_POOL,
        )
        bound = transport.listen_address(sock)
        self.pair_address = s.advertised_pair_address(bound)
        self._pair = SchedulerPeers(
            sock, where=bound, on_lost=self._registration.want, hello_timeout=s.request_timeout
        )
        self._pair.attach(asyncio.get_running_loop())
        streams = dialer.open_dialer(
            pynng.Sub0, s.pool_stream_addresses, max_message_bytes=s.max_message_bytes
        )
        streams.subscribe(transport.dispatch_topic(self.pool_id))
        streams.subscribe(transport.cancel_topic(self.pool_id))
        self._streams = transport.Inbox(streams)
        self._registration.open_surveys()
        self.state = WorkerState.RUNNING
        self._registration.want()
        for name, coro in (
            ("pair", self._receive_pair()),
            ("streams", self._receive_streams()),
            ("registration", self._registration.run()),
            ("surveys", self._registration.answer_surveys()),
            ("heartbeat", self.presence.run_heartbeat()),
            ("renewals", self.presence.run_renewals()),
            ("writer", self.writer.run()),
        ):
            self._tasks.append(asyncio.create_task(coro, name=f"{self.pool_id}-{name}"))
        # The store learns the pool and its task names (submissions of them are accepted),
        # and the limits its functions declare (a task submitted from now on uses them).
        declaring = asyncio.create_task(limit_declarations.declare_limits(self._store, self._declared))
        self._tasks.append(declaring)
        await self.presence.beat()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(declaring), LIMITS_DECLARE_WAIT)

    async def close(self) -> None:
        """The stream ended: whatever is still held is given up as a dead pool's is
        (started: an attempt burned; not started: back to its queue, none burned)."""
        if self.state is WorkerState.STOPPED:
            return
        died = [self._terms.death(h, self.pool_id) for h in self.attempts.take_all()]
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        if self._starts_tick is not None:
            self._starts_tick.cancel()
        self.state = WorkerState.STOPPED
        if died:
            self.writer.report(leases_pb2.ReportRequest(died=died))
        self._notify(leases_pb2.ReportRequest(died=died))
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.writer.flushed(), self._settings.request_timeout * 2)
        self._send_notice()
        await self.presence.beat()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for sock in (self._pair, self._streams):
            if sock is not None:
                sock.close()
        self._registration.close()
        if self._own_store is not None:
            self._own_store.close()

    def drain(self) -> None:
        """No new attempts: the scheduler is told at once; the held ones finish."""
        if self.state is WorkerState.RUNNING:
            self.state = WorkerState.DRAINING
            self._notify(leases_pb2.ReportRequest())
            self._send_notice()
        self._mark_drained()

    async def drained(self) -> None:
        """Returns once the pool drains and holds nothing (an outcome, a timeout or a
        revoke ended its last attempt)."""
        await self._drained.wait()

    @property
    def idle(self) -> bool:
        return not len(self.attempts)

    # ------------------------------------------------------------ from the scheduler and the store
    async def _receive_pair(self) -> None:
        assert self._pair is not None
        while True:
            try:
                raw = await self._pair.arecv()
            except pynng.Closed:
                return
            self._dispatched(raw, "the PAIR socket")

    async def _receive_streams(self) -> None:
        assert self._streams is not None
        dispatch, cancel = transport.dispatch_topic(self.pool_id), transport.cancel_topic(self.pool_id)
        while True:
            try:
                raw = await self._streams.recv()
            except pynng.Closed:
                return
            if raw.startswith(dispatch):
                self._dispatched(raw[len(dispatch) :], "the leased stream")
            elif raw.startswith(cancel):
                try:
                    batch = contract.EVENTS.open(raw[len(cancel) :])
                except Exception:
                    log.warning("malformed message dropped on the cancel stream")
                    continue
                if batch is not None:
                    self.cancel(e.task_id for e in batch.events if e.type == "task.cancel_requested")

    def _dispatched(self, raw: bytes, where: str) -> None:
        try:
            batch = contract.DISPATCH.open(raw)
        except Exception:
            log.warning("malformed message dropped on %s", where)
            return
        if batch is None or not batch.tasks:
            return  # not a dispatch, or a scheduler's hello (core/pair_peers.py)
        out = wpb.Attempts()
        released: list[leases_pb2.Release] = []
        for rec in batch.tasks:
            if self.attempts.seen(rec):
                continue  # the second copy (leased stream and PAIR)
            if self.state is not WorkerState.RUNNING or not self.attempts.free:
                # Not this worker's to run (draining, or a slot the scheduler counted
                # twice): back to its queue, no attempt burned.
                released.append(
                    leases_pb2.Release(
                        ref=task_record_pb2.AttemptRef(
                            task_id=rec.id,
                            attempt=rec.attempt,
                            lease_token=rec.lease_token,
                            worker_id=self.pool_id,
                        )
                    )
                )
                continue
            held = self.attempts.hold(rec)
            out.attempts.append(self._terms.attempt(held))
            self._arm_deadline(held)
            if rec.cancel_requested:
                self._pass_cancel(held, rec.cancel_reason)
        if out.attempts:
            self._send(wpb.WorkResponse(attempts=out))
        if released:
            report = leases_pb2.ReportRequest(released=released)
            self.writer.report(report)
            self._notify(report)

    # ------------------------------------------------------------ timeouts and cancels
    def _arm_deadline(self, held: Held) -> None:
        timeout_ms = self._terms.timeout_ms(held.record)
        if timeout_ms:
            self._timers[held.key] = asyncio.get_running_loop().call_later(
                timeout_ms / 1000, self._timed_out, held
            )

    def _disarm(self, held: Held) -> None:
        handle = self._timers.pop(held.key, None)
        if handle is not None:
            handle.cancel()

    def _timed_out(self, held: Held) -> None:
        self._timers.pop(held.key, None)
        if self.attempts.find(public_ref(held.record)) is None:
            return
        secs = self._terms.timeout_ms(held.record) / 1000
        failure = wpb.Failure(type="TimeoutError", message=f"timed out after {secs:g}s", retryable=True)
        self._complete(held, success=False, failure=failure)
        self._send(wpb.WorkResponse(revoke=wpb.Revoke(ref=public_ref(held.record), reason="timeout")))

    def cancel(self, task_ids: Iterable[str]) -> None:
        for task_id in task_ids:
            held = self.attempts.by_task(task_id)
            if held is not None and not held.cancelling:
                self._pass_cancel(held, "cancel requested")

    def _pass_cancel(self, held: Held, reason: str) -> None:
        held.cancelling = True
        grace = self._settings.cancel_deadline
        msg = wpb.Cancel(ref=public_ref(held.record), reason=reason or "cancel requested")
        msg.grace.FromMilliseconds(int(grace * 1000))
        self._send(wpb.WorkResponse(cancel=msg))
        self._disarm(held)
        self._timers[held.key] = asyncio.get_running_loop().call_later(grace, self._revoke_cancelled, held)

    def _revoke_cancelled(self, held: Held) -> None:
        """The attempt did not stop in time: its lease ends here (CANCELLED, step KILL)."""
        self._timers.pop(held.key, None)
        if self.attempts.find(public_ref(held.record)) is None:
            return
        self._end(held)
        death = self._terms.death(held, self.pool_id, cancel_step=task_pb2.CANCEL_STEP_KILL)
        report = leases_pb2.ReportRequest(died=[death])
        self.writer.report(report)
        self._notify(report)
        self._send(
            wpb.WorkResponse(revoke=wpb.Revoke(ref=public_ref(held.record), reason="cancel not honoured"))
        )

    # ------------------------------------------------------------ from the worker
    def on_heartbeat(self) -> None:
        self.presence.heard()

    def on_started(self, ref: wpb.AttemptRef) -> None:
        held = self.attempts.find(ref)
        if held is None:
            self._refuse(ref, "not a current lease of this worker")
            return
        if not held.started:
            held.started_at_us = int(time.time() * 1e6)
            # Held back: a short attempt's outcome carries its start (core/held_starts.py).
            self._starts.hold([bus_ref(held, self.pool_id)])
            if self._starts_tick is None:
                self._starts_tick = asyncio.get_running_loop().call_later(
                    self._settings.start_notice_delay, self._on_starts_tick
                )

    def _on_starts_tick(self) -> None:
        """The starts of attempts that outlived the hold-back go as notices (RUNNING)."""
        self._starts_tick = None
        due = self._starts.age()
        if due:
            self.writer.report(leases_pb2.ReportRequest(started=due))
        if self._starts:
            self._starts_tick = asyncio.get_running_loop().call_later(
                self._settings.start_notice_delay, self._on_starts_tick
            )

    def on_reports(self, msg: wpb.Reports) -> None:
        """Starts first (an attempt's start and outcome may share the message), then
        the outcomes, to the store and the scheduler as one report."""
        for started in msg.started:
            self.on_started(started.ref)
        report = leases_pb2.ReportRequest()
        for outcome in msg.outcomes:
            self.on_outcome(outcome, into=report)
        if report.completed:
            self.writer.report(report)
            self._notify(report)

    def on_outcome(self, outcome: wpb.Outcome, *, into: leases_pb2.ReportRequest | None = None) -> None:
        """``into``: the completion joins that report (its sender sends it), else goes now."""
        held = self.attempts.find(outcome.ref)
        if held is None:
            reason = "the attempt's lease is no longer this worker's"
            if self.attempts.ended(outcome.ref):
                # Late: its lease was revoked. The store refuses it too and counts it on
                # the task (late_reports), as a pool's late report is counted; the worker
                # hears of the refusal once the store has.
                answered = self.writer.report_answered(
                    leases_pb2.ReportRequest(completed=[late_completion(outcome, self.pool_id)])
                )
                answered.add_done_callback(lambda _: self._refuse(outcome.ref, reason))
            else:
                self._refuse(outcome.ref, reason)
            return
        kind = outcome.WhichOneof("outcome")
        if kind == "result":
            text = outcome_json(outcome)
            if len(text) > self._settings.max_result_bytes:
                failure = wpb.Failure(
                    type="ResultTooLarge",
                    message=f"the result is {len(text)} bytes as JSON, more than the "
                    f"{self._settings.max_result_bytes} allowed",
                )
                self._complete(held, success=False, failure=failure, cancelled=outcome.cancelled, into=into)
            else:
                self._complete(held, success=True, result_json=text, cancelled=outcome.cancelled, into=into)
        else:
            failure = (
                outcome.failure if kind == "failure" else wpb.Failure(type="Error", message="no outcome")
            )
            self._complete(held, success=False, failure=failure, cancelled=outcome.cancelled, into=into)

    def on_logs(self, msg: wpb.LogLines) -> None:
        if self.attempts.find(msg.ref) is None:
            return  # lines of an attempt no longer held go nowhere (as a dead worker's)
        self.writer.logs(msg.ref, msg.lines)

    def on_progress(self, msg: wpb.Progress) -> None:
        if self.attempts.find(msg.ref) is None:
            return
        self.writer.progress(msg.ref, msg.fraction, msg.message)

    def _refuse(self, ref: wpb.AttemptRef, reason: str) -> None:
        self._send(wpb.WorkResponse(refused=wpb.Refused(ref=ref, reason=reason)))

    # ------------------------------------------------------------ reports
    def _complete(
        self,
        held: Held,
        *,
        success: bool,
        result_json: bytes = b"",
        failure: wpb.Failure | None = None,
        cancelled: bool = False,
        into: leases_pb2.ReportRequest | None = None,
    ) -> None:
        self._end(held)
        self._disarm(held)
        c = self._terms.completion(
            held, self.pool_id, success=success, result_json=result_json, failure=failure, cancelled=cancelled
        )
        if into is not None:
            into.completed.append(c)
            return
        report = leases_pb2.ReportRequest(completed=[c])
        self.writer.report(report)
        self._notify(report)

    def _end(self, held: Held) -> None:
        self.attempts.end(held)
        self._starts.take(held.key)  # its end carries the start, if not gone yet
        self._mark_drained()

    def _mark_drained(self) -> None:
        if self.state is WorkerState.DRAINING and self.idle:
            self._drained.set()

    def _notify(self, report: leases_pb2.ReportRequest) -> None:
        """What ``report`` frees, into the next slot notice to the scheduler."""
        notice = self._notice
        if notice is None:
            notice = self._notice = dispatch_pb2.PoolReport(pool_id=self.pool_id)
        notice.released.extend(report.released)
        notice.died.extend(leases_pb2.Death(ref=d.ref, started=d.started) for d in report.died)
        for c in report.completed:
            notice.completed.add(success=c.success, cancel_step=c.cancel_step).ref.CopyFrom(c.ref)

    def _send_notice(self) -> None:
        """The slot notice gathered so far, with the free slots and state of now (lossy:
        the next survey corrects it)."""
        notice, self._notice = self._notice, None
        if notice is None or self._pair is None:
            return
        notice.free_slots = self.free_slots()
        notice.state = self.state.value
        self._pair.send(contract.POOL_REPORT.encode(notice))

    def free_slots(self) -> int:
        return self.attempts.free if self.state is WorkerState.RUNNING else 0

    # ------------------------------------------------------------ what the presence reads
    def registered(self) -> None:
        """A registration went through: the scheduler hears the slots at once."""
        self._notify(leases_pb2.ReportRequest())
        self._send_notice()
