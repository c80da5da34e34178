"""Configuration from the environment, read once at start-up.

Taskyard's own names are ``TASKYARD_*``; the seed's names (``QUEUED_TASK_*``,
``QUEUE_*``) work as documented and win over nothing: when both are set, the
``TASKYARD_*`` name is used.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import re
import socket
from collections.abc import Mapping
from pathlib import Path

from taskyard.core.priority import Priority

# Offsets from the base port, after the seed: lanes at +0..+3.
RESULT_QUERY_OFFSET = 4
REGISTRATION_OFFSET = 5
SURVEY_OFFSET = 6
EVENTS_OFFSET = 7
# The store's streams for one audience each (NNG SUB filters topics on the
# subscriber's side, so every PUB message crosses every subscriber's pipe and
# wakes its process): the leases and cancels of pools, and the scheduler's
# share of the events. The full stream at +7 stays for the gateway and tools.
POOL_STREAM_OFFSET = 8
SCHEDULER_STREAM_OFFSET = 9


def _lookup(env: Mapping[str, str], *names: str) -> tuple[str, str] | None:
    """The first set variable among ``names`` (Taskyard's own name first), with its name."""
    for name in names:
        value = env.get(name)
        if value not in (None, ""):
            return name, value
    return None


def _get(env: Mapping[str, str], *names: str) -> str | None:
    found = _lookup(env, *names)
    return None if found is None else found[1]


def _int(env: Mapping[str, str], default: int, *names: str) -> int:
    found = _lookup(env, *names)
    if found is None:
        return default
    try:
        return int(found[1])
    except ValueError as exc:
        raise ValueError(f"{found[0]} must be an integer, got {found[1]!r}") from exc


def _positive(env: Mapping[str, str], default: float, *names: str) -> float:
    """A number of seconds > 0. There is no "no timeout" value: a timeout of 0 would
    fail every attempt at once and make the watchdog kill every busy worker."""
    value = _float(env, default, *names)
    if not value > 0:  # also NaN
        found = _lookup(env, *names)
        name = found[0] if found else names[0]
        raise ValueError(
            f"{name} must be a positive number of seconds (there is no 'no timeout'), got {value!r}"
        )
    return value


def _float(env: Mapping[str, str], default: float, *names: str) -> float:
    found = _lookup(env, *names)
    if found is None:
        return default
    try:
        return float(found[1])
    except ValueError as exc:
        raise ValueError(f"{found[0]} must be a number, got {found[1]!r}") from exc


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def _bool(env: Mapping[str, str], default: bool, *names: str) -> bool:
    found = _lookup(env, *names)
    if found is None:
        return default
    word = found[1].strip().lower()
    if word not in _TRUE | _FALSE:
        raise ValueError(f"{found[0]} must be one of true/false/1/0/yes/no/on/off, got {found[1]!r}")
    return word in _TRUE


def _port(env: Mapping[str, str], default: int, *names: str) -> int:
    value = _int(env, default, *names)
    found = _lookup(env, *names)
    if found is not None and not 0 <= value <= 65535:
        raise ValueError(f"{found[0]} must be a port number from 0 to 65535, got {found[1]!r}")
    return value


# Lenient on purpose: it catches a scheme, a port, a path or spaces, not every RFC rule.
_HOST_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


def valid_host(value: str) -> bool:
    """A host name or an IP address (IPv6 with or without brackets); no scheme, no port."""
    inner = value[1:-1] if value.startswith("[") and value.endswith("]") else value
    try:
        ipaddress.ip_address(inner)
        return True
    except ValueError:
        pass
    return inner == value and bool(_HOST_NAME.match(value)) and len(value) <= 253


def _host(env: Mapping[str, str], default: str, *names: str) -> str:
    found = _lookup(env, *names)
    if found is None:
        return default
    value = found[1].strip()
    if not valid_host(value):
        raise ValueError(
            f"{found[0]} must be a host name or IP address (no scheme, no port), got {found[1]!r}"
        )
    return value


# Listening on every interface: such a host can be listened on, never announced.
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", "[::]"})


def url_host(host: str) -> str:
    """``host`` as it goes into a ``tcp://host:port`` URL (IPv6 literals in brackets)."""
    if ":" in host and not host.startswith("["):
        return f"[{host}]"
    return host


TRANSPORTS = ("tcp", "ipc")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings:
    # --- NNG addressing
    # The default host of every NNG address, to listen and to dial. The four hosts
    # below override it per role; empty means "use host" (one machine needs none).
    host: str = "127.0.0.1"
    # The interface listeners bind (e.g. 0.0.0.0 in a container).
    bind_host: str = ""
    # Where the scheduler's sockets are dialed: lanes, registration, survey, discovery hub.
    scheduler_host: str = ""
    # Where the result-store's sockets are dialed: queries and events.
    store_host: str = ""
    # The host a worker-pool puts in the PAIR address it registers and announces.
    # Unset: the bind host, or socket.gethostname() when that is a wildcard.
    advertise_host: str = ""
    base_port: int = 5555
    discovery_port: int = 5550
    # The port a worker-pool's PAIR socket listens on; 0 = ephemeral (chosen by the OS).
    pool_pair_port: int = 0
    # "tcp" (default, multi-host) or "ipc" (one machine; tests use it to avoid port clashes).
    transport: str = "tcp"
    ipc_dir: str = "/tmp/taskyard"
    # --- limits
    # Fits a full dispatch batch (200 tasks) of max-size payloads (256 KiB).
    max_message_bytes: int = 64 * 1024 * 1024
    max_payload_bytes: int = 256 * 1024
    # A task's result, as JSON. A larger one fails the attempt (ResultTooLarge).
    max_result_bytes: int = 1024 * 1024
    max_batch: int = 1000
    grpc_max_message_bytes: int = 4 * 1024 * 1024
    # Unary calls in flight; WaitTask, CancelTask (it may wait) and streams count
    # apart, so long waits never starve probes and cheap reads. Health/Check: no limit.
    grpc_max_concurrent_rpcs: int = 1000
    grpc_max_concurrent_long_rpcs: int = 10_000
    request_timeout: float = 10.0
    # --- gateway
    grpc_host: str = "127.0.0.1"
    grpc_port: int = 50051
    # Plaintext grpc.health.v1 only, for probes that cannot do TLS (the kubelet's); 0 = off.
    grpc_health_port: int = 0
    http_port: int = 8080
    # --- gRPC edge security (gateway/auth.py, docs/security.md)
    grpc_tls_cert: str = ""
    grpc_tls_key: str = ""
    # Set: clients must present a certificate signed by this CA (mTLS).
    grpc_tls_client_ca: str = ""
    grpc_tokens_file: str = ""
    # A non-loopback gRPC host without TLS and tokens is refused unless this is set.
    grpc_allow_insecure: bool = False
    # --- gRPC connections: dead or idle ones are closed (seconds; 0 = off for age)
    grpc_keepalive_time: float = 60.0
    grpc_keepalive_timeout: float = 20.0
    grpc_max_connection_idle: float = 300.0
    grpc_min_ping_interval: float = 10.0
    grpc_max_connection_age: float = 0.0
    # --- database (result-store only)
    database_url: str = ""
    db_pool_size: int = 8
    use_notify: bool = True
    notify_channel: str = "queue_new_task"
    polling_interval: float = 2.0
    fallback_polling_interval: float = 30.0
    # --- scheduler
    lease_seconds: float = 30.0
    renew_interval: float = 10.0
    announce_interval: float = 2.0
    # --- tasks
    task_timeout: float = 300.0
    max_retries: int = 3
    # Backoff of the retry policy (core.retry): base * 2 ** (attempt - 1), capped.
    retry_base_seconds: float = 1.0
    retry_cap_seconds: float = 300.0
    # --- worker pool
    workers: int = 1
    concurrency: int = dataclasses.field(default_factory=lambda: os.cpu_count() or 1)
    worker_max_memory_mib: int = 0
    task_modules: tuple[str, ...] = ()
    server_name: str = dataclasses.field(default_factory=lambda: os.uname().nodename)
    shutdown_timeout: float = 30.0
    # --- worker-pool supervision
    # Each worker beats from its own event loop this often (with its RSS).
    worker_heartbeat_interval: float = 10.0
    # An idle worker silent this long is killed (its loop is wedged).
    worker_idle_silence: float = 60.0
    # A worker that never beat this long after its spawn is killed (import hung).
    worker_start_silence: float = 120.0
    # A busy worker silent for this many times its longest task timeout is killed.
    worker_busy_silence_factor: float = 2.0
    # Started deaths a task may cause before it is quarantined (FAILURE); 0 = no cap.
    max_rescues: int = 3
    # A sync task past its timeout: its worker is replaced after this grace.
    timeout_grace: float = 2.0
    # Running-task cancel: the flag, asyncio cancellation after cancel_grace,
    # the worker killed at cancel_deadline (seconds after the request).
    cancel_grace: float = 2.0
    cancel_deadline: float = 10.0
    # --- ops (task logs, queues, retention)
    # A log line longer than this (UTF-8 bytes) is cut, with a marker.
    log_max_line_bytes: int = 16 * 1024
    # Lines kept per task; past it lines are dropped and one "log truncated" line says so.
    log_max_lines_per_task: int = 100_000
    # Lines a worker process (and the manager) holds while the store is slow; past it
    # a sync task waits up to log_block_seconds for room, an async one drops (counted).
    log_buffer_lines: int = 50_000
    log_block_seconds: float = 1.0
    # Final tasks are deleted (with their logs) this many days after they finished.
    retention_days: float = 30.0
    purge_interval: float = 3600.0
    # Final records stay in the store's result cache this long.
    result_ttl: float = 3600.0
    # --- time (ETA/countdown, retries, explain)
    # Retry jitter of the default policy: each delay is cut by up to this fraction (core.retry).
    retry_jitter: float = 0.2
    # The scheduler's due heap caches SCHEDULED/RETRYING rows due within due_window
    # seconds, reloaded from the database every due_refresh_interval seconds.
    due_window: float = 60.0
    due_refresh_interval: float = 30.0
    # --- schedules (periodic tasks)
    # The scheduler re-reads the earliest next run of the schedules table at least
    # this often (a lost schedule.changed event delays a run by at most this).
    schedule_refresh_interval: float = 10.0
    # --- graph (dependencies, trees, idempotency keys, cancellation)
    # The store re-resolves every PENDING task this often (and at start-up): a
    # crash between a dependency's commit and its resolve step delays, never strands.
    graph_sweep_interval: float = 30.0
    # --- restart reconciliation (scheduler/reconciler.py)
    # A restarted scheduler hands back, at a pool's first survey answer, the leases
    # of its predecessor the pool does not hold that were issued more than this many
    # seconds before the survey was sent (a dispatch committed just before may still
    # be on its way to the pool).
    reconcile_margin: float = 0.1
    # --- internal bus authentication (core.seal, docs/security.md "The internal bus")
    # "kid:base64secret,...": the first key signs, all verify. Never logged.
    bus_keys: str = dataclasses.field(default="", repr=False)
    # A file of the same list (one key a line), read when bus_keys is empty.
    bus_keys_file: str = ""
    # A message sent more than this many seconds from the receiver's clock is refused.
    bus_replay_window: float = 30.0
    # --- deployment
    development: bool = False
    log_level: str = "INFO"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        e = os.environ if env is None else env
        d = cls()
        modules = _get(e, "TASKYARD_TASK_MODULES")
        transport = _get(e, "TASKYARD_TRANSPORT") or d.transport
        if transport not in TRANSPORTS:
            raise ValueError(f"TASKYARD_TRANSPORT must be one of {', '.join(TRANSPORTS)}, got {transport!r}")
        return cls(
            host=_host(e, d.host, "TASKYARD_HOST"),
            bind_host=_host(e, d.bind_host, "TASKYARD_BIND_HOST"),
            scheduler_host=_host(e, d.scheduler_host, "TASKYARD_SCHEDULER_HOST"),
            store_host=_host(e, d.store_host, "TASKYARD_STORE_HOST"),
            advertise_host=_host(e, d.advertise_host, "TASKYARD_ADVERTISE_HOST"),
            base_port=_int(e, d.base_port, "TASKYARD_BASE_PORT"),
            discovery_port=_int(e, d.discovery_port, "TASKYARD_DISCOVERY_PORT"),
            pool_pair_port=_port(e, d.pool_pair_port, "TASKYARD_POOL_PAIR_PORT"),
            transport=transport,
            ipc_dir=_get(e, "TASKYARD_IPC_DIR") or d.ipc_dir,
            max_message_bytes=_int(e, d.max_message_bytes, "TASKYARD_MAX_MESSAGE_BYTES"),
            max_payload_bytes=_int(e, d.max_payload_bytes, "TASKYARD_MAX_PAYLOAD_BYTES"),
            max_result_bytes=_int(e, d.max_result_bytes, "TASKYARD_MAX_RESULT_BYTES"),
            max_batch=_int(e, d.max_batch, "TASKYARD_MAX_BATCH"),
            grpc_max_message_bytes=_int(e, d.grpc_max_message_bytes, "TASKYARD_GRPC_MAX_MESSAGE_BYTES"),
            grpc_max_concurrent_rpcs=_int(e, d.grpc_max_concurrent_rpcs, "TASKYARD_GRPC_MAX_CONCURRENT_RPCS"),
            grpc_max_concurrent_long_rpcs=_int(
                e, d.grpc_max_concurrent_long_rpcs, "TASKYARD_GRPC_MAX_CONCURRENT_LONG_RPCS"
            ),
            request_timeout=_float(e, d.request_timeout, "TASKYARD_REQUEST_TIMEOUT"),
            grpc_host=_get(e, "TASKYARD_GRPC_HOST") or d.grpc_host,
            grpc_port=_int(e, d.grpc_port, "TASKYARD_GRPC_PORT"),
            grpc_health_port=_port(e, d.grpc_health_port, "TASKYARD_GRPC_HEALTH_PORT"),
            http_port=_int(e, d.http_port, "TASKYARD_HTTP_PORT"),
            grpc_tls_cert=_get(e, "TASKYARD_TLS_CERT") or d.grpc_tls_cert,
            grpc_tls_key=_get(e, "TASKYARD_TLS_KEY") or d.grpc_tls_key,
            grpc_tls_client_ca=_get(e, "TASKYARD_TLS_CLIENT_CA") or d.grpc_tls_client_ca,
            grpc_tokens_file=_get(e, "TASKYARD_AUTH_TOKENS_FILE") or d.grpc_tokens_file,
            grpc_allow_insecure=_bool(e, d.grpc_allow_insecure, "TASKYARD_GRPC_ALLOW_INSECURE"),
            grpc_keepalive_time=_positive(e, d.grpc_keepalive_time, "TASKYARD_GRPC_KEEPALIVE_TIME"),
            grpc_keepalive_timeout=_positive(e, d.grpc_keepalive_timeout, "TASKYARD_GRPC_KEEPALIVE_TIMEOUT"),
            grpc_max_connection_idle=_positive(
                e, d.grpc_max_connection_idle, "TASKYARD_GRPC_MAX_CONNECTION_IDLE"
            ),
            grpc_min_ping_interval=_positive(e, d.grpc_min_ping_interval, "TASKYARD_GRPC_MIN_PING_INTERVAL"),
            grpc_max_connection_age=_float(e, d.grpc_max_connection_age, "TASKYARD_GRPC_MAX_CONNECTION_AGE"),
            database_url=_get(e, "TASKYARD_DATABASE_URL", "DATABASE_URL") or d.database_url,
            db_pool_size=_int(e, d.db_pool_size, "TASKYARD_DB_POOL_SIZE"),
            use_notify=_bool(e, d.use_notify, "TASKYARD_USE_NOTIFY", "QUEUE_USE_POSTGRESQL_NOTIFY"),
            notify_channel=_get(e, "TASKYARD_NOTIFY_CHANNEL", "QUEUE_NOTIFY_CHANNEL") or d.notify_channel,
            polling_interval=_float(
                e, d.polling_interval, "TASKYARD_POLLING_INTERVAL", "QUEUE_POLLING_INTERVAL"
            ),
            fallback_polling_interval=_float(
                e,
                d.fallback_polling_interval,
                "TASKYARD_FALLBACK_POLLING_INTERVAL",
                "QUEUE_FALLBACK_POLLING_INTERVAL",
            ),
            lease_seconds=_float(e, d.lease_seconds, "TASKYARD_LEASE_SECONDS"),
            renew_interval=_float(e, d.renew_interval, "TASKYARD_RENEW_INTERVAL"),
            announce_interval=_float(e, d.announce_interval, "TASKYARD_ANNOUNCE_INTERVAL"),
            task_timeout=_positive(e, d.task_timeout, "TASKYARD_TASK_TIMEOUT", "QUEUE_TASK_TIMEOUT"),
            max_retries=_int(e, d.max_retries, "TASKYARD_MAX_RETRIES", "QUEUE_MAX_RETRIES"),
            retry_base_seconds=_float(e, d.retry_base_seconds, "TASKYARD_RETRY_BASE_SECONDS"),
            retry_cap_seconds=_float(e, d.retry_cap_seconds, "TASKYARD_RETRY_CAP_SECONDS"),
            workers=_int(e, d.workers, "TASKYARD_WORKERS", "QUEUED_TASK_WORKERS"),
            concurrency=_int(e, d.concurrency, "TASKYARD_CONCURRENCY", "QUEUED_TASK_CONCURRENCY"),
            worker_max_memory_mib=_int(
                e, d.worker_max_memory_mib, "TASKYARD_WORKER_MAX_MEMORY", "QUEUED_TASK_WORKER_MAX_MEMORY"
            ),
            task_modules=tuple(m.strip() for m in modules.split(",") if m.strip()) if modules else (),
            server_name=_get(e, "TASKYARD_SERVER_NAME") or d.server_name,
            shutdown_timeout=_float(e, d.shutdown_timeout, "TASKYARD_SHUTDOWN_TIMEOUT"),
            # supervision
            worker_heartbeat_interval=_float(
                e, d.worker_heartbeat_interval, "TASKYARD_WORKER_HEARTBEAT_INTERVAL"
            ),
            worker_idle_silence=_float(e, d.worker_idle_silence, "TASKYARD_WORKER_IDLE_SILENCE"),
            worker_start_silence=_float(e, d.worker_start_silence, "TASKYARD_WORKER_START_SILENCE"),
            worker_busy_silence_factor=_float(
                e, d.worker_busy_silence_factor, "TASKYARD_WORKER_BUSY_SILENCE_FACTOR"
            ),
            max_rescues=_int(e, d.max_rescues, "TASKYARD_MAX_RESCUES"),
            timeout_grace=_float(e, d.timeout_grace, "TASKYARD_TIMEOUT_GRACE"),
            cancel_grace=_float(e, d.cancel_grace, "TASKYARD_CANCEL_GRACE"),
            cancel_deadline=_float(e, d.cancel_deadline, "TASKYARD_CANCEL_DEADLINE"),
            # ops
            log_max_line_bytes=_int(e, d.log_max_line_bytes, "TASKYARD_LOG_MAX_LINE_BYTES"),
            log_max_lines_per_task=_int(e, d.log_max_lines_per_task, "TASKYARD_LOG_MAX_LINES"),
            log_buffer_lines=_int(e, d.log_buffer_lines, "TASKYARD_LOG_BUFFER_LINES"),
            log_block_seconds=_float(e, d.log_block_seconds, "TASKYARD_LOG_BLOCK_SECONDS"),
            retention_days=_float(
                e, d.retention_days, "TASKYARD_RETENTION_DAYS", "QUEUED_TASK_RETENTION_DAYS"
            ),
            purge_interval=_float(e, d.purge_interval, "TASKYARD_PURGE_INTERVAL"),
            result_ttl=_float(e, d.result_ttl, "TASKYARD_RESULT_TTL"),
            # time
            retry_jitter=_float(e, d.retry_jitter, "TASKYARD_RETRY_JITTER"),
            due_window=_float(e, d.due_window, "TASKYARD_DUE_WINDOW"),
            due_refresh_interval=_float(e, d.due_refresh_interval, "TASKYARD_DUE_REFRESH_INTERVAL"),
            # schedules
            schedule_refresh_interval=_float(
                e, d.schedule_refresh_interval, "TASKYARD_SCHEDULE_REFRESH_INTERVAL"
            ),
            # graph
            graph_sweep_interval=_float(e, d.graph_sweep_interval, "TASKYARD_GRAPH_SWEEP_INTERVAL"),
            reconcile_margin=_float(e, d.reconcile_margin, "TASKYARD_RECONCILE_MARGIN"),
            bus_keys=_get(e, "TASKYARD_BUS_KEYS") or d.bus_keys,
            bus_keys_file=_get(e, "TASKYARD_BUS_KEYS_FILE") or d.bus_keys_file,
            bus_replay_window=_positive(e, d.bus_replay_window, "TASKYARD_BUS_REPLAY_WINDOW"),
            # latency
            # TASKYARD_ENVIRONMENT=development (what `taskyard dev` sets) is another name for it.
            development=_bool(e, d.development, "TASKYARD_DEVELOPMENT")
            or (_get(e, "TASKYARD_ENVIRONMENT") or "").strip().lower() == "development",
            log_level=_get(e, "TASKYARD_LOG_LEVEL") or d.log_level,
        )

    # --- hosts --------------------------------------------------------------
    # Each role's host, with the fallbacks applied (the fields keep "" = unset).
    @property
    def effective_bind_host(self) -> str:
        return self.bind_host or self.host

    @property
    def effective_scheduler_host(self) -> str:
        return self.scheduler_host or self.host

    @property
    def effective_store_host(self) -> str:
        return self.store_host or self.host

    @property
    def effective_advertise_host(self) -> str:
        """What a pool announces: TASKYARD_ADVERTISE_HOST, else the bind host, else (when
        that is a wildcard such as 0.0.0.0, which nobody can dial) this machine's name."""
        if self.advertise_host:
            return self.advertise_host
        bind = self.effective_bind_host
        return socket.gethostname() if bind in WILDCARD_HOSTS else bind

    # --- addresses -------------------------------------------------------
    # ``X_listen_address`` is where the owning service listens (bind host);
    # ``X_address`` is where the others dial it (scheduler or store host).
    # With ipc both are the same socket file.
    def _address(self, name: str, port: int, host: str) -> str:
        if self.transport == "ipc":
            return f"ipc://{Path(self.ipc_dir) / name}.sock"
        return f"tcp://{url_host(host)}:{port}"

    def _lane(self, priority: Priority, host: str) -> str:
        return self._address(f"lane-{priority.name.lower()}", self.base_port + priority.lane_offset, host)

    def lane_address(self, priority: Priority) -> str:
        return self._lane(priority, self.effective_scheduler_host)

    def lane_listen_address(self, priority: Priority) -> str:
        return self._lane(priority, self.effective_bind_host)

    @property
    def store_address(self) -> str:
        return self._address("store", self.base_port + RESULT_QUERY_OFFSET, self.effective_store_host)

    @property
    def store_listen_address(self) -> str:
        return self._address("store", self.base_port + RESULT_QUERY_OFFSET, self.effective_bind_host)

    @property
    def registration_address(self) -> str:
        return self._address(
            "registration", self.base_port + REGISTRATION_OFFSET, self.effective_scheduler_host
        )

    @property
    def registration_listen_address(self) -> str:
        return self._address("registration", self.base_port + REGISTRATION_OFFSET, self.effective_bind_host)

    @property
    def survey_address(self) -> str:
        return self._address("survey", self.base_port + SURVEY_OFFSET, self.effective_scheduler_host)

    @property
    def survey_listen_address(self) -> str:
        return self._address("survey", self.base_port + SURVEY_OFFSET, self.effective_bind_host)

    @property
    def events_address(self) -> str:
        return self._address("events", self.base_port + EVENTS_OFFSET, self.effective_store_host)

    @property
    def events_listen_address(self) -> str:
        return self._address("events", self.base_port + EVENTS_OFFSET, self.effective_bind_host)

    @property
    def pool_stream_address(self) -> str:
        return self._address("events-pools", self.base_port + POOL_STREAM_OFFSET, self.effective_store_host)

    @property
    def pool_stream_listen_address(self) -> str:
        return self._address("events-pools", self.base_port + POOL_STREAM_OFFSET, self.effective_bind_host)

    @property
    def scheduler_stream_address(self) -> str:
        return self._address(
            "events-scheduler", self.base_port + SCHEDULER_STREAM_OFFSET, self.effective_store_host
        )

    @property
    def scheduler_stream_listen_address(self) -> str:
        return self._address(
            "events-scheduler", self.base_port + SCHEDULER_STREAM_OFFSET, self.effective_bind_host
        )

    @property
    def discovery_address(self) -> str:
        return self._address("discovery", self.discovery_port, self.effective_scheduler_host)

    @property
    def discovery_listen_address(self) -> str:
        return self._address("discovery", self.discovery_port, self.effective_bind_host)

    def pool_pair_listen_address(self, pool_id: str) -> str:
        """Where a pool's PAIR socket listens; port 0 (the default) lets the OS choose."""
        return self._address(f"pool-{pool_id}", self.pool_pair_port, self.effective_bind_host)

    def advertised_pair_address(self, bound: str) -> str:
        """The address a pool registers and announces for its PAIR socket, from the one it
        actually bound (``transport.listen_address``): the same port on the advertise host.
        ipc addresses are returned unchanged."""
        if self.transport == "ipc" or not bound.startswith("tcp://"):
            return bound
        port = bound.rsplit(":", 1)[1]
        return f"tcp://{url_host(self.effective_advertise_host)}:{port}"

    def to_env(self) -> dict[str, str]:
        """The environment that reproduces these settings in a child process."""
        return {
            "TASKYARD_HOST": self.host,
            "TASKYARD_BIND_HOST": self.bind_host,
            "TASKYARD_SCHEDULER_HOST": self.scheduler_host,
            "TASKYARD_STORE_HOST": self.store_host,
            "TASKYARD_ADVERTISE_HOST": self.advertise_host,
            "TASKYARD_BASE_PORT": str(self.base_port),
            "TASKYARD_DISCOVERY_PORT": str(self.discovery_port),
            "TASKYARD_POOL_PAIR_PORT": str(self.pool_pair_port),
            "TASKYARD_TRANSPORT": self.transport,
            "TASKYARD_IPC_DIR": self.ipc_dir,
            "TASKYARD_MAX_MESSAGE_BYTES": str(self.max_message_bytes),
            "TASKYARD_MAX_PAYLOAD_BYTES": str(self.max_payload_bytes),
            "TASKYARD_MAX_RESULT_BYTES": str(self.max_result_bytes),
            "TASKYARD_MAX_BATCH": str(self.max_batch),
            "TASKYARD_GRPC_MAX_MESSAGE_BYTES": str(self.grpc_max_message_bytes),
            "TASKYARD_GRPC_MAX_CONCURRENT_RPCS": str(self.grpc_max_concurrent_rpcs),
            "TASKYARD_GRPC_MAX_CONCURRENT_LONG_RPCS": str(self.grpc_max_concurrent_long_rpcs),
            "TASKYARD_REQUEST_TIMEOUT": str(self.request_timeout),
            "TASKYARD_GRPC_HOST": self.grpc_host,
            "TASKYARD_GRPC_PORT": str(self.grpc_port),
            "TASKYARD_GRPC_HEALTH_PORT": str(self.grpc_health_port),
            "TASKYARD_HTTP_PORT": str(self.http_port),
            "TASKYARD_TLS_CERT": self.grpc_tls_cert,
            "TASKYARD_TLS_KEY": self.grpc_tls_key,
            "TASKYARD_TLS_CLIENT_CA": self.grpc_tls_client_ca,
            "TASKYARD_AUTH_TOKENS_FILE": self.grpc_tokens_file,
            "TASKYARD_GRPC_ALLOW_INSECURE": "true" if self.grpc_allow_insecure else "false",
            "TASKYARD_GRPC_KEEPALIVE_TIME": str(self.grpc_keepalive_time),
            "TASKYARD_GRPC_KEEPALIVE_TIMEOUT": str(self.grpc_keepalive_timeout),
            "TASKYARD_GRPC_MAX_CONNECTION_IDLE": str(self.grpc_max_connection_idle),
            "TASKYARD_GRPC_MIN_PING_INTERVAL": str(self.grpc_min_ping_interval),
            "TASKYARD_GRPC_MAX_CONNECTION_AGE": str(self.grpc_max_connection_age),
            "TASKYARD_DATABASE_URL": self.database_url,
            "TASKYARD_DB_POOL_SIZE": str(self.db_pool_size),
            "TASKYARD_USE_NOTIFY": "true" if self.use_notify else "false",
            "TASKYARD_NOTIFY_CHANNEL": self.notify_channel,
            "TASKYARD_POLLING_INTERVAL": str(self.polling_interval),
            "TASKYARD_FALLBACK_POLLING_INTERVAL": str(self.fallback_polling_interval),
            "TASKYARD_LEASE_SECONDS": str(self.lease_seconds),
            "TASKYARD_RENEW_INTERVAL": str(self.renew_interval),
            "TASKYARD_ANNOUNCE_INTERVAL": str(self.announce_interval),
            "TASKYARD_TASK_TIMEOUT": str(self.task_timeout),
            "TASKYARD_MAX_RETRIES": str(self.max_retries),
            "TASKYARD_RETRY_BASE_SECONDS": str(self.retry_base_seconds),
            "TASKYARD_RETRY_CAP_SECONDS": str(self.retry_cap_seconds),
            "TASKYARD_WORKERS": str(self.workers),
            "TASKYARD_CONCURRENCY": str(self.concurrency),
            "TASKYARD_WORKER_MAX_MEMORY": str(self.worker_max_memory_mib),
            "TASKYARD_TASK_MODULES": ",".join(self.task_modules),
            "TASKYARD_SERVER_NAME": self.server_name,
            # supervision
            "TASKYARD_WORKER_HEARTBEAT_INTERVAL": str(self.worker_heartbeat_interval),
            "TASKYARD_WORKER_IDLE_SILENCE": str(self.worker_idle_silence),
            "TASKYARD_WORKER_START_SILENCE": str(self.worker_start_silence),
            "TASKYARD_WORKER_BUSY_SILENCE_FACTOR": str(self.worker_busy_silence_factor),
            "TASKYARD_MAX_RESCUES": str(self.max_rescues),
            "TASKYARD_TIMEOUT_GRACE": str(self.timeout_grace),
            "TASKYARD_CANCEL_GRACE": str(self.cancel_grace),
            "TASKYARD_CANCEL_DEADLINE": str(self.cancel_deadline),
            "TASKYARD_SHUTDOWN_TIMEOUT": str(self.shutdown_timeout),
            "TASKYARD_DEVELOPMENT": "true" if self.development else "false",
            # ops
            "TASKYARD_LOG_MAX_LINE_BYTES": str(self.log_max_line_bytes),
            "TASKYARD_LOG_MAX_LINES": str(self.log_max_lines_per_task),
            "TASKYARD_LOG_BUFFER_LINES": str(self.log_buffer_lines),
            "TASKYARD_LOG_BLOCK_SECONDS": str(self.log_block_seconds),
            "TASKYARD_RETENTION_DAYS": str(self.retention_days),
            "TASKYARD_PURGE_INTERVAL": str(self.purge_interval),
            "TASKYARD_RESULT_TTL": str(self.result_ttl),
            # time
            "TASKYARD_RETRY_JITTER": str(self.retry_jitter),
            "TASKYARD_DUE_WINDOW": str(self.due_window),
            "TASKYARD_DUE_REFRESH_INTERVAL": str(self.due_refresh_interval),
            # schedules
            "TASKYARD_SCHEDULE_REFRESH_INTERVAL": str(self.schedule_refresh_interval),
            # graph
            "TASKYARD_GRAPH_SWEEP_INTERVAL": str(self.graph_sweep_interval),
            "TASKYARD_RECONCILE_MARGIN": str(self.reconcile_margin),
            # Unset bus keys are left out, so a child keeps those of the environment
            # it inherits (a parent that runs sealed never starts an unsealed child).
            **({"TASKYARD_BUS_KEYS": self.bus_keys} if self.bus_keys else {}),
            **({"TASKYARD_BUS_KEYS_FILE": self.bus_keys_file} if self.bus_keys_file else {}),
            "TASKYARD_BUS_REPLAY_WINDOW": str(self.bus_replay_window),
            # latency
            "TASKYARD_LOG_LEVEL": self.log_level,
        }
