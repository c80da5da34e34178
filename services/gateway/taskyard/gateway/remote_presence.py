"""How a worker stream stands as a live pool to the suite.

Its registration with the scheduler and its survey answers (core/registration.py),
its heartbeats to the store (what `taskyard queue servers` and the dashboard show),
and the renewal of the leases it holds, which goes on only while the worker sends
heartbeats: three intervals without a word and the stream is a pool that died.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Iterable
from typing import Protocol

from taskyard.bus.v1 import dispatch_pb2, leases_pb2, pools_pb2
from taskyard.core import contract, errors, rpc
from taskyard.core.config import GatewaySettings
from taskyard.core.registration import Registration
from taskyard.core.states import WorkerState
from taskyard.gateway.remote_attempts import HeldAttempts
from taskyard.worker.v1 import worker_service_pb2 as wpb

log = logging.getLogger(__name__)

# Heartbeats a worker may miss in a row before its stream counts as a dead pool's.
MISSED_HEARTBEATS = 3


class StreamPool(Protocol):
    """What the presence reads of its stream's pool."""

    pool_id: str
    hello: wpb.Hello
    tenant: str
    task_names: list[str]
    attempts: HeldAttempts
    state: WorkerState
    pair_address: str

    def free_slots(self) -> int: ...
    def registered(self) -> None: ...
    def cancel(self, task_ids: Iterable[str]) -> None: ...


class Presence:
    def __init__(
        self,
        pool: StreamPool,
        settings: GatewaySettings,
        store: rpc.Caller,
        *,
        sign_as: str,
        on_dead: Callable[[str], None],
        clock: Callable[[], float],
    ) -> None:
        self._pool = pool
        self._settings = settings
        self._store = store
        self._on_dead = on_dead
        self._clock = clock
        self.heartbeat_interval = min(5.0, settings.lease_seconds / 4)
        self._last_heartbeat = clock()
        self.registration = Registration(
            settings,
            describe=self._register,
            survey_reply=self._survey_reply,
            on_registered=pool.registered,
            active=lambda: pool.state is not WorkerState.STOPPED,
            log=log,
            sign_as=sign_as,
        )

    def heard(self) -> None:
        """Any word from the worker: it is alive."""
        self._last_heartbeat = self._clock()

    def _tenants(self) -> list[str]:
        return [self._pool.tenant] if self._pool.tenant else []

    def _register(self) -> dispatch_pb2.Register:
        pool = self._pool
        return dispatch_pb2.Register(
            pool_id=pool.pool_id,
            server_name=pool.hello.worker_name,
            pair_address=pool.pair_address,
            task_names=pool.task_names,
            tenants=self._tenants(),
            capacity=pool.attempts.slots,
            pid=os.getpid(),
        )

    def _survey_reply(self) -> dispatch_pb2.SurveyReply:
        pool = self._pool
        return dispatch_pb2.SurveyReply(
            pool_id=pool.pool_id,
            running=pool.attempts.refs(pool.pool_id),
            free_slots=pool.free_slots(),
            capacity=pool.attempts.slots,
            task_names=pool.task_names,
            tenants=self._tenants(),
            pair_address=pool.pair_address,
            state=pool.state.value,
        )

    def _heartbeat(self) -> pools_pb2.HeartbeatRequest:
        pool = self._pool
        held = list(pool.attempts)
        return pools_pb2.HeartbeatRequest(
            pool_id=pool.pool_id,
            server_name=pool.hello.worker_name,
            max_workers=1,
            active_workers=1 if held else 0,
            idle_workers=0 if held else 1,
            running_tasks=sum(1 for h in held if h.started),
            is_running=pool.state is WorkerState.RUNNING,
            task_names=pool.task_names,
            state=pool.state.value,
            capacity=pool.attempts.slots,
            concurrency=pool.attempts.slots,
        )

    async def beat(self) -> None:
        try:
            await self._store.call(contract.STORE_HEARTBEAT, self._heartbeat())
        except errors.TaskyardError as exc:
            log.debug("heartbeat of %s failed: %s", self._pool.pool_id, exc.message)

    async def run_heartbeat(self) -> None:
        interval = min(5.0, self._settings.worker_heartbeat_interval)
        while True:
            await asyncio.sleep(interval)
            await self.beat()

    async def run_renewals(self) -> None:
        """The leases of what the worker holds, while it sends heartbeats; a cancel
        request the store's stream dropped comes back in the renewal's reply."""
        s, pool = self._settings, self._pool
        every = min(s.renew_interval, self.heartbeat_interval)
        silence = MISSED_HEARTBEATS * self.heartbeat_interval
        while True:
            await asyncio.sleep(every)
            if self._clock() - self._last_heartbeat > silence:
                self._on_dead(f"no heartbeat for {silence:g} s")
                return
            refs = pool.attempts.refs(pool.pool_id)
            if not refs:
                continue
            msg = leases_pb2.RenewLeasesRequest(refs=refs, lease_ms=int(s.lease_seconds * 1000))
            try:
                reply = await self._store.call(contract.STORE_RENEW, msg)
            except errors.TaskyardError as exc:
                log.debug("lease renewal of %s failed: %s", pool.pool_id, exc.message)
                continue
            if reply.cancel_requested:
                pool.cancel(reply.cancel_requested)
