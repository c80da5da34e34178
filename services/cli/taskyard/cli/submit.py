"""``taskyard task submit NAME [ARGS]...``: one task, optionally waited for.

Two timeouts, never confused: ``--task-timeout`` limits each attempt of the
task (TaskSpec.timeout, enforced by its pool), ``--wait-timeout`` is how long
this command waits for the result with ``--wait`` (one RunTask call, which submits
and waits).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from typing import Any, TypeVar

import click

from taskyard.cli.connection import target_options
from taskyard.cli.durations import DURATION
from taskyard.cli.gateway import gateway
from taskyard.cli.output import Output, output_option
from taskyard.cli.task import show_outcome, show_task, task_group
from taskyard.cli.task_arguments import json_arg, parse_kwargs, parse_labels, parse_limits
from taskyard.cli.task_view import PRIORITIES
from taskyard.client import LimitUse, TaskRequest
from taskyard.v1 import task_pb2, task_service_pb2

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_WAIT = dt.timedelta(seconds=30)
ETA_FORMATS = ["%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Submission:
    """What the options ask for, before it becomes a TaskSpec."""

    name: str
    args: tuple[str, ...]
    kwargs_json: str | None
    priority: str | None
    queue: str
    max_retries: int | None
    task_timeout: dt.timedelta | None
    labels: dict[str, str]
    request_id: str
    depends_on: tuple[str, ...]
    idempotency_key: str
    idempotency_window: dt.timedelta | None
    eta: dt.datetime | None
    countdown: dt.timedelta | None
    limits: tuple[LimitUse, ...]
    fairness_key: str

    def spec(self) -> task_pb2.TaskSpec:
        eta = self.eta
        if eta is not None and eta.tzinfo is None:
            eta = eta.replace(tzinfo=dt.UTC)  # documented: an --eta without an offset is UTC
        request = TaskRequest(
            name=self.name,
            args=[json_arg(a) for a in self.args],
            kwargs=parse_kwargs(self.kwargs_json),
            priority=self.priority,
            queue=self.queue,
            timeout=self.task_timeout,
            max_retries=self.max_retries,
            request_id=self.request_id,
            labels=self.labels,
            depends_on=self.depends_on,
            idempotency_key=self.idempotency_key,
            idempotency_window=self.idempotency_window,
            eta=eta,
            countdown=self.countdown,
            limits=self.limits,
            fairness_key=self.fairness_key,
        )
        try:
            return request.to_proto()
        except (TypeError, ValueError) as exc:  # an argument JSON cannot carry (2**60, NaN)
            raise click.UsageError(str(exc)) from None


def _stacked(func: F, *options: Callable[[Any], Any]) -> F:
    """``func`` under ``options``, which --help lists in the order given."""
    for option in reversed(options):
        func = option(func)
    return func


def _spec_options(func: F) -> F:
    """What the task is and how it runs: the TaskSpec fields."""
    return _stacked(
        func,
        click.option(
            "--kwargs",
            "kwargs_json",
            metavar="JSON",
            help="Keyword arguments as a JSON object: '{\"x\": 1}'.",
        ),
        click.option(
            "--queue",
            default="",
            help="Logical queue (default: default). A queue can be paused, resumed and "
            "cleared on its own (taskyard queue ...); its tasks run on any pool serving NAME.",
        ),
        click.option("--priority", type=click.Choice(PRIORITIES, case_sensitive=False), default=None),
        click.option(
            "--max-retries",
            type=click.IntRange(min=0),
            default=None,
            help="Retries after the first attempt (default: the task's own, else the deployment's).",
        ),
        click.option(
            "--task-timeout",
            type=DURATION,
            default=None,
            help="Limit of each attempt: 90s, 5m, 1h30m (default: the task's own, else the deployment's).",
        ),
        click.option(
            "--label",
            "labels",
            multiple=True,
            metavar="KEY=VALUE",
            callback=parse_labels,
            help="A label kept with the task (repeatable).",
        ),
        click.option(
            "--limit",
            "limits",
            multiple=True,
            metavar="NAME[*UNITS][=KEY]",
            callback=parse_limits,
            help="A limit it takes a unit of (repeatable); =KEY: its bucket of a per-key limit; "
            "*UNITS: that many units, e.g. 'tokens*500=customer:42'.",
        ),
        click.option(
            "--fairness-key",
            default="",
            metavar="KEY",
            help="The key it shares its lane by (a tenant, a customer): keys are served in turn.",
        ),
    )


def _graph_options(func: F) -> F:
    """When it may run and how resubmissions are recognised."""
    return _stacked(
        func,
        click.option("--request-id", default="", help="Idempotency key: resubmitting returns the same task."),
        click.option(
            "--depends-on",
            "depends_on",
            metavar="ID",
            multiple=True,
            help="Queue only after task ID succeeds (repeatable).",
        ),
        click.option(
            "--idempotency-key", default="", help="Within its window, a resubmit returns the same task."
        ),
        click.option(
            "--idempotency-window", type=DURATION, default=None, help="How long the key holds (default 24h)."
        ),
        click.option(
            "--eta",
            type=click.DateTime(formats=ETA_FORMATS),
            default=None,
            help="Run no earlier than this time (ISO 8601; without an offset it is UTC).",
        ),
        click.option(
            "--countdown",
            type=DURATION,
            default=None,
            help="Run no earlier than this long from now: 90s, 5m.",
        ),
    )


def _wait_options(func: F) -> F:
    return _stacked(
        func,
        click.option("--wait", "wait_", is_flag=True, help="Wait for the task to finish and print it."),
        click.option(
            "--wait-timeout",
            type=DURATION,
            default=None,
            help="With --wait: how long to wait for the result (default 30s). Not the task's own limit.",
        ),
        click.option(
            "--timeout",
            "old_timeout",
            type=DURATION,
            default=None,
            hidden=True,
            help="The old name of --wait-timeout.",
        ),
    )


def _wait_timeout(
    wait_: bool, wait_timeout: dt.timedelta | None, old_timeout: dt.timedelta | None
) -> dt.timedelta:
    if wait_timeout is not None and old_timeout is not None:
        raise click.UsageError("--timeout is the old name of --wait-timeout: give one")
    if old_timeout is not None:
        click.echo(
            "warning: submit --timeout is now --wait-timeout (the task's own limit: --task-timeout)", err=True
        )
    given = wait_timeout if wait_timeout is not None else old_timeout
    if given is not None and not wait_:
        # Most likely meant as the task's own limit: say so rather than ignore it.
        raise click.UsageError("--wait-timeout applies with --wait; the task's own limit is --task-timeout")
    return given if given is not None else DEFAULT_WAIT


@task_group.command("submit")
@click.argument("name")
@click.argument("args", nargs=-1)
@_spec_options
@_graph_options
@_wait_options
@output_option
@target_options
def submit_command(
    wait_: bool,
    wait_timeout: dt.timedelta | None,
    old_timeout: dt.timedelta | None,
    output: Output,
    **options: Any,
) -> None:
    """Submit task NAME with positional ARGS (each parsed as JSON, else taken as a string).

    \b
    Examples:
      taskyard task submit add 2 3 --wait
      taskyard task submit report --queue reports --task-timeout 10m --max-retries 2 --label team=billing
      taskyard task submit call_api 42 --limit per-customer=customer:42 --fairness-key customer:42
    """
    patience = _wait_timeout(wait_, wait_timeout, old_timeout)
    spec = Submission(**options).spec()
    with gateway() as g:
        if wait_:  # one call: RunTask submits and waits
            show_outcome(g.run_task(spec, patience), output)
            return
        reply = g.call(g.tasks.SubmitTask, task_service_pb2.SubmitTaskRequest(task=spec))
        output.emit(reply, show_task)
