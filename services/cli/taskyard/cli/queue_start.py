"""``taskyard queue start --workers N --concurrency C``: the seed's command to run a worker pool.

Runs a worker pool in the foreground (exec of ``python -m taskyard.worker_pool``)
with N worker processes of C tasks each; everything else comes from the
environment (TASKYARD_* or the seed's QUEUED_TASK_* / QUEUE_* names); run from the
directory of ``taskyard dev``, it uses dev's bus key (bus_key.py) unless one is set.
"""

from __future__ import annotations

import os

import click

from taskyard.cli.serve import SERVE_TENANT, TENANT_HELP, check_tenants, exec_service, pool_env, project_env


@click.command("start")
@click.option(
    "--workers",
    "-w",
    type=click.IntRange(min=1),
    default=None,
    help="Worker processes (default: TASKYARD_WORKERS / QUEUED_TASK_WORKERS, else 1).",
)
@click.option(
    "--concurrency",
    "-c",
    type=click.IntRange(min=1),
    default=None,
    help="Tasks per worker process (default: TASKYARD_CONCURRENCY / QUEUED_TASK_CONCURRENCY, else CPUs).",
)
@click.option(
    "--tasks",
    "tasks",
    multiple=True,
    metavar="MODULE",
    help="Module(s) of task functions to load (TASKYARD_TASK_MODULES).",
)
@click.option(
    SERVE_TENANT, "tenants", multiple=True, metavar="NAME", callback=check_tenants, help=TENANT_HELP
)
def queue_start_command(
    workers: int | None, concurrency: int | None, tasks: tuple[str, ...], tenants: tuple[str, ...]
) -> None:
    """Run a worker pool: N worker processes x C tasks each (SIGTERM drains it)."""
    env = project_env(os.environ, service="worker-pool")
    exec_service(
        "worker-pool", pool_env(env, workers=workers, concurrency=concurrency, tasks=tasks, tenants=tenants)
    )
