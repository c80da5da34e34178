"""``taskyard serve [SERVICE]``: run services in the foreground, configured by the environment.

- ``taskyard serve SERVICE``: exec one service (``python -m taskyard.<service>``).
- The seed's forms, without SERVICE: ``taskyard serve`` runs the gateway (the
  "HTTP" side: gRPC API and dashboard); ``taskyard serve --workers N`` runs the
  gateway and a worker pool of N processes side by side (SIGTERM/SIGINT stop
  both, the pool draining first); ``taskyard serve --workers N --no-http`` runs
  only the worker pool (exec, like ``taskyard queue start``).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping

import click

from taskyard.cli import bus_key, procs
from taskyard.cli.stop_request import StopRequest
from taskyard.core import lifecycle
from taskyard.core import tenants as tenant_names


def pool_env(
    base: Mapping[str, str],
    *,
    workers: int | None = None,
    concurrency: int | None = None,
    tasks: tuple[str, ...] = (),
    tenants: tuple[str, ...] = (),
) -> dict[str, str]:
    """The environment of a worker pool with the command line's overrides applied."""
    env = dict(base)
    if tenants:  # the command line's list replaces the environment's
        env["TASKYARD_POOL_TENANTS"] = ",".join(dict.fromkeys(tenants))
    if workers is not None:
        env["TASKYARD_WORKERS"] = str(workers)
    if concurrency is not None:
        env["TASKYARD_CONCURRENCY"] = str(concurrency)
    if tasks:
        existing = [m for m in env.get("TASKYARD_TASK_MODULES", "").split(",") if m.strip()]
        env["TASKYARD_TASK_MODULES"] = ",".join(dict.fromkeys([*existing, *tasks]))
    return env


def check_tenants(_ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """``--serve-tenant`` values: tenants' names, or "default" for the default tenant."""
    for name in value:
        if name != tenant_names.DEFAULT_TENANT_NAME and not tenant_names.fits(name):
            raise click.BadParameter(
                f"{name!r}: a tenant's name {tenant_names.problem(name)} "
                f"(or {tenant_names.DEFAULT_TENANT_NAME!r} for the default tenant)"
            )
    return value


# The pool's option is not ``--tenant``: that one, accepted anywhere on the line, has an
# operator token act as a tenant (connection.py), and a pool serving acme is no call made as acme.
SERVE_TENANT = "--serve-tenant"
TENANT_HELP = (
    "Run only this tenant's tasks (repeatable; 'default' is the default tenant; "
    "TASKYARD_POOL_TENANTS). Without it: every tenant's."
)


def project_env(environ: Mapping[str, str], service: str = "") -> dict[str, str]:
    """``environ`` with the dev project's bus key when none is configured (bus_key.py;
    ``service``'s own keyring when it names one), and one line on stderr saying which
    key the service will use."""
    choice = bus_key.project_env(environ, service=service)
    click.echo(f"taskyard: {choice.line}", err=True)
    return choice.env


def exec_service(name: str, env: Mapping[str, str]) -> None:
    argv = procs.service_argv(name)
    sys.stdout.flush()
    sys.stderr.flush()
    # The mask survives exec: a stop signal during the service's start-up waits for its handler.
    with lifecycle.stop_signals_held():
        os.execve(argv[0], argv, dict(env))


def stop_on_signals() -> StopRequest:
    """A stop request set by SIGTERM and SIGINT, its handler installed."""
    # No lock in the handler: a second signal while the first is handled is safe.
    stop = StopRequest()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop.on_signal)
    return stop


def run_side_by_side(names: list[str], env: Mapping[str, str], grace: float) -> int:
    """Run services as children sharing our stdout; stop all when one ends or on a signal."""
    # Before the children exist: a signal while they start must still stop them.
    stop = stop_on_signals()
    children = {n: procs.spawn(n, env, stdout=None, stderr=None, die_with_parent=True) for n in names}
    while not stop.is_set() and all(c.poll() is None for c in children.values()):
        stop.wait(0.2)
    # In the order given (the pool first: it drains and releases its leases).
    procs.stop_processes(list(children.values()), grace=grace)
    codes = [c.returncode for c in children.values()]
    return next((code for code in codes if code not in (0, None, -signal.SIGTERM)), 0)


