"""Configuration from the environment, read once at start-up (pydantic-settings).

Each setting is declared once below: its type, default, description and the
variables it is read from. Taskyard's own names are ``TASKYARD_*``; the seed's names
(``QUEUED_TASK_*``, ``QUEUE_*``, ``DATABASE_URL``) work as documented and win over
nothing: when both are set, the ``TASKYARD_*`` name is used. A directory of secret
files named like the variables (``TASKYARD_SECRETS_DIR``, e.g. a mounted Kubernetes
secret) supplies what the environment does not.

Each process reads only its own settings: ``GatewaySettings``, ``StoreSettings``,
``SchedulerSettings`` and ``PoolSettings``, each composed of the parts every process on
the bus shares (``BusSettings``, ``TelemetrySettings``) and the parts a few share, plus
its own. A variable only another process reads is neither read nor validated, so a
store's malformed database setting never stops a gateway. ``Settings`` is all of them
at once: what ``taskyard dev``/``serve`` read and hand their children (``to_env``).

``Settings()`` is the defaults whatever the environment holds; ``Settings.from_env``
reads it (as does each class's). Settings are immutable; ``settings.replace(...)`` (or
``dataclasses.replace``) makes a changed, validated copy.
"""
# Length: one declaration per setting (about 100), each with its variable, bounds and
# description: the single table docs/operations.md mirrors, with who reads it.

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any, ClassVar, Self

from pydantic import AliasChoices, AliasGenerator, Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from taskyard.core import variables
from taskyard.core.addresses import WILDCARD_HOSTS, Addresses, is_loopback, url_host
from taskyard.core.variables import (
    PREFIX,
    TRANSPORTS,
    Flag,
    Host,
    Hosts,
    Modules,
    Port,
    Secret,
    Tenants,
    Timeout,
    Transport,
    reveal,
    valid_host,
)

__all__ = [
    "PROCESSES",
    "REMOVED_VARIABLES",
    "TRANSPORTS",
    "WILDCARD_HOSTS",
    "BusSettings",
    "GatewaySettings",
    "PoolSettings",
    "SchedulerSettings",
    "Settings",
    "SettingsBase",
    "StoreSettings",
    "TelemetrySettings",
    "metrics_scrapable",
    "url_host",
    "valid_host",
]

# Attributes whose variable is left out of to_env() while unset, so a child keeps the
# one of the environment it inherits (a parent that runs sealed never starts an
# unsealed child).
_INHERITED_WHEN_UNSET = frozenset({"bus_keys_secret", "bus_keys_file"})
# The secret fields answer to the attribute names their plain-text values keep.
_SECRET_FIELDS = {
    "database_url": "database_url_secret",
    "bus_keys": "bus_keys_secret",
    "metrics_token": "metrics_token_secret",
}

# Variables no longer read, each with what took its place. Set, they stop the start
# rather than be ignored: a probe would ask a port that nothing serves.
REMOVED_VARIABLES = {
    "TASKYARD_HEALTH_PORT": "/livez and /readyz are served on TASKYARD_METRICS_PORT, the ops port, "
    "with /metrics (they need no token); set TASKYARD_METRICS_PORT instead",
}


def metrics_scrapable(host: str, token: str) -> bool:
    """Whether an ops port bound on ``host`` serves /metrics: off loopback only behind a token."""
    return bool(token) or is_loopback(host)


def _dataclass_fields(cls: type[SettingsBase]) -> dict[str, dataclasses.Field[Any]]:
    """The fields as dataclasses.fields() and dataclasses.replace() see them, under the
    attribute names (database_url, not database_url_secret)."""
    attributes = {v: k for k, v in _SECRET_FIELDS.items()}
    shape: Any = dataclasses.make_dataclass(
        cls.__name__,
        [(attributes.get(name, name), Any) for name in cls.model_fields],
        kw_only=True,
        init=False,
        repr=False,
        eq=False,
    )
    return dict(shape.__dataclass_fields__)


