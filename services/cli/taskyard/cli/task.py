"""``taskyard task ...``: submit, get, wait, cancel and list tasks over gRPC.

Exit status: 0 when the command did what was asked (and, with ``--wait`` or
``task wait``, the task ended SUCCESS); 1 on an error from the service
(code, reason and field violations are printed on stderr); 3 when the awaited
task ended FAILURE or CANCELLED; 4 when the wait timed out before the task
was final; 2 for bad command-line usage.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import enum
import functools
import json
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click
import grpc

from taskyard.cli.connection import Connection, security_options
from taskyard.client import Priority, TaskState

if TYPE_CHECKING:
    from taskyard.client import Client, TaskInfo

EXIT_ERROR = 1
EXIT_TASK_FAILED = 3
EXIT_TIMED_OUT = 4

# Choices for --state and --priority, from the client's enums.
STATES = tuple(s.name for s in TaskState if s is not TaskState.UNSPECIFIED)
PRIORITIES = tuple(p.name.lower() for p in Priority)

F = TypeVar("F", bound=Callable[..., Any])


# --- output ---------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """TaskInfo (and whatever it holds) as JSON-ready data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _state_name(task: Any) -> str:
    state = getattr(task, "state", "")
    return str(getattr(state, "name", state))


def _field(task: Any, name: str) -> Any:
    return getattr(task, name, None)