@click.command("serve")
@click.argument(
    "service",
    required=False,
    type=click.Choice(sorted({*procs.SERVICES, *(m for m in procs.SERVICES.values())})),
)
@click.option(
    "--workers",
    "-w",
    type=click.IntRange(min=1),
    default=None,
    help="worker-pool: worker processes (TASKYARD_WORKERS / QUEUED_TASK_WORKERS). "
    "Without SERVICE: also run a worker pool next to the gateway.",
)
@click.option(
    "--concurrency",
    "-c",
    type=click.IntRange(min=1),
    default=None,
    help="worker-pool: tasks per worker process (TASKYARD_CONCURRENCY / QUEUED_TASK_CONCURRENCY).",
)
@click.option(
    "--tasks",
    "tasks",
    multiple=True,
    metavar="MODULE",
    help="worker-pool: module(s) of task functions to load (TASKYARD_TASK_MODULES).",
)
@click.option(
    SERVE_TENANT,
    "tenants",
    multiple=True,
    metavar="NAME",
    callback=check_tenants,
    help="worker-pool: " + TENANT_HELP,
)
@click.option(
    "--http/--no-http",
    default=True,
    help="Without SERVICE: run the gateway (gRPC API and dashboard) or not (--no-http: workers only).",
)
@click.option(
    "--port",
    type=click.IntRange(min=1, max=65535),
    default=None,
    help="gateway: gRPC port (TASKYARD_GRPC_PORT).",
)
@click.option("--database-url", default=None, help="result-store: PostgreSQL URL (TASKYARD_DATABASE_URL).")
def serve_command(
    service: str | None,
    workers: int | None,
    concurrency: int | None,
    tasks: tuple[str, ...],
    tenants: tuple[str, ...],
    http: bool,
    port: int | None,
    database_url: str | None,
) -> None:
    """Run a service in the foreground (exec of `python -m taskyard.<service>`).

    \b
    taskyard serve SERVICE              one service
    taskyard serve                      the gateway (HTTP/gRPC) only
    taskyard serve --workers 3          the gateway and a pool of 3 worker processes
    taskyard serve --workers 3 --no-http   only the worker pool

    Every other setting comes from the TASKYARD_* environment variables."""
    env = project_env(os.environ, service or "")
    pool_flags = {
        "--workers": workers,
        "--concurrency": concurrency,
        "--tasks": tasks or None,
        SERVE_TENANT: tenants or None,
    }
    if port is not None:
        env["TASKYARD_GRPC_PORT"] = str(port)
    if database_url is not None:
        env["TASKYARD_DATABASE_URL"] = database_url
    if service is None:
        if database_url is not None:
            raise click.UsageError("--database-url only applies to result-store")
        with_pool = workers is not None or concurrency is not None or bool(tasks) or bool(tenants) or not http
        if not http and port is not None:
            raise click.UsageError("--port applies to the gateway, which --no-http leaves out")
        if not with_pool:
            exec_service("gateway", env)
            return
        penv = pool_env(env, workers=workers, concurrency=concurrency, tasks=tasks, tenants=tenants)
        if not http:
            exec_service("worker-pool", penv)
            return
        sys.exit(run_side_by_side(["worker-pool", "gateway"], penv, grace=_grace(penv)))
    name = procs.canonical(service)
    if not http:
        raise click.UsageError("--no-http applies without SERVICE (the seed's `serve --workers N --no-http`)")
    if name != "worker-pool":
        given = [flag for flag, value in pool_flags.items() if value is not None]
        if given:
            raise click.UsageError(f"{', '.join(given)} only apply to worker-pool")
    if port is not None and name != "gateway":
        raise click.UsageError("--port only applies to gateway")
    if database_url is not None and name != "result-store":
        raise click.UsageError("--database-url only applies to result-store")
    exec_service(name, pool_env(env, workers=workers, concurrency=concurrency, tasks=tasks, tenants=tenants))


def _grace(env: Mapping[str, str]) -> float:
    """The pool's shutdown_timeout plus slack: stop_processes must not cut its drain short."""
    try:
        return float(env.get("TASKYARD_SHUTDOWN_TIMEOUT") or 30.0) + 5.0
    except ValueError:
        return 35.0
