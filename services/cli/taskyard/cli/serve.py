"""``taskyard serve SERVICE``: exec one service, configured by the environment."""

from __future__ import annotations

import os
import sys

import click

from taskyard.cli import procs


@click.command("serve")
@click.argument(
    "service", type=click.Choice(sorted({*procs.SERVICES, *(m for m in procs.SERVICES.values())}))
)
@click.option(
    "--workers",
    "-w",
    type=click.IntRange(min=1),
    default=None,
    help="worker-pool: worker processes (TASKYARD_WORKERS).",
)
@click.option(
    "--concurrency",
    "-c",
    type=click.IntRange(min=1),
    default=None,
    help="worker-pool: tasks per worker process (TASKYARD_CONCURRENCY).",
)
@click.option(
    "--tasks",
    "tasks",
    multiple=True,
    metavar="MODULE",
    help="worker-pool: module(s) of task functions to load (TASKYARD_TASK_MODULES).",
)
@click.option(
    "--port",
    type=click.IntRange(min=1, max=65535),
    default=None,
    help="gateway: gRPC port (TASKYARD_GRPC_PORT).",
)
@click.option("--database-url", default=None, help="result-store: PostgreSQL URL (TASKYARD_DATABASE_URL).")
def serve_command(
    service: str,
    workers: int | None,
    concurrency: int | None,
    tasks: tuple[str, ...],
    port: int | None,
    database_url: str | None,
) -> None:
    """Run one service in the foreground (exec of `python -m taskyard.<service>`).

    Every other setting comes from the TASKYARD_* environment variables."""
    name = procs.canonical(service)
    env = dict(os.environ)
    pool_only = {"--workers": workers, "--concurrency": concurrency, "--tasks": tasks or None}
    if name != "worker-pool":
        given = [flag for flag, value in pool_only.items() if value is not None]
        if given:
            raise click.UsageError(f"{', '.join(given)} only apply to worker-pool")
    if port is not None and name != "gateway":
        raise click.UsageError("--port only applies to gateway")
    if database_url is not None and name != "result-store":
        raise click.UsageError("--database-url only applies to result-store")
    if workers is not None:
        env["TASKYARD_WORKERS"] = str(workers)
    if concurrency is not None:
        env["TASKYARD_CONCURRENCY"] = str(concurrency)
    if tasks:
        existing = [m for m in env.get("TASKYARD_TASK_MODULES", "").split(",") if m.strip()]
        env["TASKYARD_TASK_MODULES"] = ",".join(dict.fromkeys([*existing, *tasks]))
    if port is not None:
        env["TASKYARD_GRPC_PORT"] = str(port)
    if database_url is not None:
        env["TASKYARD_DATABASE_URL"] = database_url
    argv = procs.service_argv(name)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(argv[0], argv, env)
