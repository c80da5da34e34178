"""Assembly: the gRPC server (TaskService, health, reflection) and the NNG sockets behind it."""
# Length: __init__ wires the gateway's services and bus clients, one line each.

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import signal
from typing import TYPE_CHECKING

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from taskyard.bus.v1 import dispatch_pb2
from taskyard.core import codec, contract, discovery, errors, ids, rpc, tracing
from taskyard.core.background import Background, until_stopped
from taskyard.core.config import GatewaySettings
from taskyard.core.health import mark_ready
from taskyard.core.priority import LANES, Priority
from taskyard.gateway import auth, reflection, tls
from taskyard.gateway.admission import Admission, Interceptor
from taskyard.gateway.bodies import Decoder
from taskyard.gateway.event_service import EVENT_SERVICE_NAME, EventService
from taskyard.gateway.failures import FAILURE_SERVICE_NAME, FailureService
from taskyard.gateway.health_service import HealthService
from taskyard.gateway.lanes import Lane, Lanes
from taskyard.gateway.limit_catalog import LimitCatalog
from taskyard.gateway.limits import LIMIT_SERVICE_NAME, LimitService
from taskyard.gateway.names import KnownNames
from taskyard.gateway.queues import QUEUE_SERVICE_NAME, QueueService
from taskyard.gateway.schedules import ScheduleService
from taskyard.gateway.scoped import Scoped
from taskyard.gateway.service import TaskService
from taskyard.gateway.tenancy import TENANT_SERVICE_NAME, Tenancy, TenantCache
from taskyard.gateway.tenant_service import TenantService
from taskyard.gateway.waiters import EventSubscriber, Waiters
from taskyard.gateway.worker_service import WORKER_SERVICE_NAME, WorkerService
from taskyard.v1 import (
    schedule_service_pb2,
    schedule_service_pb2_grpc,
    task_service_pb2,
    task_service_pb2_grpc,
)

if TYPE_CHECKING:
    from taskyard.gateway.dashboard.site import Dashboard

log = logging.getLogger(__name__)

TASK_SERVICE_NAME = task_service_pb2.DESCRIPTOR.services_by_name["TaskService"].full_name
SCHEDULE_SERVICE_NAME = schedule_service_pb2.DESCRIPTOR.services_by_name["ScheduleService"].full_name
SERVICE_NAMES = (
    TASK_SERVICE_NAME,
    SCHEDULE_SERVICE_NAME,
    LIMIT_SERVICE_NAME,
    QUEUE_SERVICE_NAME,
    EVENT_SERVICE_NAME,
    FAILURE_SERVICE_NAME,
    TENANT_SERVICE_NAME,
    WORKER_SERVICE_NAME,
    health.SERVICE_NAME,
)
# How often the store is probed once it answered, and how long a probe waits. The
# store answers from its readiness verdict (result_store/readiness.py) and the
# names it holds, without reading its database, so a slow answer means a busy
# store more often than a stuck one: a refusal (it cannot commit, or its clock is
# off) makes the gateway NOT_SERVING at once, no answer in time only after
# SLOW_ROUNDS rounds in a row (within about SLOW_ROUNDS * (timeout + interval)).
STORE_PROBE_INTERVAL = 1.0
STORE_PROBE_INTERVAL_UNHEALTHY = 0.5
STORE_PROBE_TIMEOUT = 2.0
SLOW_ROUNDS = 3
# The health service name that follows only the gateway's event loop: SERVING while
# the process answers, whatever the stores say. The liveness probe's (a restart
# cures a stuck loop, never a store that cannot commit); readiness is "".
LIVENESS_SERVICE = "taskyard.liveness"
# With TASKYARD_GRPC_MAX_CONNECTION_AGE set, calls in flight get this long to end
# before the connection is closed: longer than the longest WaitTask (300 s).
CONNECTION_AGE_GRACE = 330.0


def server_spans() -> Interceptor:
    """The gRPC instrumentation's server span for every call but health checks
    and reflection (probes and tools would flood the traces); it joins the
    caller's trace from its ``traceparent`` metadata."""
    from opentelemetry.instrumentation.grpc import aio_server_interceptor, filters

    quiet = filters.any_of(filters.health_check(), filters.service_prefix("grpc.reflection"))
    interceptor: Interceptor = aio_server_interceptor(filter_=filters.negate(quiet))  # type: ignore[no-untyped-call]
    return interceptor


def _refused(exc: errors.TaskyardError) -> bool:
    """The store answered that it cannot serve (not a probe that went unanswered)."""
    return exc.reason == contract.STORE_NOT_READY


def _milliseconds(seconds: float) -> int:
    return int(seconds * 1000)


