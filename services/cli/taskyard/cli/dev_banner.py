"""What ``taskyard dev`` prints once the suite is ready: where it is, how to try it, and
how to start another pool that joins it."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from taskyard.cli import bus_key

if TYPE_CHECKING:  # imported where used: the other commands start without pydantic-settings
    from taskyard.core.config import Settings

SUBMIT_JSON = '{"task":{"name":"add","args":[2,3]}}'


def display_host(host: str) -> str:
    return "localhost" if host in ("127.0.0.1", "0.0.0.0", "::", "::1", "") else host


def dashboard_url(settings: Settings) -> str:
    if not settings.http_port:
        return "off (--http-port)"
    scheme = "https" if settings.grpc_tls_cert else "http"
    return f"{scheme}://{display_host(settings.grpc_host)}:{settings.http_port}/"


def banner(
    target: str,
    settings: Settings,
    database: str,
    pids: dict[str, int],
    seen: list[str] | None = None,
    *,
    pool: str = "",
) -> str:
    t = target
    lines = [
        "",
        "=" * 78,
        f"Taskyard is ready: gRPC taskyard.v1.TaskService on {t}",
        f"  database:     {database}",
        f"  transport:    {settings.transport}"
        + (f" ({settings.ipc_dir})" if settings.transport == "ipc" else f" (base port {settings.base_port})"),
        f"  worker pool:  {settings.workers} worker(s) x {settings.concurrency}, "
        f"tasks from {', '.join(settings.task_modules)}",
        "  processes:    " + ", ".join(f"{name}={pid}" for name, pid in pids.items()),
        f"  dashboard:    {dashboard_url(settings)}",
        *(seen or []),
        "",
        "Try it with grpcurl:",
        f"  grpcurl -plaintext {t} list",
        f"  grpcurl -plaintext -d '{SUBMIT_JSON}' {t} taskyard.v1.TaskService/SubmitTask",
        f'  grpcurl -plaintext -d \'{{"id":"TASK_ID"}}\' {t} taskyard.v1.TaskService/WaitTask',
        "(replace TASK_ID with the task.id returned by SubmitTask)",
        "",
        "Or with the CLI:",
        f"  taskyard task submit add 2 3 --wait --target {t}",
        "",
        *(
            [
                "Another worker pool, for your own tasks (in another shell, from this directory):",
                f"  {pool}",
                "",
            ]
            if pool
            else []
        ),
        "Ctrl-C stops everything.",
        "=" * 78,
        "",
    ]
    return "\n".join(lines)


# What a pool started elsewhere must share with the suite to reach it, beyond the key.
_POOL_ADDRESSING = (
    "TASKYARD_TRANSPORT",
    "TASKYARD_IPC_DIR",
    "TASKYARD_HOST",
    "TASKYARD_SCHEDULER_HOST",
    "TASKYARD_STORE_HOST",
    "TASKYARD_SCHEDULER_HOSTS",
    "TASKYARD_STORE_HOSTS",
    "TASKYARD_BASE_PORT",
    "TASKYARD_DISCOVERY_PORT",
)


def pool_command(settings: Settings, key: bus_key.DevKey | None, cwd: Path) -> str:
    """``taskyard serve worker-pool`` with what differs from the defaults: the addresses,
    and the key file when it is not the one the command finds in ``cwd`` by itself."""
    from taskyard.core.config import Settings

    env, defaults = settings.to_env(), Settings().to_env()
    prefix = [f"{name}={shlex.quote(env[name])}" for name in _POOL_ADDRESSING if env[name] != defaults[name]]
    if key is not None and key.path != (cwd / bus_key.key_file(bus_key.DEFAULT_DATA_DIR)).resolve():
        prefix.append(f"{bus_key.KEYS_FILE_VARIABLE}={shlex.quote(str(key.path))}")
    command = " ".join(["PYTHONPATH=.", *prefix, "taskyard serve worker-pool --tasks MODULE"])
    if key is None:
        command += f"   # with this suite's {bus_key.KEYS_VARIABLE} or {bus_key.KEYS_FILE_VARIABLE}"
    return command