class SettingsBase(BaseSettings):
    """What every settings class shares: how variables are read, checked and written
    back; the classes below only declare fields."""

    model_config = SettingsConfigDict(
        # Every field is read from the variables its validation alias names, exactly
        # as spelt (like the OS): TASKYARD_<ATTRIBUTE> unless the field says otherwise.
        alias_generator=AliasGenerator(validation_alias=variables.variable),
        case_sensitive=True,
        # Set-but-empty is unset, and lets a seed name under it apply.
        env_ignore_empty=True,
        # Also names pydantic-settings' own fallback (prefix + attribute), keeping it in
        # the namespace, never a bare "host".
        env_prefix=PREFIX,
        frozen=True,
        extra="forbid",
        validate_by_name=True,
        validate_by_alias=True,
        # Error reports come from variables.describe, which never echoes a secret.
        hide_input_in_errors=True,
    )
    # The standard library's view of the fields (see _dataclass_fields above).
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls.__dataclass_fields__ = _dataclass_fields(cls)

    @model_validator(mode="before")
    @classmethod
    def _secret_attribute_names(cls, data: Any) -> Any:
        # Settings(database_url=...) and dataclasses.replace name the attributes.
        if isinstance(data, dict) and not _SECRET_FIELDS.keys().isdisjoint(data):
            data = {_SECRET_FIELDS.get(key, key): value for key, value in data.items()}
        return data

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Settings(...) is its arguments and the defaults, whatever os.environ holds;
        # from_env is the one reader of an environment.
        return (init_settings,)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Self:
        """The settings ``env`` (default: os.environ) and its secrets directory give:
        this class's variables only, so one another process reads is never checked.

        A bad value raises ValueError naming its variable, e.g. ``TASKYARD_WORKERS must
        be an integer, got 'four'`` (never echoing a secret)."""
        environ = os.environ if env is None else env
        for name, instead in REMOVED_VARIABLES.items():
            if environ.get(name, "").strip():
                raise ValueError(f"{name} is no longer read: {instead}")
        values = variables.read(cls, environ)
        try:
            settings = cls.model_validate(values)
        except ValidationError as exc:
            raise ValueError(variables.describe(exc, cls, values, environ)) from None
        # TASKYARD_ENVIRONMENT=development (what `taskyard dev` sets) is another name for
        # TASKYARD_DEVELOPMENT=true; any other environment leaves it as it is.
        development = environ.get("TASKYARD_ENVIRONMENT", "").strip().lower() == "development"
        if development and "development" in cls.model_fields:
            return settings.replace(development=True)
        return settings

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` (by attribute name, secrets as plain text), validated."""
        values = {name: getattr(self, name) for name in type(self).__dataclass_fields__}
        return type(self)(**{**values, **changes})

    def to_env(self) -> dict[str, str]:
        """The environment that reproduces these settings in a child process: every
        field under its preferred variable (secrets in plain text, as a child must read
        them)."""
        env: dict[str, str] = {}
        for name, field in type(self).model_fields.items():
            value = getattr(self, name)
            if name in _INHERITED_WHEN_UNSET and not value:
                continue
            env[variables.names(field)[0]] = variables.text(value)
        return env


class BusSettings(Addresses, SettingsBase):
    """Every process on the bus: NNG addresses, message limits, the seal's keys and bus TLS."""

    # --- NNG addressing
    host: Host = Field(
        default="127.0.0.1",
        description="The default host of every NNG address, to listen and to dial. The four hosts "
        'below override it per role; empty means "use host" (one machine needs none).',
    )
    bind_host: Host = Field(default="", description="The interface listeners bind (0.0.0.0 in a container).")
    scheduler_host: Host = Field(
        default="", description="Where the scheduler is dialed: lanes, registration, survey, discovery hub."
    )
    store_host: Host = Field(default="", description="Where the result-store is dialed: queries and events.")
    scheduler_hosts: Hosts = Field(
        default=(),
        description="Every scheduler's host (comma-separated), all dialed on one socket: only the "
        "leader listens, so requests reach it. Set, it wins over scheduler_host (its one-element form).",
    )
    store_hosts: Hosts = Field(
        default=(),
        description="Every result-store's host (comma-separated): requests spread over those "
        "connected, events come from all. Set, it wins over store_host (its one-element form).",
    )
    advertise_host: Host = Field(
        default="",
        description="The host a worker-pool puts in the PAIR address it registers and announces, and "
        "a scheduler in the survey address it hands pools (unset with one scheduler host: that host). "
        "Unset: the bind host, or socket.gethostname() when that is a wildcard.",
    )
    base_port: int = Field(default=5555, description="The first lane port; the others are offsets.")
    discovery_port: int = Field(default=5550, description="The discovery hub (BUS).")
    pool_pair_port: Port = Field(
        default=0, description="A worker-pool's PAIR listener; 0 = ephemeral (chosen by the OS)."
    )
    transport: Transport = Field(
        default="tcp",
        description='"tcp", "tls+tcp" (across hosts: encrypted, mutual certificates, see bus_tls_*) or '
        '"ipc" (one machine; tests use it to avoid port clashes).',
    )
    ipc_dir: str = Field(default="/tmp/taskyard", description="The socket files with ipc.")
    # --- message limits
    max_message_bytes: int = Field(
        default=64 * 1024 * 1024,
        description="NNG recv_max_size: fits a full dispatch batch (200 tasks) of max-size payloads.",
    )
    request_timeout: float = Field(default=10.0, description="Seconds per internal NNG request.")
    # --- internal bus authentication (core.seal, docs/security.md "The internal bus")
    bus_keys_secret: Secret = Field(
        default=SecretStr(""),
        alias="bus_keys",
        validation_alias="TASKYARD_BUS_KEYS",
        description='"kid:base64secret,...": the first key signs, all verify; read it as bus_keys.',
    )
    bus_keys_file: str = Field(
        default="", description="A file of the same list (one key a line), read when bus_keys is empty."
    )
    # --- internal bus encryption with transport=tls+tcp (core.bus_tls): file paths, not key material
    bus_tls_ca: str = Field(
        default="", description="The CA that signed every service's bus certificate (PEM)."
    )
    bus_tls_cert: str = Field(
        default="", description="This process's bus certificate (PEM), for serverAuth and clientAuth."
    )
    bus_tls_key: str = Field(default="", description="The private key of bus_tls_cert (PEM).")
    bus_tls_server_name: str = Field(
        default="taskyard-bus",
        description="The name every bus certificate carries (a DNS subject alternative name): a dialer "
        "checks it, whichever host it dialed, so one certificate per service serves every address.",
    )
    bus_replay_window: Timeout = Field(
        default=30.0, description="A message sent further than this from the receiver's clock is refused."
    )

    @property
    def bus_keys(self) -> str:
        return reveal(self.bus_keys_secret)


class TelemetrySettings(SettingsBase):
    """Every process's ops port (/metrics, /livez, /readyz), what it reports, and the log level."""

    # --- the ops port's connections (core/thread_server.py): slow ones must not starve probes

    ops_header_timeout: Timeout = Field(
        default=2.0,
        description="Seconds a connection to the ops port has to finish its request's headers "
        "(a scrape's or a probe's are sent at once), and each later read or write may wait; then closed.",
    )
    ops_max_connections: int = Field(
        default=32,
        ge=1,
        description="Connections the ops port (/metrics, /livez, /readyz) serves at once (a thread each); "
        "when full, the oldest connection still sending its headers is closed for a new one, and only "
        "when none is, a new one is answered 503 and closed.",
    )
    ops_max_connections_per_address: int = Field(
        default=8, ge=1, description="Connections one client address may hold on the ops port."
    )
    # --- the ops port (core/ops.py, docs/observability.md): /metrics and the probes
    metrics_port: Port = Field(
        default=0,
        description="The ops port: Prometheus /metrics, and HTTP /livez and /readyz (no token: they say "
        "only up or down), of this service; 0 = off. Each service of a host needs its own.",
    )
    metrics_host: str = Field(
        default="127.0.0.1",
        description="The ops port's bind address; off loopback /metrics needs metrics_token (without it "
        "the port serves the probes only).",
    )
    metrics_tenants: int = Field(
        default=20,
        ge=0,
        le=10_000,
        description="Tenants a metric's tenant label names one by one (first seen); the rest are 'other'.",
    )
    metrics_token_secret: Secret = Field(
        default=SecretStr(""),
        alias="metrics_token",
        validation_alias="TASKYARD_METRICS_TOKEN",
        description="The bearer token a scrape must send (Prometheus' authorization); read as metrics_token.",
    )
    log_level: str = Field(default="INFO", description="The log level.")

    @property
    def metrics_token(self) -> str:
        return reveal(self.metrics_token_secret)

    @property
    def metrics_served(self) -> bool:
        """Whether the ops port serves /metrics (and so the process counts)."""
        return bool(self.metrics_port) and metrics_scrapable(self.metrics_host, self.metrics_token)


class LeaseSettings(SettingsBase):
    """The lease of a dispatched task: every process issues, renews, holds or rescues one."""

    lease_seconds: float = Field(default=30.0, description="The lease of a dispatched task.")


class PresenceSettings(LeaseSettings):
    """The scheduler's surveys and announcements, which pools (the gateway's remote ones too)
    keep pace with."""

    renew_interval: float = Field(default=10.0, description="Seconds between surveys of the pools.")
    announce_interval: float = Field(default=2.0, description="Seconds between discovery announcements.")


class TaskLimitSettings(SettingsBase):
    """What one task may carry (codec.Limits) and how often it may kill its worker."""

    max_payload_bytes: int = Field(default=256 * 1024, description="A task's args + kwargs, as JSON.")
    max_batch: int = Field(default=1000, description="Tasks per BatchSubmitTasks.")
    grpc_max_message_bytes: int = Field(default=4 * 1024 * 1024, description="The gRPC message limit.")
    max_rescues: int = Field(
        default=3, description="Started deaths a task may cause before it is quarantined; 0 = no cap."
    )


class RetrySettings(SettingsBase):
    """The default retries of a task and the backoff between them."""

    max_retries: int = Field(
        default=3,
        validation_alias=AliasChoices("TASKYARD_MAX_RETRIES", "QUEUE_MAX_RETRIES"),
        description="The default retries per task.",
    )
    retry_base_seconds: float = Field(
        default=1.0, description="Backoff of the retry policy (core.retry): base * 2 ** (attempt - 1)."
    )
    retry_cap_seconds: float = Field(default=300.0, description="The backoff's cap.")
    retry_jitter: float = Field(
        default=0.2, description="Each delay of the default retry policy is cut by up to this fraction."
    )


class WorkerHostSettings(PresenceSettings, RetrySettings):
    """Hosting workers (a worker-pool's own processes, or the gateway's remote ones): their
    beats, results, cancels and the retry policy they apply."""

    max_result_bytes: int = Field(
        default=1024 * 1024, description="A task's result, as JSON; a larger one fails the attempt."
    )
    worker_heartbeat_interval: float = Field(
        default=10.0, description="Each worker beats from its own event loop this often (with its RSS)."
    )
    cancel_deadline: float = Field(
        default=10.0, description="A cancelled task still running this long after the request: killed."
    )
    start_notice_delay: float = Field(
        default=0.05,
        gt=0,
        le=3600,
        description="Seconds (to twice as many) a started attempt's start notice waits for its outcome, "
        "which carries it: only attempts that run longer show RUNNING, and a short one costs one write.",
    )


class EventLogSettings(SettingsBase):
    """Reading the store's event log."""

    event_page_size: int = Field(
        default=1000, description="Events per read of the store's log (the tail's and each replay's)."
    )


class GatewaySettings(
    BusSettings, TelemetrySettings, WorkerHostSettings, TaskLimitSettings, EventLogSettings
):
    """What a gateway reads: its gRPC edge, the dashboard, WatchEvents streams, and the workers
    it hosts."""

    # --- gRPC calls in flight

    grpc_max_concurrent_rpcs: int = Field(
        default=1000,
        description="Unary calls in flight; WaitTask, CancelTask (it may wait) and streams count apart, "
        "so long waits never starve probes and cheap reads. Health/Check: no limit.",
    )
    grpc_max_concurrent_long_rpcs: int = Field(
        default=10_000, description="WaitTask, RunTask, CancelTask and streaming calls in flight."
    )
    grpc_max_workers: int = Field(
        default=256,
        ge=1,
        description="Worker streams (WorkerService.Work) one gateway serves at once; each a pool on the bus.",
    )
    # --- gateway
    grpc_host: str = Field(default="127.0.0.1", description="The gateway's bind address.")
    grpc_port: int = Field(default=50051, description="The gateway's port.")
    grpc_health_port: Port = Field(
        default=0,
        description="Plaintext grpc.health.v1 only, for probes that cannot do TLS (the kubelet's); 0 = off.",
    )
    http_port: Port = Field(
        default=0,
        description="The web dashboard (HTTP + SSE) on the gRPC host; 0 = off (taskyard dev turns it on).",
    )
    dashboard_trace_url: str = Field(
        default="",
        description="A task's trace in the tracing UI: a URL with {trace_id} (else /trace/<id> is appended); "
        "empty = no link.",
    )
    # --- HTTP edges (gateway/dashboard/doors.py, docs/security.md): what
    # one client may hold, so slow or idle connections can starve neither gRPC nor the probes.
    http_header_timeout: Timeout = Field(
        default=10.0,
        description="Seconds a connection to the dashboard has to finish a request's "
        "headers, from its first byte (from the connect, or the dashboard's TLS handshake, for the first "
        "request), the dashboard's TLS handshake has to finish, and a write's body be in; then it is closed.",
    )
    http_idle_timeout: Timeout = Field(
        default=60.0, description="Seconds a dashboard connection may wait between requests, then closed."
    )
    http_max_connections: int = Field(
        default=256,
        ge=1,
        description="Dashboard connections open at once (handshakes included); more are refused at once. "
        "At most half the process's descriptor limit (checked at start), so gRPC and health keep theirs.",
    )
    http_max_connections_per_address: int = Field(
        default=32, ge=1, description="Dashboard connections one client address may hold at once."
    )
    dashboard_max_streams: int = Field(
        default=64, ge=1, description="Live views (SSE: pulse, events, logs) per gateway; more get 503."
    )
    dashboard_max_streams_per_client: int = Field(
        default=16,
        ge=1,
        description="Live views one token, and one client address, may hold at once (a page holds one "
        "to three); more get 429.",
    )
    # --- gRPC edge security (gateway/auth.py, docs/security.md): file paths, not key material
    grpc_tls_cert: str = Field(
        default="", validation_alias="TASKYARD_TLS_CERT", description="The gateway's certificate file."
    )
    grpc_tls_key: str = Field(
        default="", validation_alias="TASKYARD_TLS_KEY", description="The gateway's private key file."
    )
    grpc_tls_client_ca: str = Field(
        default="",
        validation_alias="TASKYARD_TLS_CLIENT_CA",
        description="Set: clients must present a certificate signed by this CA (mTLS).",
    )
    grpc_tokens_file: str = Field(
        default="", validation_alias="TASKYARD_AUTH_TOKENS_FILE", description="The bearer tokens file."
    )
    grpc_allow_insecure: Flag = Field(
        default=False,
        description="A non-loopback gRPC host without TLS and tokens is refused unless this is set.",
    )
    # --- gRPC connections: dead or idle ones are closed (seconds)
    grpc_keepalive_time: Timeout = Field(default=60.0, description="Without reads before a ping.")
    grpc_keepalive_timeout: Timeout = Field(default=20.0, description="For a ping's ack, then closed.")
    grpc_max_connection_idle: Timeout = Field(default=300.0, description="Without a call, then GOAWAY.")
    grpc_min_ping_interval: Timeout = Field(default=10.0, description="Between a client's data-less pings.")
    grpc_max_connection_age: float = Field(default=0.0, description="Then GOAWAY; 0 = off.")
    grpc_stop_grace: Timeout = Field(
        default=5.0,
        description="At a stop (SIGTERM), the calls in flight and the attempts its workers run have this "
        "long to end; then they are cut (a worker's attempts go back as a dead pool's).",
    )
    # --- WatchEvents streams (docs/events.md)
    event_ring_size: int = Field(
        default=50_000,
        description="Recent events a gateway holds for its WatchEvents streams; a stream that falls "
        "further behind while it sends is cut off (CONSUMER_TOO_SLOW).",
    )
    event_poll_interval: float = Field(
        default=0.2,
        description="Seconds between a gateway's reads of the log while streams are open (committed "
        "batches wake it sooner); none while no stream is open.",
    )
    event_idle_interval: float = Field(
        default=10.0,
        gt=0,
        le=15,
        description="An idle WatchEvents stream sends an empty response this often (s); "
        "at most 15, as the API promises.",
    )


class StoreSettings(BusSettings, TelemetrySettings, LeaseSettings, TaskLimitSettings, EventLogSettings):
    """What a result-store reads: its database, retention and the event log."""

    # --- the database
    database_url_secret: Secret = Field(
        default=SecretStr(""),
        alias="database_url",
        validation_alias=AliasChoices("TASKYARD_DATABASE_URL", "DATABASE_URL"),
        description="The PostgreSQL URL (its password with it); read it as database_url.",
    )
    db_pool_size: int = Field(default=8, description="The result-store's connections for reads.")
    use_notify: Flag = Field(
        default=True,
        validation_alias=AliasChoices("TASKYARD_USE_NOTIFY", "QUEUE_USE_POSTGRESQL_NOTIFY"),
        description="LISTEN/NOTIFY wake-ups.",
    )
    notify_channel: str = Field(
        default="queue_new_task",
        validation_alias=AliasChoices("TASKYARD_NOTIFY_CHANNEL", "QUEUE_NOTIFY_CHANNEL"),
        description="The NOTIFY channel.",
    )
    # --- task logs, retention
    log_max_lines_per_task: int = Field(
        default=100_000,
        validation_alias="TASKYARD_LOG_MAX_LINES",
        description='Lines kept per task; past it they are dropped and one "log truncated" line says so.',
    )
    retention_days: float = Field(
        default=30.0,
        validation_alias=AliasChoices("TASKYARD_RETENTION_DAYS", "QUEUED_TASK_RETENTION_DAYS"),
        description="Final tasks are deleted (with their logs) this many days after they finished.",
    )
    purge_interval: float = Field(default=3600.0, description="Seconds between retention purges.")
    # --- the event log (WatchEvents, docs/events.md)
    event_retention: float = Field(
        default=86_400.0, description="Seconds the store keeps events; an older cursor is CURSOR_EXPIRED."
    )
    # --- caches and sweeps
    result_ttl: float = Field(default=3600.0, description="Seconds a final record stays in the result cache.")
    pool_lost_after: float = Field(
        default=30.0,
        gt=0,
        description="A pool whose heartbeats stopped this long ago is declared lost: STOPPED, with a "
        "pool.lost event (a store that itself just started or reconnected waits as long). Pools beat "
        "every 5 s (or worker_heartbeat_interval, if shorter): keep it several beats longer.",
    )
    graph_sweep_interval: float = Field(
        default=30.0,
        description="The store re-resolves every PENDING task this often (and at start-up): a crash "
        "between a dependency's commit and its resolve step delays, never strands.",
    )
    # --- deployment
    development: Flag = Field(
        default=False, description="Development mode; TASKYARD_ENVIRONMENT=development also sets it."
    )

    @property
    def database_url(self) -> str:
        return reveal(self.database_url_secret)


class SchedulerSettings(BusSettings, TelemetrySettings, PresenceSettings, RetrySettings):
    """What a scheduler reads: its rescans, due tasks and leadership."""

    # --- rescans of the database

    polling_interval: float = Field(
        default=2.0,
        validation_alias=AliasChoices("TASKYARD_POLLING_INTERVAL", "QUEUE_POLLING_INTERVAL"),
        description="Seconds; rescue lapsed leases, promote due retries.",
    )
    fallback_polling_interval: float = Field(
        default=30.0,
        validation_alias=AliasChoices(
            "TASKYARD_FALLBACK_POLLING_INTERVAL", "QUEUE_FALLBACK_POLLING_INTERVAL"
        ),
        description="Seconds; reload QUEUED rows the scheduler does not know.",
    )
    # --- time (ETA/countdown, retries, schedules, leadership)
    due_window: float = Field(
        default=60.0, description="The scheduler's due heap caches SCHEDULED/RETRYING rows due this soon."
    )
    due_refresh_interval: float = Field(
        default=30.0, description="Seconds between reloads of the due heap from the database."
    )
    schedule_refresh_interval: float = Field(
        default=10.0,
        description="The scheduler re-reads the earliest next run of the schedules at least this often "
        "(a lost schedule.changed event delays a run by at most this).",
    )
    reconcile_margin: float = Field(
        default=0.1,
        description="A restarted scheduler hands back, at a pool's first survey answer, the leases of its "
        "predecessor the pool does not hold that were issued more than this many seconds before the "
        "survey was sent (a dispatch committed just before may still be on its way).",
    )
    leader_ttl: Timeout = Field(
        default=2.0,
        description="Seconds a scheduler's leadership lasts unrenewed (the leader renews every quarter of "
        "it): a standby takes over at most this long after the leader died, plus ~0.25 s.",
    )


class PoolSettings(BusSettings, TelemetrySettings, WorkerHostSettings, TaskLimitSettings):
    """What a worker-pool reads: its workers, their supervision and task logs."""

    # --- tasks
    task_timeout: Timeout = Field(
        default=300.0,
        validation_alias=AliasChoices("TASKYARD_TASK_TIMEOUT", "QUEUE_TASK_TIMEOUT"),
        description="The default per-attempt timeout, seconds.",
    )
    # --- worker pool
    workers: int = Field(
        default=1,
        validation_alias=AliasChoices("TASKYARD_WORKERS", "QUEUED_TASK_WORKERS"),
        description="Worker processes per pool.",
    )
    concurrency: int = Field(
        default_factory=lambda: os.cpu_count() or 1,
        validation_alias=AliasChoices("TASKYARD_CONCURRENCY", "QUEUED_TASK_CONCURRENCY"),
        description="Tasks per worker process (default: the CPU count).",
    )
    worker_max_memory_mib: int = Field(
        default=0,
        validation_alias=AliasChoices("TASKYARD_WORKER_MAX_MEMORY", "QUEUED_TASK_WORKER_MAX_MEMORY"),
        description="MiB; a worker above it is recycled; 0 = no limit.",
    )
    task_modules: Modules = Field(default=(), description="Modules of @task functions (comma-separated).")
    pool_tenants: Tenants = Field(
        default=(),
        description="The tenants whose tasks this pool runs (comma-separated; 'default' the default "
        "tenant); empty: every tenant's.",
    )
    server_name: str = Field(
        default_factory=lambda: os.uname().nodename, description="This pool's name (default: the host's)."
    )
    shutdown_timeout: float = Field(default=30.0, description="Seconds a draining pool waits for its tasks.")
    # --- worker supervision (seconds)
    worker_idle_silence: float = Field(
        default=60.0, description="An idle worker silent this long is killed (its loop is wedged)."
    )
    worker_start_silence: float = Field(
        default=120.0, description="A worker that never beat this long after its spawn is killed."
    )
    worker_busy_silence_factor: float = Field(
        default=2.0, description="A busy worker silent this many times its longest timeout is killed."
    )
    timeout_grace: float = Field(
        default=2.0, description="A sync task past its timeout: its worker is replaced after this."
    )
    cancel_grace: float = Field(
        default=2.0, description="A running task's cancel: the flag, then asyncio cancellation after this."
    )
    # --- task logs
    log_max_line_bytes: int = Field(
        default=16 * 1024, description="A log line longer than this (UTF-8 bytes) is cut, with a marker."
    )
    log_buffer_lines: int = Field(
        default=50_000,
        description="Lines a worker process (and the manager) holds while the store is slow; past it "
        "a sync task waits up to log_block_seconds for room, an async one drops (counted).",
    )
    log_block_seconds: float = Field(default=1.0, description="See log_buffer_lines.")


class Settings(GatewaySettings, StoreSettings, SchedulerSettings, PoolSettings):
    """Every process's settings at once: what ``taskyard dev`` and ``taskyard serve`` read and
    hand their children (to_env), and what tests build. Being a subclass of each process's
    class, it is accepted wherever one is."""


# The processes, by the name their logs and docs/operations.md use, with the settings each reads.
PROCESSES: dict[str, type[GatewaySettings | StoreSettings | SchedulerSettings | PoolSettings]] = {
    "gateway": GatewaySettings,
    "result-store": StoreSettings,
    "scheduler": SchedulerSettings,
    "worker-pool": PoolSettings,
}


# Callers copy settings with dataclasses.replace and list them with dataclasses.fields,
# as they did when Settings was a dataclass; both go through __init__, so a copy is
# validated like any other. (Subclasses get theirs as they are made.)
SettingsBase.__dataclass_fields__ = _dataclass_fields(SettingsBase)