def _fmt(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ", timespec="milliseconds")
    if isinstance(value, enum.Enum):
        return value.name
    return json.dumps(_plain(value), ensure_ascii=False)


def _echo_task(task: TaskInfo) -> None:
    rows: list[tuple[str, str]] = [
        ("id", str(task.id)),
        ("name", str(task.name)),
        ("state", _state_name(task)),
    ]
    for key in ("attempt", "priority", "queue", "request_id", "parent_id", "worker_id"):
        value = _field(task, key)
        if value not in (None, "", ()):
            rows.append((key, value.name if isinstance(value, enum.Enum) else str(value)))
    for key in ("args", "kwargs"):
        value = _field(task, key)
        if value:
            rows.append((key, _fmt(value)))
    if _state_name(task) == "SUCCESS":
        rows.append(("result", _fmt(_field(task, "result"))))
    failure = _field(task, "failure")
    if failure:
        ftype = getattr(failure, "type", None) or (
            failure.get("type") if isinstance(failure, Mapping) else None
        )
        fmsg = getattr(failure, "message", None) or (
            failure.get("message") if isinstance(failure, Mapping) else ""
        )
        rows.append(("failure", f"{ftype}: {fmsg}" if ftype else _fmt(failure)))
    if _field(task, "cancel_requested"):
        rows.append(("cancel", "requested"))
    # task graph: what it waits on, its idempotency key, why and how a cancel ended it.
    if _field(task, "depends_on"):
        rows.append(("after", ", ".join(_field(task, "depends_on"))))
    for key in ("idempotency_key", "cancel_reason", "cancel_step"):
        if _field(task, key):
            rows.append((key, str(_field(task, key))))
    for key in ("created_at", "started_at", "finished_at", "run_at"):
        value = _field(task, key)
        if value:
            rows.append((key.removesuffix("_at"), _fmt(value)))
    width = max(len(k) for k, _ in rows)
    for key, text in rows:
        click.echo(f"{key + ':':<{width + 1}} {text}")
    traceback = getattr(failure, "traceback", "") if failure else ""
    if traceback:
        click.echo(traceback.rstrip())


def _emit(task: TaskInfo, as_json: bool, **extra: Any) -> None:
    if as_json:
        click.echo(json.dumps({**_plain(task), **extra}, ensure_ascii=False, sort_keys=True))
    else:
        _echo_task(task)
        for key, value in extra.items():
            click.echo(f"{key}: {json.dumps(value)}")


def _fail(exc: BaseException) -> NoReturn:
    from taskyard.client import TaskyardError

    if isinstance(exc, TaskyardError):
        code = getattr(exc.code, "name", exc.code)
        reason = getattr(exc, "reason", "") or ""
        message = getattr(exc, "message", "") or str(exc)
        click.echo(f"error: {code}" + (f" ({reason})" if reason else "") + f": {message}", err=True)
        for v in getattr(exc, "violations", ()) or ():
            field = getattr(v, "field", None) or (v.get("field") if isinstance(v, Mapping) else v)
            desc = getattr(v, "description", None) or (v.get("description") if isinstance(v, Mapping) else "")
            click.echo(f"  - {field}: {desc}", err=True)
    elif isinstance(exc, grpc.RpcError):
        code = exc.code()
        click.echo(f"error: {code.name}: {exc.details()}", err=True)
    else:
        click.echo(f"error: {type(exc).__name__}: {exc}", err=True)
    sys.exit(EXIT_ERROR)


def _final_exit(task: TaskInfo, timed_out: bool) -> None:
    if timed_out:
        click.echo(f"timed out waiting: task {task.id} is {_state_name(task)}", err=True)
        sys.exit(EXIT_TIMED_OUT)
    if _state_name(task) in ("FAILURE", "CANCELLED"):
        sys.exit(EXIT_TASK_FAILED)


def _errors_reported(func: F) -> F:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from taskyard.client import TaskyardError

        try:
            return func(*args, **kwargs)
        except (TaskyardError, grpc.RpcError) as exc:
            _fail(exc)

    return wrapper  # type: ignore[return-value]


def _json_arg(text: str) -> Any:
    """A positional task argument: JSON when it parses (2, "x", [1], {"a": 1},
    true, null), else the text itself as a string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _parse_kwargs(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--kwargs") from exc
    if not isinstance(value, dict):
        raise click.BadParameter("must be a JSON object", param_hint="--kwargs")
    return value


@contextlib.contextmanager
def _client(ctx: click.Context) -> Iterator[Client]:
    client = Connection.current(ctx.obj["target"]).client()
    try:
        yield client
    finally:
        client.close()


def _is_final(task: TaskInfo) -> bool:
    return _state_name(task) in ("SUCCESS", "FAILURE", "CANCELLED")


# --- commands ---------------------------------------------------------------------

json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")


# The gateway to talk to, on a command group (``taskyard task --target ... get ID``),
# with the TLS and token options (connection.py).
def group_target_option(func: F) -> F:
    return click.option(
        "--target",
        envvar="TASKYARD_TARGET",
        default="localhost:50051",
        show_default=True,
        help="Gateway address host:port (env TASKYARD_TARGET).",
    )(security_options(func))


@click.group("task")
@group_target_option
@click.pass_context
def task_group(ctx: click.Context, target: str) -> None:
    """Submit, inspect, wait for and cancel tasks."""
    ctx.ensure_object(dict)
    ctx.obj["target"] = target


def _target_option(func: F) -> F:
    """``--target`` after the subcommand too (``taskyard task get ID --target ...``)."""

    def store(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
        if value:
            ctx.ensure_object(dict)
            ctx.obj["target"] = value

    return click.option(
        "--target",
        expose_value=False,
        callback=store,
        default=None,
        help="Gateway address host:port (env TASKYARD_TARGET, default localhost:50051).",
    )(security_options(func))


@task_group.command("submit")
@click.argument("name")
@click.argument("args", nargs=-1)
@click.option(
    "--kwargs", "kwargs_json", metavar="JSON", help="Keyword arguments as a JSON object, e.g. '{\"x\": 1}'."
)
@click.option("--priority", type=click.Choice(PRIORITIES, case_sensitive=False), default=None)
@click.option("--queue", default=None, help="Logical queue (default: default).")
@click.option("--request-id", default=None, help="Idempotency key: resubmitting returns the same task.")
@click.option("--wait", "wait_", is_flag=True, help="Wait for the task to finish and print its result.")
@click.option("--timeout", type=float, default=30.0, show_default=True, help="Seconds to wait with --wait.")
@click.option(
    "--depends-on",
    "depends_on",
    metavar="ID",
    multiple=True,
    help="Queue only after task ID succeeds (repeatable).",
)
@click.option("--idempotency-key", default=None, help="Within its window, a resubmit returns the same task.")
@click.option("--idempotency-window", type=float, default=None, help="Seconds the key holds (default 24 h).")
@click.option(
    "--eta",
    type=click.DateTime(formats=["%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"]),
    default=None,
    help="Run no earlier than this time (ISO 8601; without an offset it is UTC).",
)
@click.option("--countdown", type=float, default=None, help="Run no earlier than this many seconds from now.")
@json_option
@_target_option
@click.pass_context
@_errors_reported
def submit_command(
    ctx: click.Context,
    name: str,
    args: tuple[str, ...],
    kwargs_json: str | None,
    priority: str | None,
    queue: str | None,
    request_id: str | None,
    wait_: bool,
    timeout: float,
    depends_on: tuple[str, ...],
    idempotency_key: str | None,
    idempotency_window: float | None,
    eta: dt.datetime | None,
    countdown: float | None,
    as_json: bool,
) -> None:
    """Submit task NAME with positional ARGS (each parsed as JSON, else taken as a string).

    \b
    Example: taskyard task submit add 2 3 --wait
    """
    kwargs = _parse_kwargs(kwargs_json)
    if eta is not None and eta.tzinfo is None:
        eta = eta.replace(tzinfo=dt.UTC)  # documented: an --eta without an offset is UTC
    with _client(ctx) as client:
        task = submit_task(
            client,
            name,
            [_json_arg(a) for a in args],
            kwargs,
            priority=priority,
            queue=queue,
            request_id=request_id,
            depends_on=depends_on,
            idempotency_key=idempotency_key,
            idempotency_window=idempotency_window,
            eta=eta,
            countdown=countdown,
        )
        if not wait_:
            _emit(task, as_json)
            return
        final = client.wait(task.id, timeout=timeout)
        _emit(final, as_json)
        _final_exit(final, timed_out=not _is_final(final))


@task_group.command("get")
@click.argument("task_id", metavar="ID")
@json_option
@_target_option
@click.pass_context
@_errors_reported
def get_command(ctx: click.Context, task_id: str, as_json: bool) -> None:
    """Show one task."""
    with _client(ctx) as client:
        _emit(client.get(task_id), as_json)


@task_group.command("wait")
@click.argument("task_id", metavar="ID")
@click.option("--timeout", type=float, default=30.0, show_default=True, help="Seconds to wait.")
@json_option
@_target_option
@click.pass_context
@_errors_reported
def wait_command(ctx: click.Context, task_id: str, timeout: float, as_json: bool) -> None:
    """Wait until a task is final (SUCCESS, FAILURE or CANCELLED) and show it."""
    with _client(ctx) as client:
        task = client.wait(task_id, timeout=timeout)
        _emit(task, as_json)
        _final_exit(task, timed_out=not _is_final(task))


@task_group.command("cancel")
@click.argument("task_id", metavar="ID")
@click.option("--reason", default="", help="Why (kept with the task).")
@click.option("--wait", "wait_", type=float, default=None, help="Seconds to wait for a running task to stop.")
@json_option
@_target_option
@click.pass_context
@_errors_reported
def cancel_command(ctx: click.Context, task_id: str, reason: str, wait_: float | None, as_json: bool) -> None:
    """Cancel a task and its unfinished children. One that has not started is
    cancelled at once; a running one is stopped in steps (--wait to see which)."""
    with _client(ctx) as client:
        outcome = client.cancel(task_id, reason=reason, wait=wait_)
        extra: dict[str, Any] = {"cancelled": outcome.cancelled}
        if outcome.step:
            extra["step"] = outcome.step
        if outcome.cancelled_children:
            extra["cancelled_children"] = list(outcome.cancelled_children)
        _emit(outcome.task, as_json, **extra)


@task_group.command("list")
@click.option(
    "--state",
    "states",
    multiple=True,
    type=click.Choice(STATES, case_sensitive=False),
    help="Only tasks in this state (repeatable).",
)
@click.option("--name", default=None)
@click.option("--queue", default=None)
@click.option("--priority", type=click.Choice(PRIORITIES, case_sensitive=False), default=None)
@click.option("--page-size", type=click.IntRange(1, 1000), default=50, show_default=True)
@click.option("--all", "all_pages", is_flag=True, help="Every page, not only the first.")
@json_option
@_target_option
@click.pass_context
@_errors_reported
def list_command(
    ctx: click.Context,
    states: tuple[str, ...],
    name: str | None,
    queue: str | None,
    priority: str | None,
    page_size: int,
    all_pages: bool,
    as_json: bool,
) -> None:
    """List tasks, newest first."""
    with _client(ctx) as client:
        tasks = list_tasks(
            client,
            states=[s.upper() for s in states],
            name=name,
            queue=queue,
            priority=priority,
            page_size=page_size,
            all_pages=all_pages,
        )
        if as_json:
            for task in tasks:
                click.echo(json.dumps(_plain(task), ensure_ascii=False, sort_keys=True))
            return
        click.echo(f"{'ID':<36}  {'NAME':<20}  {'STATE':<9}  {'ATT':>3}  {'PRIORITY':<8}  CREATED")
        count = 0
        for task in tasks:
            count += 1
            created = _field(task, "created_at")
            prio = _field(task, "priority")
            click.echo(
                f"{task.id:<36}  {task.name[:20]:<20}  {_state_name(task):<9}  "
                f"{_field(task, 'attempt') or '':>3}  {getattr(prio, 'name', prio) or '':<8}  "
                f"{created.isoformat(sep=' ', timespec='seconds') if created else ''}"
            )
        click.echo(f"({count} task{'s' if count != 1 else ''})", err=True)


# --- the client calls (one place to adapt) -----------------------------------------


def submit_task(
    client: Client,
    name: str,
    args: list[Any],
    kwargs: dict[str, Any],
    *,
    priority: str | None,
    queue: str | None,
    request_id: str | None,
    depends_on: tuple[str, ...] = (),
    idempotency_key: str | None = None,
    idempotency_window: float | None = None,
    eta: dt.datetime | None = None,
    countdown: float | None = None,
) -> TaskInfo:
    """Submit one task (task keyword arguments travel as ``**kwargs`` of the client)."""
    graph = {"depends_on", "idempotency_key", "idempotency_window", "eta", "countdown"}
    clash = {"priority", "queue", "timeout", "max_retries", "request_id", "parent_id", "labels"} | graph
    clash &= set(kwargs)
    if clash:
        raise click.UsageError(f"--kwargs cannot name {', '.join(sorted(clash))} (client options)")
    return client.submit(
        name,
        *args,
        priority=priority.upper() if priority else None,
        queue=queue or "",
        request_id=request_id or "",
        depends_on=depends_on,
        idempotency_key=idempotency_key or "",
        idempotency_window=idempotency_window,
        eta=eta,
        countdown=countdown,
        **kwargs,
    )


def list_tasks(
    client: Client,
    *,
    states: list[str],
    name: str | None,
    queue: str | None,
    priority: str | None,
    page_size: int,
    all_pages: bool,
) -> Iterator[TaskInfo]:
    options: dict[str, Any] = {
        "state": states or None,
        "name": name or "",
        "queue": queue or "",
        "priority": priority.upper() if priority else None,
        "page_size": page_size,
    }
    if all_pages:
        yield from client.iter_tasks(**options)
    else:
        yield from client.list(**options).tasks