def server_options(settings: GatewaySettings) -> list[tuple[str, int]]:
    """Message limits, keepalive and idle limits (so dead or idle connections close),
    and no port sharing: a second gateway on a taken port fails instead of splitting it."""
    ms = _milliseconds
    options = [
        ("grpc.max_receive_message_length", settings.grpc_max_message_bytes),
        ("grpc.max_send_message_length", settings.grpc_max_message_bytes),
        ("grpc.so_reuseport", 0),
        # Ping each connection after this long without reads; no ack within the timeout
        # closes it (a half-open peer), also while a WaitTask sends nothing for minutes.
        ("grpc.keepalive_time_ms", ms(settings.grpc_keepalive_time)),
        ("grpc.keepalive_timeout_ms", ms(settings.grpc_keepalive_timeout)),
        # grpc-core (1.5x+) waits for any ping's ack this long (default 60 s), keepalive's too.
        ("grpc.http2.ping_timeout_ms", ms(settings.grpc_keepalive_timeout)),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
        # A connection without any call this long gets GOAWAY (clients reconnect by themselves).
        ("grpc.max_connection_idle_ms", ms(settings.grpc_max_connection_idle)),
        # Clients may ping this often; more often twice and the connection is closed.
        ("grpc.http2.min_recv_ping_interval_without_data_ms", ms(settings.grpc_min_ping_interval)),
        ("grpc.http2.max_ping_strikes", 2),
    ]
    if settings.grpc_max_connection_age > 0:
        options += [
            ("grpc.max_connection_age_ms", ms(settings.grpc_max_connection_age)),
            ("grpc.max_connection_age_grace_ms", ms(CONNECTION_AGE_GRACE)),
        ]
    return options


def grpc_bind_address(host: str, port: int) -> str:
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{host}:{port}"


def _bind(
    server: grpc.aio.Server,
    address: str,
    credentials: grpc.ServerCredentials | None,
    *,
    setting: str = "TASKYARD_GRPC_PORT / TASKYARD_GRPC_HOST",
) -> int:
    """The port bound; a taken port or a foreign address is refused with what to set."""
    try:
        if credentials is None:
            port = server.add_insecure_port(address)
        else:
            port = server.add_secure_port(address, credentials)
    except RuntimeError:
        port = 0
    if port == 0:
        raise tls.ListenRefused(
            f"cannot listen on {address}: the port is taken (another gateway?) or the address "
            f"is not this machine's; set {setting}"
        )
    return port


