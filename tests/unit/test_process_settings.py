"""Each process reads its own settings (GatewaySettings, StoreSettings, SchedulerSettings,
PoolSettings): a variable only another process reads is neither read nor checked there,
Settings is all of them at once, and docs/operations.md says who reads what."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from taskyard.core import variables
from taskyard.core.config import (
    PROCESSES,
    BusSettings,
    GatewaySettings,
    PoolSettings,
    SchedulerSettings,
    Settings,
    SettingsBase,
    StoreSettings,
    TelemetrySettings,
)

ROOT = Path(__file__).resolve().parents[2]
OPERATIONS = ROOT / "docs" / "operations.md"
# Each service's entry point and the settings it reads.
MAINS = {
    "gateway": (ROOT / "services/gateway/taskyard/gateway/__main__.py", GatewaySettings),
    "result-store": (ROOT / "services/result_store/taskyard/result_store/__main__.py", StoreSettings),
    "scheduler": (ROOT / "services/scheduler/taskyard/scheduler/__main__.py", SchedulerSettings),
    "worker-pool": (ROOT / "services/worker_pool/taskyard/worker_pool/__main__.py", PoolSettings),
}
# Neither a value of any setting's type nor a secret: a process that read it would refuse it.
MALFORMED = "\x00 not a value"
# Read by every process besides the fields: the directory the secrets come from.
EVERY_PROCESS_VARIABLES = {variables.SECRETS_DIR}


def _variables(cls: type[SettingsBase]) -> set[str]:
    return {name for field in cls.model_fields.values() for name in variables.names(field)}


def test_a_gateway_starts_while_a_store_only_variable_is_malformed() -> None:
    env = {"TASKYARD_DB_POOL_SIZE": "many", "TASKYARD_GRPC_PORT": "50071"}
    assert GatewaySettings.from_env(env).grpc_port == 50071
    with pytest.raises(ValueError, match=r"^TASKYARD_DB_POOL_SIZE must be an integer, got 'many'$"):
        StoreSettings.from_env(env)
    with pytest.raises(ValueError, match="TASKYARD_DB_POOL_SIZE must be an integer"):
        Settings.from_env(env)


def test_a_seed_alias_only_the_store_reads_is_the_stores_to_refuse() -> None:
    env = {"QUEUE_USE_POSTGRESQL_NOTIFY": "maybe"}
    assert PoolSettings.from_env(env).workers >= 1
    with pytest.raises(ValueError, match=r"^QUEUE_USE_POSTGRESQL_NOTIFY must be one of true/false"):
        StoreSettings.from_env(env)


@pytest.mark.parametrize("process", sorted(PROCESSES))
def test_a_process_never_reads_another_process_variable(process: str) -> None:
    cls = PROCESSES[process]
    others = _variables(Settings) - _variables(cls)
    assert others, process
    settings = cls.from_env(dict.fromkeys(others, MALFORMED))
    assert settings == cls()


@pytest.mark.parametrize("process", sorted(PROCESSES))
def test_a_process_refuses_a_malformed_variable_of_its_own(process: str) -> None:
    cls = PROCESSES[process]
    with pytest.raises(ValueError, match=r"^TASKYARD_MAX_MESSAGE_BYTES must be an integer, got 'big'$"):
        cls.from_env({"TASKYARD_MAX_MESSAGE_BYTES": "big"})
    with pytest.raises(ValueError, match="TASKYARD_HEALTH_PORT is no longer read"):
        cls.from_env({"TASKYARD_HEALTH_PORT": "9000"})


def test_every_setting_is_read_by_some_process() -> None:
    read = set().union(*(cls.model_fields for cls in PROCESSES.values()))
    assert set(Settings.model_fields) == read


def test_the_shared_parts_are_in_every_process() -> None:
    for cls in PROCESSES.values():
        assert issubclass(cls, BusSettings)
        assert issubclass(cls, TelemetrySettings)
        assert issubclass(Settings, cls)


@pytest.mark.parametrize("process", sorted(PROCESSES))
def test_a_process_settings_copy_and_travel_like_settings(process: str, tmp_path: Path) -> None:
    cls = PROCESSES[process]
    (tmp_path / "TASKYARD_BUS_KEYS").write_text("k1:" + "A" * 43 + "=")
    settings = cls.from_env({"TASKYARD_SECRETS_DIR": str(tmp_path), "TASKYARD_TRANSPORT": "ipc"})
    assert type(settings) is cls
    assert settings.bus_keys.startswith("k1:")
    copy = dataclasses.replace(settings, request_timeout=3.0)
    assert type(copy) is cls and copy.request_timeout == 3.0
    assert settings.replace(host="10.0.0.1").host == "10.0.0.1"
    assert {f.name for f in dataclasses.fields(cls)} >= {"host", "bus_keys", "metrics_token"}
    assert cls.from_env(settings.to_env()) == settings
    # What a process hands a child reproduces its own settings, and nothing it does not read.
    assert set(settings.to_env()) <= _variables(cls)


def test_development_mode_is_the_stores_alone() -> None:
    env = {"TASKYARD_ENVIRONMENT": "development"}
    assert StoreSettings.from_env(env).development
    assert Settings.from_env(env).development
    assert "development" not in GatewaySettings.model_fields
    assert type(GatewaySettings.from_env(env)) is GatewaySettings


@pytest.mark.parametrize("process", sorted(MAINS))
def test_each_service_reads_its_own_settings(process: str) -> None:
    path, cls = MAINS[process]
    assert PROCESSES[process] is cls
    readers = {
        node.value.id
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr == "from_env" and isinstance(node.value, ast.Name)
    }
    assert readers == {cls.__name__}, path


def _table() -> list[list[str]]:
    """The rows of the environment variables table: its cells, stripped."""
    text = OPERATIONS.read_text()
    section = text[text.index("## Environment variables") :]
    section = section[: section.index("\n## ", 1)]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header[-1] == "read by", header
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


def _readers(names: set[str]) -> str:
    """The "read by" cell of a row naming ``names``."""
    readers = [p for p, cls in PROCESSES.items() if names <= _variables(cls) | EVERY_PROCESS_VARIABLES]
    return "every process" if len(readers) == len(PROCESSES) else ", ".join(readers)


def test_the_operations_table_says_which_process_reads_each_variable() -> None:
    known = _variables(Settings) | EVERY_PROCESS_VARIABLES
    documented: set[str] = set()
    for row in _table():
        # The variables a row names: backquoted, whole (not TASKYARD_ENVIRONMENT=development).
        names = set(re.findall(r"`([A-Z][A-Z0-9_]*)`", row[0])) & known
        assert names, row[0]
        each = {_readers({name}) for name in names}
        assert len(each) == 1, f"{row[0]}: read by different processes, one row each: {each}"
        assert row[-1] == _readers(names), f"{row[0]}: read by {_readers(names)}"
        documented |= names
    preferred = {variables.names(field)[0] for field in Settings.model_fields.values()}
    assert preferred <= documented, f"not in docs/operations.md: {sorted(preferred - documented)}"
