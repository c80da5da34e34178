"""Assembly: the gRPC server (TaskService, health, reflection) and the NNG sockets behind it."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from taskyard.bus.v1 import dispatch_pb2
from taskyard.core import codec, discovery, errors, ids, transport
from taskyard.core.config import Settings
from taskyard.core.priority import LANES, Priority
from taskyard.gateway.lanes import Lane, Lanes
from taskyard.gateway.names import KnownNames
from taskyard.gateway.queues import QUEUE_SERVICE_NAME, QueueService
from taskyard.gateway.schedules import ScheduleService
from taskyard.gateway.service import TaskService
from taskyard.gateway.waiters import EventSubscriber, Waiters
from taskyard.v1 import (
    schedule_service_pb2,
    schedule_service_pb2_grpc,
    task_service_pb2,
    task_service_pb2_grpc,
)

log = logging.getLogger(__name__)

TASK_SERVICE_NAME = task_service_pb2.DESCRIPTOR.services_by_name["TaskService"].full_name
SCHEDULE_SERVICE_NAME = schedule_service_pb2.DESCRIPTOR.services_by_name["ScheduleService"].full_name
SERVICE_NAMES = (
    TASK_SERVICE_NAME,
    SCHEDULE_SERVICE_NAME,
    QUEUE_SERVICE_NAME,
    health.SERVICE_NAME,
    reflection.SERVICE_NAME,
)
# How often the store is probed (health + task names) once it answered.
STORE_PROBE_INTERVAL = 5.0
STORE_PROBE_INTERVAL_UNHEALTHY = 0.5


def grpc_bind_address(host: str, port: int) -> str:
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{host}:{port}"


class Gateway:
    def __init__(self, settings: Settings, *, discovery_enabled: bool = True) -> None:
        self.settings = settings
        self.instance_id = ids.new_instance_id("gateway")
        timeout = settings.request_timeout
        mmb = settings.max_message_bytes
        self.store = transport.Requester(settings.store_address, max_message_bytes=mmb, timeout=timeout)
        self._lane_requesters = {
            p: transport.Requester(settings.lane_address(p), max_message_bytes=mmb, timeout=timeout)
            for p in LANES
        }
        self.lanes = Lanes({p: Lane(r, max_bytes=max(1, mmb // 2)) for p, r in self._lane_requesters.items()})
        self.peer: discovery.Peer | None = None
        if discovery_enabled:
            self.peer = discovery.Peer(
                settings.discovery_address, self._announcement, interval=settings.announce_interval
            )
        self.names = KnownNames(self.store, self.peer, announce_interval=settings.announce_interval)
        self.waiters = Waiters()
        self.events = EventSubscriber(settings.events_address, self.waiters, max_message_bytes=mmb)
        self.health = health.aio.HealthServicer()  # type: ignore[attr-defined]
        self.service = TaskService(
            limits=codec.Limits.from_settings(settings),
            store=self.store,
            lanes=self.lanes,
            names=self.names,
            waiters=self.waiters,
        )
        self.server = grpc.aio.server(
            options=[
                ("grpc.max_receive_message_length", settings.grpc_max_message_bytes),
                ("grpc.max_send_message_length", settings.grpc_max_message_bytes),
            ],
            maximum_concurrent_rpcs=settings.grpc_max_concurrent_rpcs,
        )
        task_service_pb2_grpc.add_TaskServiceServicer_to_server(self.service, self.server)
        schedule_service_pb2_grpc.add_ScheduleServiceServicer_to_server(
            ScheduleService(
                store=self.store,
                lane=self._lane_requesters[Priority.NORMAL],
                names=self.names,
                limits=codec.Limits.from_settings(settings),
            ),
            self.server,
        )
        QueueService.register(self.store, self.server)  # ops slice
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        reflection.enable_server_reflection(SERVICE_NAMES, self.server)
        self._tasks: list[asyncio.Task[None]] = []
        self.serving = False
        self.port = 0

    def _announcement(self) -> dispatch_pb2.Announcement:
        return dispatch_pb2.Announcement(service="gateway", instance_id=self.instance_id)

    async def start(self) -> int:
        """Bind, start serving and the background loops; return the bound port."""
        s = self.settings
        self.port = self.server.add_insecure_port(grpc_bind_address(s.grpc_host, s.grpc_port))
        if self.port == 0:
            raise RuntimeError(f"cannot bind {grpc_bind_address(s.grpc_host, s.grpc_port)}")
        for name in ("", TASK_SERVICE_NAME):
            await self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.server.start()
        loop = asyncio.get_running_loop()
        self._tasks.append(loop.create_task(self.events.run(), name="gateway-events"))
        if self.peer is not None:
            self._tasks.append(loop.create_task(self.peer.run(), name="gateway-discovery"))
        self._tasks.append(loop.create_task(self._probe_store(), name="gateway-store-probe"))
        log.info("gateway ready on %s", grpc_bind_address(s.grpc_host, self.port))
        return self.port

    async def _set_serving(self, serving: bool) -> None:
        if serving == self.serving:
            return
        self.serving = serving
        hc = health_pb2.HealthCheckResponse
        value = hc.SERVING if serving else hc.NOT_SERVING
        for name in ("", TASK_SERVICE_NAME):
            await self.health.set(name, value)
        log.info("store %s: %s", "reachable" if serving else "unreachable", hc.ServingStatus.Name(value))

    async def _probe_store(self) -> None:
        """SERVING once the store answers; NOT_SERVING after two failed probes in a row."""
        failures = 0
        while True:
            try:
                await self.names.refresh()
            except errors.TaskyardError as exc:
                failures += 1
                log.debug("store probe failed: %s", exc)
                if failures >= 2:
                    await self._set_serving(False)
            else:
                failures = 0
                await self._set_serving(True)
            await asyncio.sleep(STORE_PROBE_INTERVAL if self.serving else STORE_PROBE_INTERVAL_UNHEALTHY)

    async def stop(self, grace: float = 5.0) -> None:
        """Stop accepting, let calls in flight finish within ``grace``, close the sockets."""
        await self.health.enter_graceful_shutdown()
        self.waiters.close()  # WaitTask calls answer now with what the store says
        await self.server.stop(grace)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.lanes.drain(), grace)
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        self.events.close()
        if self.peer is not None:
            self.peer.close()
        self.store.close()
        for r in self._lane_requesters.values():
            r.close()
        log.info("gateway stopped")


async def serve(settings: Settings, stop: asyncio.Event, *, grace: float = 5.0) -> None:
    gateway = Gateway(settings)
    await gateway.start()
    try:
        await stop.wait()
    finally:
        log.info("gateway stopping (grace %.1fs)", grace)
        await gateway.stop(grace)
