"""Settings come from the environment: TASKYARD_* names, the seed's QUEUED_TASK_*/QUEUE_*
aliases (TASKYARD_* wins), a secrets directory, clear errors for bad values, secrets kept
out of reprs, copies, children, and every NNG address."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import socket
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from taskyard.core import seal
from taskyard.core.config import Settings
from taskyard.core.priority import LANES, Priority
from taskyard.v1 import task_pb2

# (field, TASKYARD_* name, seed alias or None, value as text, parsed value)
NAMES: list[tuple[str, str, str | None, str, object]] = [
    ("host", "TASKYARD_HOST", None, "10.1.2.3", "10.1.2.3"),
    ("bind_host", "TASKYARD_BIND_HOST", None, "0.0.0.0", "0.0.0.0"),
    ("scheduler_host", "TASKYARD_SCHEDULER_HOST", None, "scheduler", "scheduler"),
    ("store_host", "TASKYARD_STORE_HOST", None, "result-store", "result-store"),
    ("advertise_host", "TASKYARD_ADVERTISE_HOST", None, "10.0.0.7", "10.0.0.7"),
    ("pool_pair_port", "TASKYARD_POOL_PAIR_PORT", None, "5600", 5600),
    ("base_port", "TASKYARD_BASE_PORT", None, "7000", 7000),
    ("discovery_port", "TASKYARD_DISCOVERY_PORT", None, "7100", 7100),
    ("transport", "TASKYARD_TRANSPORT", None, "ipc", "ipc"),
    ("ipc_dir", "TASKYARD_IPC_DIR", None, "/run/ty", "/run/ty"),
    ("max_message_bytes", "TASKYARD_MAX_MESSAGE_BYTES", None, "1048576", 1048576),
    ("max_payload_bytes", "TASKYARD_MAX_PAYLOAD_BYTES", None, "1024", 1024),
    ("max_result_bytes", "TASKYARD_MAX_RESULT_BYTES", None, "2048", 2048),
    ("max_batch", "TASKYARD_MAX_BATCH", None, "50", 50),
    ("request_timeout", "TASKYARD_REQUEST_TIMEOUT", None, "2.5", 2.5),
    ("grpc_port", "TASKYARD_GRPC_PORT", None, "50099", 50099),
    ("http_port", "TASKYARD_HTTP_PORT", None, "8181", 8181),
    ("database_url", "TASKYARD_DATABASE_URL", "DATABASE_URL", "postgresql://db/x", "postgresql://db/x"),
    ("use_notify", "TASKYARD_USE_NOTIFY", "QUEUE_USE_POSTGRESQL_NOTIFY", "false", False),
    ("notify_channel", "TASKYARD_NOTIFY_CHANNEL", "QUEUE_NOTIFY_CHANNEL", "wake_up", "wake_up"),
    ("polling_interval", "TASKYARD_POLLING_INTERVAL", "QUEUE_POLLING_INTERVAL", "0.5", 0.5),
    (
        "fallback_polling_interval",
        "TASKYARD_FALLBACK_POLLING_INTERVAL",
        "QUEUE_FALLBACK_POLLING_INTERVAL",
        "12",
        12.0,
    ),
    ("task_timeout", "TASKYARD_TASK_TIMEOUT", "QUEUE_TASK_TIMEOUT", "60", 60.0),
    ("max_retries", "TASKYARD_MAX_RETRIES", "QUEUE_MAX_RETRIES", "7", 7),
    ("workers", "TASKYARD_WORKERS", "QUEUED_TASK_WORKERS", "4", 4),
    ("concurrency", "TASKYARD_CONCURRENCY", "QUEUED_TASK_CONCURRENCY", "16", 16),
    ("worker_max_memory_mib", "TASKYARD_WORKER_MAX_MEMORY", "QUEUED_TASK_WORKER_MAX_MEMORY", "1024", 1024),
    ("lease_seconds", "TASKYARD_LEASE_SECONDS", None, "45", 45.0),
    ("server_name", "TASKYARD_SERVER_NAME", None, "box-1", "box-1"),
    ("development", "TASKYARD_DEVELOPMENT", None, "true", True),
]
ALIASED = [n for n in NAMES if n[2] is not None]
# Every alias the seed documents (fastedgy-queued-tasks), each mapped to a field.
SEED_ALIASES = {
    "QUEUED_TASK_WORKERS",
    "QUEUED_TASK_CONCURRENCY",
    "QUEUED_TASK_WORKER_MAX_MEMORY",
    "QUEUE_POLLING_INTERVAL",
    "QUEUE_FALLBACK_POLLING_INTERVAL",
    "QUEUE_TASK_TIMEOUT",
    "QUEUE_MAX_RETRIES",
    "QUEUE_USE_POSTGRESQL_NOTIFY",
    "QUEUE_NOTIFY_CHANNEL",
}


def test_empty_environment_gives_the_defaults() -> None:
    s = Settings.from_env({})
    assert s == Settings()
    assert (s.host, s.base_port, s.discovery_port, s.transport) == ("127.0.0.1", 5555, 5550, "tcp")
    assert (s.grpc_port, s.http_port) == (50051, 0)
    assert s.max_retries == 3 and s.task_timeout == 300.0 and s.workers == 1
    assert s.use_notify is True and s.notify_channel == "queue_new_task"
    assert (s.polling_interval, s.fallback_polling_interval) == (2.0, 30.0)
    assert s.concurrency >= 1


def test_from_env_reads_os_environ_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TASKYARD_BASE_PORT", "6123")
    assert Settings.from_env().base_port == 6123


@pytest.mark.parametrize(("field", "name", "alias", "raw", "value"), NAMES, ids=[n[1] for n in NAMES])
def test_taskyard_names(field: str, name: str, alias: str | None, raw: str, value: object) -> None:
    assert getattr(Settings.from_env({name: raw}), field) == value


@pytest.mark.parametrize(
    ("field", "name", "alias", "raw", "value"), ALIASED, ids=[str(n[2]) for n in ALIASED]
)
def test_seed_aliases(field: str, name: str, alias: str, raw: str, value: object) -> None:
    assert getattr(Settings.from_env({alias: raw}), field) == value


def test_every_seed_alias_is_understood() -> None:
    assert {n[2] for n in ALIASED} >= SEED_ALIASES


@pytest.mark.parametrize(("field", "name", "alias", "raw", "value"), ALIASED, ids=[n[1] for n in ALIASED])
def test_taskyard_name_wins_over_the_alias(
    field: str, name: str, alias: str, raw: str, value: object
) -> None:
    other = {
        bool: lambda: "true" if value is False else "false",
        int: lambda: "99",
        float: lambda: "99.5",
        str: lambda: "something-else",
    }[type(value)]()
    assert getattr(Settings.from_env({alias: other}), field) != value, "the alias alone is read"
    assert getattr(Settings.from_env({name: raw, alias: other}), field) == value


def test_empty_taskyard_name_falls_back_to_the_alias() -> None:
    s = Settings.from_env({"TASKYARD_WORKERS": "", "QUEUED_TASK_WORKERS": "6"})
    assert s.workers == 6


@pytest.mark.parametrize("raw", ["1", "true", "TRUE", "yes", "on", " True "])
def test_true_values(raw: str) -> None:
    assert Settings.from_env({"TASKYARD_DEVELOPMENT": raw}).development is True


@pytest.mark.parametrize("raw", ["0", "false", "no", "off", "False"])
def test_false_values(raw: str) -> None:
    assert Settings.from_env({"TASKYARD_USE_NOTIFY": raw}).use_notify is False


def test_task_modules_are_a_comma_list() -> None:
    s = Settings.from_env({"TASKYARD_TASK_MODULES": " app.tasks, other.jobs ,,"})
    assert s.task_modules == ("app.tasks", "other.jobs")
    assert Settings.from_env({}).task_modules == ()


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"TASKYARD_BASE_PORT": "fifty"}, "TASKYARD_BASE_PORT"),
        ({"TASKYARD_MAX_BATCH": "1.5"}, "TASKYARD_MAX_BATCH"),
        ({"TASKYARD_REQUEST_TIMEOUT": "soon"}, "TASKYARD_REQUEST_TIMEOUT"),
        ({"TASKYARD_WORKERS": "four"}, "TASKYARD_WORKERS"),
    ],
)
def test_bad_values_raise_a_clear_error(env: dict[str, str], named: str) -> None:
    with pytest.raises(ValueError) as info:
        Settings.from_env(env)
    text = str(info.value)
    assert named in text
    assert repr(next(iter(env.values()))) in text


def test_bad_alias_value_names_the_alias() -> None:
    with pytest.raises(ValueError, match="QUEUED_TASK_WORKERS"):
        Settings.from_env({"QUEUED_TASK_WORKERS": "four"})


def test_bad_boolean_raises() -> None:
    with pytest.raises(ValueError, match="TASKYARD_USE_NOTIFY"):
        Settings.from_env({"TASKYARD_USE_NOTIFY": "maybe"})


def test_unknown_transport_raises() -> None:
    with pytest.raises(ValueError, match="TASKYARD_TRANSPORT"):
        Settings.from_env({"TASKYARD_TRANSPORT": "udp"})


def test_to_env_reproduces_the_settings() -> None:
    s = Settings.from_env(
        {
            "TASKYARD_TRANSPORT": "ipc",
            "TASKYARD_IPC_DIR": "/tmp/x",
            "QUEUED_TASK_WORKERS": "3",
            "TASKYARD_TASK_MODULES": "a.b,c",
            "TASKYARD_USE_NOTIFY": "false",
            "TASKYARD_DEVELOPMENT": "true",
            "TASKYARD_REQUEST_TIMEOUT": "0.25",
        }
    )
    env = s.to_env()
    assert all(k.startswith("TASKYARD_") for k in env)
    assert Settings.from_env(env) == s


def test_to_env_covers_every_field() -> None:
    # A field added to Settings but not to from_env/to_env would silently not reach child processes.
    changed: dict[str, Any] = {}
    for f in dataclasses.fields(Settings):
        value = getattr(Settings(), f.name)
        if isinstance(value, bool):
            changed[f.name] = not value
        elif isinstance(value, int):
            changed[f.name] = value + 1
        elif isinstance(value, float):
            changed[f.name] = value + 0.5
        elif isinstance(value, tuple):
            changed[f.name] = ("some-tenant",) if f.name == "pool_tenants" else ("some.module",)
        else:
            changed[f.name] = "ipc" if f.name == "transport" else f"x-{value}"
    s = Settings(**changed)
    assert Settings.from_env(s.to_env()) == s


# --- addresses ---------------------------------------------------------------


def test_priorities_mirror_the_public_proto() -> None:
    proto = {v.name: v.number for v in task_pb2.DESCRIPTOR.enum_types_by_name["Priority"].values}
    assert proto.pop("PRIORITY_UNSPECIFIED") == 0
    assert proto == {f"PRIORITY_{p.name}": int(p) for p in Priority}
    assert Priority.from_wire(0) == Priority.NORMAL
    assert LANES == (Priority.CRITICAL, Priority.HIGH, Priority.NORMAL, Priority.LOW)


def test_tcp_addresses_follow_the_seed_ports() -> None:
    s = Settings()
    assert [s.lane_address(p) for p in LANES] == [
        "tcp://127.0.0.1:5555",
        "tcp://127.0.0.1:5556",
        "tcp://127.0.0.1:5557",
        "tcp://127.0.0.1:5558",
    ]
    assert s.store_address == "tcp://127.0.0.1:5559"
    assert s.registration_address == "tcp://127.0.0.1:5560"
    assert s.survey_address == "tcp://127.0.0.1:5561"
    assert s.events_address == "tcp://127.0.0.1:5562"
    assert s.pool_stream_address == "tcp://127.0.0.1:5563"
    assert s.scheduler_stream_address == "tcp://127.0.0.1:5564"
    assert s.discovery_address == "tcp://127.0.0.1:5550"
    assert s.pool_pair_listen_address("p1") == "tcp://127.0.0.1:0"


def test_tcp_addresses_move_with_host_and_ports() -> None:
    s = Settings.from_env(
        {"TASKYARD_HOST": "0.0.0.0", "TASKYARD_BASE_PORT": "7000", "TASKYARD_DISCOVERY_PORT": "6999"}
    )
    assert s.lane_address(Priority.CRITICAL) == "tcp://0.0.0.0:7000"
    assert s.lane_address(Priority.LOW) == "tcp://0.0.0.0:7003"
    assert s.store_address == "tcp://0.0.0.0:7004"
    assert s.events_address == "tcp://0.0.0.0:7007"
    assert s.discovery_address == "tcp://0.0.0.0:6999"


def all_addresses(s: Settings) -> list[str]:
    return [
        *(s.lane_address(p) for p in LANES),
        s.store_address,
        s.registration_address,
        s.survey_address,
        s.events_address,
        s.pool_stream_address,
        s.scheduler_stream_address,
        s.discovery_address,
    ]


def test_ipc_addresses_are_socket_files_in_the_ipc_dir(tmp_path: Path) -> None:
    s = Settings.from_env({"TASKYARD_TRANSPORT": "ipc", "TASKYARD_IPC_DIR": str(tmp_path)})
    addresses = all_addresses(s)
    assert len(set(addresses)) == len(addresses), "every socket has its own file"
    for address in addresses:
        assert address.startswith("ipc://")
        path = Path(address.removeprefix("ipc://"))
        assert path.parent == tmp_path and path.suffix == ".sock"
    assert s.lane_address(Priority.HIGH) == f"ipc://{tmp_path}/lane-high.sock"
    assert s.store_address == f"ipc://{tmp_path}/store.sock"
    assert s.discovery_address == f"ipc://{tmp_path}/discovery.sock"
    pair = s.pool_pair_listen_address("abc")
    assert pair == f"ipc://{tmp_path}/pool-abc.sock" and pair not in addresses


def test_tcp_addresses_are_distinct() -> None:
    addresses = all_addresses(Settings())
    assert len(set(addresses)) == len(addresses)


# --- listen / dial split (multi-host) -------------------------------------------


def listen_addresses(s: Settings) -> list[str]:
    return [
        *(s.lane_listen_address(p) for p in LANES),
        s.store_listen_address,
        s.registration_listen_address,
        s.survey_listen_address,
        s.events_listen_address,
        s.pool_stream_listen_address,
        s.scheduler_stream_listen_address,
        s.discovery_listen_address,
    ]


def test_by_default_every_role_uses_host() -> None:
    s = Settings()
    assert (s.bind_host, s.scheduler_host, s.store_host, s.advertise_host, s.pool_pair_port) == (
        "",
        "",
        "",
        "",
        0,
    )
    assert s.effective_bind_host == s.effective_scheduler_host == s.effective_store_host == "127.0.0.1"
    assert s.effective_advertise_host == "127.0.0.1"
    assert listen_addresses(s) == all_addresses(s), "one machine: listen where the others dial"
    assert s.advertised_pair_address("tcp://127.0.0.1:40123") == "tcp://127.0.0.1:40123"


def test_host_alone_still_moves_every_address() -> None:
    s = Settings.from_env({"TASKYARD_HOST": "10.1.2.3"})
    assert {a.split(":")[1] for a in all_addresses(s) + listen_addresses(s)} == {"//10.1.2.3"}
    assert s.pool_pair_listen_address("p") == "tcp://10.1.2.3:0"
    assert s.effective_advertise_host == "10.1.2.3"


def multihost() -> Settings:
    return Settings.from_env(
        {
            "TASKYARD_BIND_HOST": "0.0.0.0",
            "TASKYARD_SCHEDULER_HOST": "scheduler",
            "TASKYARD_STORE_HOST": "result-store",
            "TASKYARD_ADVERTISE_HOST": "pool-1",
        }
    )


def test_tcp_listeners_bind_the_bind_host() -> None:
    s = multihost()
    assert [s.lane_listen_address(p) for p in LANES] == [f"tcp://0.0.0.0:{5555 + i}" for i in range(4)]
    assert s.store_listen_address == "tcp://0.0.0.0:5559"
    assert s.registration_listen_address == "tcp://0.0.0.0:5560"
    assert s.survey_listen_address == "tcp://0.0.0.0:5561"
    assert s.events_listen_address == "tcp://0.0.0.0:5562"
    assert s.discovery_listen_address == "tcp://0.0.0.0:5550"
    assert s.pool_pair_listen_address("p1") == "tcp://0.0.0.0:0"


def test_tcp_dialers_use_the_scheduler_and_store_hosts() -> None:
    s = multihost()
    assert [s.lane_address(p) for p in LANES] == [f"tcp://scheduler:{5555 + i}" for i in range(4)]
    assert s.registration_address == "tcp://scheduler:5560"
    assert s.survey_address == "tcp://scheduler:5561"
    assert s.discovery_address == "tcp://scheduler:5550"
    assert s.store_address == "tcp://result-store:5559"
    assert s.events_address == "tcp://result-store:5562"


@pytest.mark.parametrize(
    ("name", "changed"),
    [
        ("TASKYARD_BIND_HOST", "listen"),
        ("TASKYARD_SCHEDULER_HOST", "scheduler dial"),
        ("TASKYARD_STORE_HOST", "store dial"),
    ],
)
def test_each_host_override_moves_only_its_addresses(name: str, changed: str) -> None:
    s = Settings.from_env({name: "10.9.9.9"})
    groups = {
        "listen": [*listen_addresses(s), s.pool_pair_listen_address("p")],
        "scheduler dial": [
            *(s.lane_address(p) for p in LANES),
            s.registration_address,
            s.survey_address,
            s.discovery_address,
        ],
        "store dial": [s.store_address, s.events_address, s.pool_stream_address, s.scheduler_stream_address],
    }
    for group, addresses in groups.items():
        expected = "10.9.9.9" if group == changed else "127.0.0.1"
        assert all(a.startswith(f"tcp://{expected}:") for a in addresses), (group, addresses)


def test_ipc_listen_and_dial_addresses_are_the_same_files(tmp_path: Path) -> None:
    env = {"TASKYARD_TRANSPORT": "ipc", "TASKYARD_IPC_DIR": str(tmp_path)}
    s = Settings.from_env(
        {**env, "TASKYARD_BIND_HOST": "0.0.0.0", "TASKYARD_SCHEDULER_HOST": "a", "TASKYARD_STORE_HOST": "b"}
    )
    assert listen_addresses(s) == all_addresses(s)
    assert all_addresses(s) == all_addresses(Settings.from_env(env))
    pair = s.pool_pair_listen_address("abc")
    assert pair == f"ipc://{tmp_path}/pool-abc.sock"
    assert s.advertised_pair_address(pair) == pair


def test_the_pool_advertises_its_bound_port_on_the_advertise_host() -> None:
    s = multihost()
    assert s.advertised_pair_address("tcp://0.0.0.0:40123") == "tcp://pool-1:40123"
    assert s.advertised_pair_address("tcp://[::]:40123") == "tcp://pool-1:40123"


def test_advertise_falls_back_to_the_bind_host_then_the_host_name() -> None:
    assert Settings(host="10.0.0.5").effective_advertise_host == "10.0.0.5"
    assert Settings(bind_host="10.0.0.6").effective_advertise_host == "10.0.0.6"
    for wildcard in ("0.0.0.0", "::"):
        assert Settings(bind_host=wildcard).effective_advertise_host == socket.gethostname()
        assert Settings(host=wildcard).effective_advertise_host == socket.gethostname()
        s = Settings(bind_host=wildcard, advertise_host="10.0.0.7")
        assert s.effective_advertise_host == "10.0.0.7"
    s = Settings(bind_host="0.0.0.0")
    assert s.advertised_pair_address("tcp://0.0.0.0:40123") == f"tcp://{socket.gethostname()}:40123"


def test_ipv6_hosts_are_bracketed() -> None:
    s = Settings.from_env({"TASKYARD_BIND_HOST": "::", "TASKYARD_SCHEDULER_HOST": "fd00::1"})
    assert s.survey_listen_address == "tcp://[::]:5561"
    assert s.survey_address == "tcp://[fd00::1]:5561"
    assert Settings.from_env({"TASKYARD_STORE_HOST": "[fd00::2]"}).store_address == "tcp://[fd00::2]:5559"
    assert Settings(advertise_host="fd00::3").advertised_pair_address("tcp://[::]:7") == "tcp://[fd00::3]:7"


def test_a_fixed_pool_pair_port() -> None:
    s = Settings.from_env({"TASKYARD_BIND_HOST": "0.0.0.0", "TASKYARD_POOL_PAIR_PORT": "5600"})
    assert s.pool_pair_listen_address("p") == "tcp://0.0.0.0:5600"
    assert s.advertised_pair_address("tcp://0.0.0.0:5600") == f"tcp://{socket.gethostname()}:5600"


@pytest.mark.parametrize(
    "name",
    [
        "TASKYARD_HOST",
        "TASKYARD_BIND_HOST",
        "TASKYARD_SCHEDULER_HOST",
        "TASKYARD_STORE_HOST",
        "TASKYARD_ADVERTISE_HOST",
    ],
)
@pytest.mark.parametrize(
    "raw", ["tcp://scheduler", "scheduler:5555", "10.0.0.1:80", "a b", "host/path", "-x", "[fd00::1", "  "]
)
def test_bad_hosts_raise_a_clear_error(name: str, raw: str) -> None:
    with pytest.raises(ValueError) as info:
        Settings.from_env({name: raw})
    assert name in str(info.value) and repr(raw) in str(info.value)


@pytest.mark.parametrize("raw", ["-1", "65536", "many"])
def test_bad_pool_pair_port_raises(raw: str) -> None:
    with pytest.raises(ValueError, match=f"TASKYARD_POOL_PAIR_PORT.*{raw!r}"):
        Settings.from_env({"TASKYARD_POOL_PAIR_PORT": raw})


def test_to_env_round_trips_the_multihost_settings() -> None:
    s = multihost()
    s = dataclasses.replace(s, pool_pair_port=5600)
    env = s.to_env()
    assert env["TASKYARD_BIND_HOST"] == "0.0.0.0"
    assert env["TASKYARD_SCHEDULER_HOST"] == "scheduler"
    assert env["TASKYARD_STORE_HOST"] == "result-store"
    assert env["TASKYARD_ADVERTISE_HOST"] == "pool-1"
    assert env["TASKYARD_POOL_PAIR_PORT"] == "5600"
    assert Settings.from_env(env) == s
    # Unset roles stay unset (they keep following TASKYARD_HOST in the child).
    plain = Settings(host="10.1.1.1")
    assert Settings.from_env(plain.to_env()) == plain
    assert Settings.from_env(plain.to_env()).effective_store_host == "10.1.1.1"


@pytest.mark.parametrize("raw", ["0", "-1", "0.0", "nan"])
@pytest.mark.parametrize("name", ["TASKYARD_TASK_TIMEOUT", "QUEUE_TASK_TIMEOUT"])
def test_a_task_timeout_must_be_positive(name: str, raw: str) -> None:
    # 0 is no "no timeout": it would fail every attempt and get busy workers killed.
    with pytest.raises(ValueError, match=f"{name} must be a positive number of seconds"):
        Settings.from_env({name: raw})


# --- secrets -------------------------------------------------------------------

PASSWORD = "hunter2-pw"
DSN = f"postgresql://taskyard:{PASSWORD}@db:5432/taskyard"
BUS_KEYS = seal.generate_keys("k1")
BUS_SECRET = BUS_KEYS.partition(":")[2]


def test_secrets_never_show_in_reprs_or_dumps() -> None:
    s = Settings.from_env({"TASKYARD_DATABASE_URL": DSN, "TASKYARD_BUS_KEYS": BUS_KEYS})
    for shown in (repr(s), str(s), f"{s}", s.model_dump_json(), str(s.model_dump())):
        assert PASSWORD not in shown and BUS_SECRET not in shown, shown
    assert isinstance(s.database_url_secret, SecretStr) and isinstance(s.bus_keys_secret, SecretStr)
    # Callers read the plain text under the names they always used.
    assert (s.database_url, s.bus_keys) == (DSN, BUS_KEYS)


def test_secrets_are_set_by_their_attribute_names() -> None:
    s = Settings(database_url=DSN, bus_keys=BUS_KEYS)
    assert (s.database_url, s.bus_keys) == (DSN, BUS_KEYS)
    assert Settings(database_url=DSN) == Settings.from_env({"DATABASE_URL": DSN})
    assert PASSWORD not in repr(s)


def test_settings_built_in_code_ignore_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TASKYARD_WORKERS", "9")
    monkeypatch.setenv("DATABASE_URL", DSN)
    assert (Settings().workers, Settings(host="10.0.0.1").database_url) == (1, "")
    assert (Settings.from_env().workers, Settings.from_env().database_url) == (9, DSN)


@pytest.mark.parametrize("name", ["TASKYARD_workers", "taskyard_workers", "workers", "Queued_Task_Workers"])
def test_only_the_documented_spelling_is_read(name: str) -> None:
    assert Settings.from_env({name: "9"}).workers == 1
    assert Settings.from_env({"TASKYARD_WORKERS": "9"}).workers == 9


# --- copies ----------------------------------------------------------------------


def test_copies_are_validated_and_keep_the_secrets() -> None:
    s = Settings.from_env({"TASKYARD_DATABASE_URL": DSN, "TASKYARD_BUS_KEYS": BUS_KEYS})
    for copy in (s.replace(workers=5), dataclasses.replace(s, workers=5)):
        assert (copy.workers, copy.database_url, copy.bus_keys) == (5, DSN, BUS_KEYS)
        assert s.workers == 1, "the original is unchanged"
    assert (
        dataclasses.replace(s, database_url="postgresql://other/db").database_url == "postgresql://other/db"
    )
    assert {"host", "database_url", "bus_keys"} <= {f.name for f in dataclasses.fields(Settings)}
    with pytest.raises(ValueError, match="transport"):
        s.replace(transport="udp")
    with pytest.raises(ValueError, match="frozen"):
        s.workers = 2


# --- errors ----------------------------------------------------------------------


def test_a_bad_value_is_one_clear_line_not_a_validation_report() -> None:
    env = {"TASKYARD_WORKERS": "four", "TASKYARD_HOST": "a b", "TASKYARD_DATABASE_URL": DSN}
    with pytest.raises(ValueError) as info:
        Settings.from_env(env)
    assert type(info.value) is ValueError
    assert info.value.__suppress_context__, "no chained pydantic report under it"
    text = str(info.value)
    assert "TASKYARD_WORKERS must be an integer, got 'four'" in text
    assert "TASKYARD_HOST must be a host name or IP address (no scheme, no port), got 'a b'" in text
    assert "validation error" not in text and "pydantic" not in text and PASSWORD not in text


@pytest.mark.parametrize(
    ("environment", "development"),
    [({"TASKYARD_ENVIRONMENT": " Development "}, True), ({"TASKYARD_ENVIRONMENT": "production"}, False)],
)
def test_environment_development_means_development_mode(
    environment: dict[str, str], development: bool
) -> None:
    assert Settings.from_env(environment).development is development
    assert Settings.from_env({**environment, "TASKYARD_DEVELOPMENT": "true"}).development is True


# --- secrets directory -------------------------------------------------------------


def kubernetes_secret(directory: Path, files: dict[str, str]) -> Path:
    """A secret volume as the kubelet mounts it: each key a symlink into a timestamped
    directory, reached through the ..data symlink."""
    directory.mkdir()
    data = directory / "..2026_01_01_00_00_00.000000001"
    data.mkdir()
    for name, content in files.items():
        (data / name).write_text(content)
        (directory / name).symlink_to(Path("..data") / name)
    (directory / "..data").symlink_to(data.name)
    return directory


def test_a_secrets_directory_supplies_what_the_environment_does_not(tmp_path: Path) -> None:
    mounted = kubernetes_secret(
        tmp_path / "secrets",
        {
            "TASKYARD_DATABASE_URL": DSN + "\n",
            "TASKYARD_BUS_KEYS": BUS_KEYS + "\n",
            "QUEUED_TASK_WORKERS": "4",
        },
    )
    s = Settings.from_env({"TASKYARD_SECRETS_DIR": str(mounted)})
    assert (s.database_url, s.bus_keys, s.workers) == (DSN, BUS_KEYS, 4)
    assert PASSWORD not in repr(s)
    assert Settings.from_env({}).database_url == "", "no directory, no file read"


def test_the_environment_wins_over_a_secret_file(tmp_path: Path) -> None:
    mounted = kubernetes_secret(tmp_path / "secrets", {"TASKYARD_DATABASE_URL": DSN, "TASKYARD_WORKERS": "4"})
    env = {
        "TASKYARD_SECRETS_DIR": str(mounted),
        "DATABASE_URL": "postgresql://env/db",
        "TASKYARD_WORKERS": "6",
    }
    s = Settings.from_env(env)
    # The files only fill in what the environment leaves unset, under any of its names.
    assert (s.database_url, s.workers) == ("postgresql://env/db", 6)
    assert Settings.from_env({"TASKYARD_SECRETS_DIR": str(mounted)}).database_url == DSN


def test_a_bad_secret_file_names_its_variable(tmp_path: Path) -> None:
    mounted = kubernetes_secret(tmp_path / "secrets", {"QUEUED_TASK_WORKERS": "four\n"})
    with pytest.raises(ValueError, match="QUEUED_TASK_WORKERS must be an integer, got 'four'"):
        Settings.from_env({"TASKYARD_SECRETS_DIR": str(mounted)})


def test_a_missing_secrets_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="TASKYARD_SECRETS_DIR must be a directory"):
        Settings.from_env({"TASKYARD_SECRETS_DIR": str(tmp_path / "absent")})


# --- children ----------------------------------------------------------------------

CHILD = (
    "import json; from taskyard.core.config import Settings; print(json.dumps(Settings.from_env().to_env()))"
)
OWN_PREFIXES = ("TASKYARD_", "QUEUE_", "QUEUED_TASK_", "DATABASE_URL")


def test_a_child_process_reads_the_same_settings_from_to_env(tmp_path: Path) -> None:
    mounted = kubernetes_secret(tmp_path / "secrets", {"TASKYARD_DATABASE_URL": DSN})
    parent = Settings.from_env(
        {
            "TASKYARD_SECRETS_DIR": str(mounted),
            "TASKYARD_BUS_KEYS": BUS_KEYS,
            "QUEUED_TASK_WORKERS": "3",
            "TASKYARD_TASK_MODULES": "app.tasks,app.jobs",
            "TASKYARD_TRANSPORT": "ipc",
        }
    )
    # The child gets no secrets directory: to_env carries what was read from it.
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(OWN_PREFIXES)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        env={**inherited, **parent.to_env()},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    child = Settings.from_env(json.loads(done.stdout))
    assert child == parent
    assert (child.database_url, child.bus_keys, child.workers) == (DSN, BUS_KEYS, 3)


def test_a_spawned_process_gets_the_same_settings_by_pickle() -> None:
    # The worker pool hands its settings to spawned workers as an argument.
    parent = Settings.from_env(
        {"TASKYARD_DATABASE_URL": DSN, "TASKYARD_BUS_KEYS": BUS_KEYS, "TASKYARD_WORKERS": "2"}
    )
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        seen = pool.submit(Settings.to_env, parent).result(timeout=60)
    assert Settings.from_env(seen) == parent
    assert (seen["TASKYARD_DATABASE_URL"], seen["TASKYARD_BUS_KEYS"]) == (DSN, BUS_KEYS)


def test_a_pools_tenants_are_tenant_names_or_default() -> None:
    env = {"TASKYARD_POOL_TENANTS": "acme, default"}
    assert Settings.from_env(env).pool_tenants == ("acme", "default")
    for bad, why in (("Acme", "'Acme' must be"), ("a/b", "'a/b' must be"), ("acme,acme", "listed twice")):
        with pytest.raises(ValueError, match="TASKYARD_POOL_TENANTS") as caught:
            Settings.from_env({"TASKYARD_POOL_TENANTS": bad})
        assert why in str(caught.value)
