"""The manager's side facing the scheduler, the result-store and discovery.

Handing reports to the store (outcomes at once, start notices a little later),
slot notices on the PAIR socket, registration with the scheduler, survey answers,
discovery announcements and the heartbeat to the result-store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import Any

import psutil
import pynng

from taskyard.bus.v1 import dispatch_pb2, envelope_pb2, store_pb2
from taskyard.core import errors, hops, transport
from taskyard.core.states import WorkerState
from taskyard.worker_pool.state import PoolState

log = logging.getLogger("taskyard.worker_pool.manager")  # one logger name for the manager process

HEARTBEAT_INTERVAL = 5.0
REGISTER_TIMEOUT = 3.0
# A start notice waits this long (to twice as long) and is dropped if the attempt
# ends first: RUNNING shows for tasks that run longer, and short ones cost no write.
START_NOTICE_DELAY = 0.05
# How long an outcome waits for the log lines ahead of it (then goes anyway),
# checking every slice whether a drain has begun.
LOG_SETTLE_TIMEOUT = 2.0
LOG_SETTLE_SLICE = 0.1


class SchedulerLink(PoolState):
    # ------------------------------------------------------------ views
    def survey_reply(self) -> dispatch_pb2.SurveyReply:
        return dispatch_pb2.SurveyReply(
            pool_id=self.pool_id,
            running=self.held_refs(),
            free_slots=self.free_slots(),
            capacity=self.capacity,
            task_names=self.task_names,
            pair_address=self.pair_address,
            state=self.state.value,
            worker_pids=self.worker_pids(),
        )

    def _announcement(self) -> dispatch_pb2.Announcement:
        return dispatch_pb2.Announcement(
            service="worker_pool",
            instance_id=self.pool_id,
            task_names=self.task_names,
            pair_address=self.pair_address,
            capacity=self.capacity,
        )

    # ------------------------------------------------------------ reports
    async def _send_reports(self) -> None:
        """Once per loop iteration while there is news: the report goes to the store
        (custody, acknowledged after COMMIT) and a slot notice to the scheduler."""
        while True:
            await self._report_event.wait()
            self._report_event.clear()
            report, self._pending = self._pending, dispatch_pb2.PoolReport()
            if self._logs is not None:
                self._logs.forget((r.ref.task_id, r.ref.attempt) for r in report.released)
                self._hold_back_for_logs(report)
            if self._closing and not (report.started or report.completed or report.released or report.died):
                if self._log_waits:  # they come back within a slice, then this loop ends
                    await asyncio.wait(set(self._log_waits))
                    continue
                return
            notice, self._notice_wanted = self._notice_wanted, False
            self._hand_to_store(report)
            if notice or report.completed or report.released or report.died:
                # After the outcome's request has gone out (the forwarder's task
                # was scheduled first): the result is the one being waited for.
                asyncio.get_running_loop().call_soon(self._notify_scheduler, report)
            if self._closing:
                self._report_event.set()  # drain what came in meanwhile, then stop

    def _hold_back_for_logs(self, report: dispatch_pb2.PoolReport) -> None:
        """ops: the lines a worker sent before an outcome are stored before it, so a
        log stream that ends with the task misses none of them (a death may end its
        task too: its lines go first as well). Outcomes whose lines are not all
        acknowledged leave ``report`` and wait apart; the others go on at once, so a
        quiet task's result never waits for a chatty neighbour's lines."""
        assert self._logs is not None
        logs = self._logs
        target = 0  # the furthest unit a held-back outcome waits for
        # Most outcomes have no line in flight: the report is split (copies) only
        # when one of them waits.
        waiting_c: set[int] = set()
        for i, c in enumerate(report.completed):
            ref = c.ref
            t = logs.target_of(ref.task_id, ref.attempt)
            if not logs.is_reached(t):
                waiting_c.add(i)
                target = max(target, t)
        waiting_d: set[int] = set()
        for i, d in enumerate(report.died):
            t = logs.target_of(d.ref.task_id, d.ref.attempt)
            if not logs.is_reached(t):
                waiting_d.add(i)
                target = max(target, t)
        if not (waiting_c or waiting_d):
            return
        held, kept = dispatch_pb2.PoolReport(), dispatch_pb2.PoolReport()
        for i, c in enumerate(report.completed):
            (held if i in waiting_c else kept).completed.append(c)
        for i, d in enumerate(report.died):
            (held if i in waiting_d else kept).died.append(d)
        report.ClearField("completed")
        report.completed.extend(kept.completed)
        report.ClearField("died")
        report.died.extend(kept.died)
        task = asyncio.get_running_loop().create_task(self._after_logs(held, target), name="log-settle")
        self._log_waits.add(task)
        task.add_done_callback(self._log_waits.discard)

    async def _after_logs(self, held: dispatch_pb2.PoolReport, target: int) -> None:
        """Back into the report stream once the lines are stored, or at the settle
        limit, or within a slice of a drain's start: the manager gives the report
        loop a second to hand its last outcomes over, and an outcome matters more
        than the order of its log lines (a lost one would run the task again)."""
        assert self._logs is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + LOG_SETTLE_TIMEOUT
        try:
            while not await self._logs.reached(target, LOG_SETTLE_SLICE):
                if self._closing or loop.time() >= deadline:
                    break
        finally:
            self._pending.completed.extend(held.completed)
            self._pending.died.extend(held.died)
            self._report_event.set()

    def _hand_to_store(self, report: dispatch_pb2.PoolReport) -> None:
        """Outcomes go to the store at once. Start notices wait START_NOTICE_DELAY
        and are dropped when the outcome comes first: a short task costs the store
        no start write and its result never queues behind one. Correctness does not
        depend on them: a death carries the pool's own started flag, and the store
        accepts ASSIGNED -> final with the start time the outcome carries."""
        young, old = self._young_starts, self._old_starts
        for ref in report.started:
            young[(ref.task_id, ref.attempt)] = ref
        # Then out again if it ended: a start in the same report as its end is dropped too.
        for ended in (report.completed, report.released, report.died):
            for e in ended:
                ref = e.ref
                key = (ref.task_id, ref.attempt)
                young.pop(key, None)
                old.pop(key, None)
        if self._outcomes is not None and (report.completed or report.released or report.died):
            del report.started[:]
            hops.stamp(report.completed, "pool.reported")
            self._outcomes.submit(report)

    async def _send_start_notices(self) -> None:
        """Two generations: a start is sent one to two ticks after it happened."""
        while True:
            await asyncio.sleep(START_NOTICE_DELAY)
            due, self._old_starts, self._young_starts = self._old_starts, self._young_starts, {}
            if due and self._starts is not None:
                self._starts.submit(dispatch_pb2.PoolReport(started=list(due.values())))

    def _notify_scheduler(self, report: dispatch_pb2.PoolReport) -> None:
        """Tell the scheduler which slots came free. Lossy by design: a notice that
        does not arrive (no scheduler connected) is corrected by the next survey."""
        notice = dispatch_pb2.PoolReport(
            pool_id=self.pool_id,
            free_slots=self.free_slots(),
            state=self.state.value,
            released=report.released,
            died=[store_pb2.Death(ref=d.ref, started=d.started) for d in report.died],
        )
        add = notice.completed.add  # the refs only: what the scheduler reads
        for c in report.completed:
            add().ref.CopyFrom(c.ref)
        try:
            self._pair.send(transport.encode(envelope_pb2.KIND_POOL_REPORT, notice), block=False)
        except pynng.TryAgain:
            log.debug("slot notice dropped: no scheduler connected")
        except pynng.NNGException as exc:
            log.debug("slot notice not sent: %s", exc)

    def _on_pair_connected(self) -> None:
        self._pair_peers += 1

    def _on_pair_lost(self) -> None:
        self._pair_peers = max(0, self._pair_peers - 1)
        if self.state in (WorkerState.STARTING, WorkerState.RUNNING) and self._registered.is_set():
            log.info("scheduler PAIR peer went away: registering again")
            self._register_wanted.set()

    # ------------------------------------------------------------ registration and surveys
    async def _registration_loop(self) -> None:
        s = self.settings
        req = transport.Requester(
            s.registration_address, max_message_bytes=s.max_message_bytes, timeout=REGISTER_TIMEOUT
        )
        delay, failures = 0.1, 0
        try:
            while True:
                await self._register_wanted.wait()
                if self.state not in (WorkerState.STARTING, WorkerState.RUNNING):
                    return
                self._register_wanted.clear()
                msg = dispatch_pb2.Register(
                    pool_id=self.pool_id,
                    server_name=s.server_name,
                    pair_address=self.pair_address,
                    task_names=self.task_names,
                    capacity=self.capacity,
                    pid=os.getpid(),
                )
                try:
                    reply = await req.request(envelope_pb2.KIND_REGISTER, msg, dispatch_pb2.RegisterReply)
                except errors.TaskyardError as exc:
                    failures += 1
                    (log.warning if failures in (1, 10) or failures % 100 == 0 else log.debug)(
                        "registration with %s failed (%d): %s", s.registration_address, failures, exc.message
                    )
                    self._register_wanted.set()
                    await asyncio.sleep(delay)
                    delay = min(2.0, delay * 2)
                    continue
                delay, failures = 0.1, 0
                if reply.scheduler_id != self.scheduler_id:
                    log.info("registered with scheduler %s", reply.scheduler_id or "?")
                self.scheduler_id = reply.scheduler_id
                if reply.survey_address and reply.survey_address != self._survey_address:
                    self._survey_address = reply.survey_address
                    old, self._respondent = self._respondent, self._open_respondent(reply.survey_address)
                    if old is not None:
                        old.close()
                self._registered.set()
                self._mark_dirty()
        finally:
            req.close()

    def _open_respondent(self, address: str) -> Any:
        return transport.open_socket(
            pynng.Respondent0, max_message_bytes=self.settings.max_message_bytes, dial=address
        )

    async def _answer_surveys(self) -> None:
        while True:
            sock = self._respondent
            try:
                raw = await sock.arecv()
            except pynng.Closed:
                if self._closing or sock is self._respondent:
                    return
                continue  # replaced by a new one (survey address changed)
            try:
                env = transport.decode(raw)  # the reply repeats its message id
                if env.kind != envelope_pb2.KIND_SURVEY:
                    continue
                survey = transport.unpack(env, dispatch_pb2.Survey)
            except Exception:
                log.warning("malformed survey dropped")
                continue
            if survey.scheduler_id and self._registered.is_set() and survey.scheduler_id != self.scheduler_id:
                log.info(
                    "survey from scheduler %s (registered with %s): registering again",
                    survey.scheduler_id,
                    self.scheduler_id,
                )
                self._register_wanted.set()
            reply = transport.encode(envelope_pb2.KIND_SURVEY, self.survey_reply(), message_id=env.message_id)
            try:
                await sock.asend(reply)
            except pynng.NNGException as exc:
                log.debug("survey reply dropped: %s", exc)

    # ------------------------------------------------------------ heartbeat
    def heartbeat(self) -> store_pb2.HeartbeatRequest:
        live = [w for w in self.workers.values() if not w.gone]
        active = sum(1 for w in live if w.held)
        rss = 0
        for pid in [os.getpid(), *(w.pid for w in live)]:
            with contextlib.suppress(psutil.Error, OSError):
                rss += psutil.Process(pid).memory_info().rss
        return store_pb2.HeartbeatRequest(
            pool_id=self.pool_id,
            server_name=self.settings.server_name,
            max_workers=max(1, self.settings.workers),
            active_workers=active,
            idle_workers=len(live) - active,
            running_tasks=sum(1 for w in live for h in w.held.values() if h.started),
            is_running=self.state is WorkerState.RUNNING,
            task_names=self.task_names,
            state=self.state.value,
            rss_bytes=rss,
            capacity=self.capacity,
            concurrency=self.concurrency,
            processes=self.process_infos(),
            last_dispatch_at_us=self.last_dispatch_us,
        )

    async def _beat(self, req: transport.Requester, limit: float) -> None:
        try:
            await req.request(
                envelope_pb2.KIND_STORE_HEARTBEAT, self.heartbeat(), store_pb2.HeartbeatReply, timeout=limit
            )
            self._heartbeat_failures = 0
        except errors.TaskyardError as exc:
            self._heartbeat_failures += 1
            (log.warning if self._heartbeat_failures in (1, 10) else log.debug)(
                "heartbeat to %s failed: %s", self.settings.store_address, exc.message
            )

    async def _heartbeat_loop(self) -> None:
        s = self.settings
        req = transport.Requester(s.store_address, max_message_bytes=s.max_message_bytes, timeout=4.0)
        try:
            while True:
                await self._beat(req, 4.0)
                await asyncio.sleep(min(HEARTBEAT_INTERVAL, s.worker_heartbeat_interval))
        finally:
            req.close()