class Gateway:
    def __init__(self, settings: GatewaySettings, *, discovery_enabled: bool = True) -> None:
        tls.check_exposure(settings)
        self.settings = settings
        self.credentials = tls.server_credentials(settings)
        self.tokens = auth.TokensFile(settings.grpc_tokens_file) if settings.grpc_tokens_file else None
        self.authenticator = auth.Authenticator(self.tokens) if self.tokens is not None else None
        self.admission = Admission(
            unary_limit=settings.grpc_max_concurrent_rpcs, long_limit=settings.grpc_max_concurrent_long_rpcs
        )
        self.instance_id = ids.new_instance_id("gateway")
        timeout = settings.request_timeout
        mmb = settings.max_message_bytes
        self.store_requester = rpc.Requester(settings.store_addresses, max_message_bytes=mmb, timeout=timeout)
        # Every request sent for a caller carries its TenantScope (scoped.py).
        self.store = Scoped(self.store_requester)
        self._lane_requesters = {
            p: rpc.Requester(settings.lane_addresses(p), max_message_bytes=mmb, timeout=timeout)
            for p in LANES
        }
        self.lanes = Lanes({p: Lane(r, max_bytes=max(1, mmb // 2)) for p, r in self._lane_requesters.items()})
        self.peer: discovery.Peer | None = None
        if discovery_enabled:
            self.peer = discovery.Peer(
                settings.discovery_addresses, self._announcement, interval=settings.announce_interval
            )
        self.names = KnownNames(self.store, self.peer, announce_interval=settings.announce_interval)
        self.waiters = Waiters()
        self.events = EventSubscriber(settings.events_addresses, self.waiters, max_message_bytes=mmb)
        self.health = HealthService()
        # The limits tasks may use, shared by submissions and LimitService's reads.
        self.limit_catalog = LimitCatalog(self.store)
        # FLOW_GATES (the leader's gates and usage) on the lane that triggers schedules.
        flow_lane = Scoped(self._lane_requesters[Priority.NORMAL])
        # Who may act for which tenant, before anything runs (tenancy.py).
        self.tenants = TenantCache(self.store)
        self.service = TaskService(
            limits=codec.Limits.from_settings(settings),
            store=self.store,
            lanes=self.lanes,
            names=self.names,
            waiters=self.waiters,
            catalog=self.limit_catalog,
            flow_lane=flow_lane,
        )
        # Innermost, the decoding of request bodies: a bad one is INVALID_ARGUMENT, not UNKNOWN.
        interceptors: list[Interceptor] = [Tenancy(self.tenants), self.admission, Decoder()]
        if self.authenticator is not None:
            interceptors.insert(0, self.authenticator)  # the admission gates never count a refused call
        if settings.metrics_served:
            from taskyard.core.metrics import TenantLabels
            from taskyard.gateway.metrics import CallMetrics  # prometheus_client only when served

            calls = CallMetrics(TenantLabels(settings.metrics_tenants))
            interceptors.insert(0, calls)  # every call, the refused ones too
            self.service.on_submitted = calls.submitted
        if tracing.enabled():
            interceptors.insert(0, server_spans())
        # No maximum_concurrent_rpcs: one pool for all calls is what let waits starve probes.
        self.server = grpc.aio.server(options=server_options(settings), interceptors=interceptors)
        task_service_pb2_grpc.add_TaskServiceServicer_to_server(self.service, self.server)
        schedule_service_pb2_grpc.add_ScheduleServiceServicer_to_server(
            ScheduleService(
                store=self.store,
                lane=flow_lane,
                names=self.names,
                limits=codec.Limits.from_settings(settings),
                catalog=self.limit_catalog,
            ),
            self.server,
        )
        LimitService.register(self.server, store=self.store, lane=flow_lane, catalog=self.limit_catalog)
        QueueService.register(self.store, self.server)
        # Dead letters and redrives; a redrive records the name of the token that asked.
        FailureService.register(
            self.server, store=self.store, caller=functools.partial(auth.caller_name, self.tokens)
        )
        # Tenants, for operators; a change records the name of the token that asked.
        TenantService.register(
            self.server,
            store=self.store,
            cache=self.tenants,
            caller=functools.partial(auth.caller_name, self.tokens),
        )
        # WatchEvents: one tail of the store's event log, woken by every committed batch.
        self.event_service = EventService(store=self.store, settings=settings)
        self.event_service.register(self.server)
        self.waiters.taps.append(self.event_service.tail.nudge)
        self.waiters.taps.append(self.tenants.tap)
        # Workers in any language: each stream a pool on the bus (remote_pool.py).
        self.worker_service = WorkerService.register(self.server, settings)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        # The same health answers, plaintext and nothing else, for probes that cannot
        # do TLS or send a token (the kubelet's gRPC probe): the edge keeps both.
        self.health_server: grpc.aio.Server | None = None
        if settings.grpc_health_port:
            self.health_server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
            health_pb2_grpc.add_HealthServicer_to_server(self.health, self.health_server)
        reflection.enable(SERVICE_NAMES, self.server)  # v1 and v1alpha, which list themselves
        self.background = Background("gateway")
        self.serving = False
        self.port = 0
        self.health_port = 0
        self.dashboard: Dashboard | None = None
        if settings.http_port:
            # aiohttp only when served: an idle gateway's memory is budgeted.
            from taskyard.gateway.dashboard.site import Dashboard

            self.dashboard = Dashboard(
                settings,
                self.server,
                authenticator=self.authenticator,
                summarize=functools.partial(self.store.call, contract.STORE_SUMMARIZE_EVENTS),
                read=functools.partial(self.store.call, contract.STORE_READ_EVENTS),
                read_limits=functools.partial(self.store.call, contract.STORE_LIMITS),
                flow_gates=functools.partial(flow_lane.call, contract.FLOW_GATES),
                known_tenant=self._tenant_exists,
            )

    async def _tenant_exists(self, name: str) -> bool:
        """Whether the store holds tenant ``name`` (the dashboard makes views for those only)."""
        return await self.tenants.get(name) is not None

    def _announcement(self) -> dispatch_pb2.Announcement:
        return dispatch_pb2.Announcement(service="gateway", instance_id=self.instance_id)

    async def start(self) -> int:
        """Bind, start serving and the background loops; return the bound port."""
        s = self.settings
        self.port = _bind(self.server, grpc_bind_address(s.grpc_host, s.grpc_port), self.credentials)
        if self.health_server is not None:
            address = grpc_bind_address(s.grpc_host, s.grpc_health_port)
            self.health_port = _bind(self.health_server, address, None, setting="TASKYARD_GRPC_HEALTH_PORT")
        for name in ("", TASK_SERVICE_NAME):
            await self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        # Answered by this process's event loop, so SERVING for as long as it runs.
        await self.health.set(LIVENESS_SERVICE, health_pb2.HealthCheckResponse.SERVING)
        await self.server.start()
        if self.health_server is not None:
            await self.health_server.start()
        if self.dashboard is not None:
            await self.dashboard.start()
        self.background.start(self.events.run(), name="gateway-events")
        self.background.start(self.event_service.run(), name="gateway-event-tail")
        if self.peer is not None:
            self.background.start(self.peer.run(), name="gateway-discovery")
        self.background.start(self._probe_store(), name="gateway-store-probe")
        log.info(
            "gateway ready on %s (%s, %s)",
            grpc_bind_address(s.grpc_host, self.port),
            "plaintext"
            if self.credentials is None
            else "TLS" + (" + client certificates" if s.grpc_tls_client_ca else ""),
            "no tokens" if self.tokens is None else f"{len(self.tokens.tokens)} tokens",
        )
        if self.health_server is not None:
            log.info("health probes (plaintext) on %s", grpc_bind_address(s.grpc_host, self.health_port))
        return self.port

    async def _set_serving(self, serving: bool) -> None:
        if serving == self.serving:
            return
        self.serving = serving
        hc = health_pb2.HealthCheckResponse
        value = hc.SERVING if serving else hc.NOT_SERVING
        for name in ("", TASK_SERVICE_NAME):
            await self.health.set(name, value)
        mark_ready(serving)  # the ops port's /readyz says the same
        log.info("store %s: %s", "reachable" if serving else "unreachable", hc.ServingStatus.Name(value))

    async def _probe_stores(self) -> None:
        """One round: a probe per store address at most, until one is answered (each
        probe goes to the next store the requester reaches), so the gateway is ready
        while any store is. When none is, the round's error is a refusal only if
        every store refused."""
        failure: errors.TaskyardError | None = None
        for _ in range(max(1, len(self.settings.store_addresses))):
            try:
                await self.names.probe(limit=STORE_PROBE_TIMEOUT)
            except errors.TaskyardError as exc:
                if failure is None or _refused(failure):
                    failure = exc
            else:
                return
        assert failure is not None
        raise failure

    async def _probe_store(self) -> None:
        """SERVING once a store answers; NOT_SERVING at once when every store refuses,
        after SLOW_ROUNDS failed rounds in a row otherwise."""
        failures = 0
        while True:
            try:
                await self._probe_stores()
            except errors.TaskyardError as exc:
                failures += 1
                log.debug("store probe failed: %s", exc)
                if _refused(exc) or failures >= SLOW_ROUNDS:
                    await self._set_serving(False)
            else:
                failures = 0
                await self._set_serving(True)
            await asyncio.sleep(STORE_PROBE_INTERVAL if self.serving else STORE_PROBE_INTERVAL_UNHEALTHY)

    async def stop(self, grace: float = 5.0) -> None:
        """Stop accepting, let calls in flight finish within ``grace``, close the sockets."""
        self.background.stopping()
        await self.health.enter_graceful_shutdown()
        mark_ready(False)
        if self.dashboard is not None:
            await self.dashboard.stop()  # its streams would hold the gRPC server's grace
        self.waiters.close()  # WaitTask calls answer now with what the store says
        self.event_service.close()  # WatchEvents streams end with their cursor
        self.service.close()  # StreamTaskLogs streams end where their lines stop
        self.worker_service.close()  # worker streams end once their attempts have
        self.health.close()  # health Watch streams end after their NOT_SERVING
        # New calls are refused from here on, and the calls in flight get the grace.
        # Not the idle connections: grpc would wait the whole grace for each client
        # to close its connection after the GOAWAY, which an idle client never reads
        # (a sync one reads nothing between calls). Once no call runs, they are cut
        # (and a call that reached grpc in that instant but not yet the gates: it fails as a
        # call past the grace does, and its client may send it again).
        stopping = asyncio.ensure_future(self.server.stop(grace))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.admission.drained(), grace)
        await self.server.stop(None)
        await stopping
        if self.health_server is not None:
            await self.health_server.stop(0)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.lanes.drain(), grace)
        await self.background.close(grace)
        self.events.close()
        if self.peer is not None:
            self.peer.close()
        self.store_requester.close()
        for r in self._lane_requesters.values():
            r.close()
        log.info("gateway stopped")


async def serve(settings: GatewaySettings, stop: asyncio.Event) -> None:
    grace = settings.grpc_stop_grace
    gateway = Gateway(settings)
    await gateway.start()
    if gateway.tokens is not None:
        asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, gateway.tokens.reload)
    try:
        await until_stopped(stop, gateway.background)
    finally:
        log.info("gateway stopping (grace %.1fs)", grace)
        await gateway.stop(grace)
