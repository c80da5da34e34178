"""The options that choose dead letters (a FailureFilter): ``taskyard failures`` and ``taskyard redrive``.

Every option given narrows the choice (they are a conjunction). A command that
changes something refuses a filter with none of them unless ``--all`` says every
dead letter is meant: the gateway checks it too (INVALID_ARGUMENT, field "filter").
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any, TypeVar

import click

from taskyard.cli.durations import DURATION
from taskyard.v1 import failure_service_pb2 as fs
from taskyard.v1 import task_pb2

F = TypeVar("F", bound=Callable[..., Any])

REASONS = {
    "retries-exhausted": task_pb2.DEAD_LETTER_REASON_RETRIES_EXHAUSTED,
    "quarantined": task_pb2.DEAD_LETTER_REASON_QUARANTINED,
    "not-retryable": task_pb2.DEAD_LETTER_REASON_NOT_RETRYABLE,
}
# The parameters the options below add to a command, which ``failure_filter`` consumes.
PARAMETERS = ("group", "queue", "name", "reason", "since", "until", "labels", "task_ids", "every")


def _label(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for text in values:
        key, sep, value = text.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {text!r}")
        labels[key] = value
    return labels


def filter_options(*, with_all: bool = True) -> Callable[[F], F]:
    """``--group --queue --name --reason --since --until --label --task`` (and ``--all``)."""

    def decorate(func: F) -> F:
        options = [
            click.option(
                "--group", default="", help="A failure group (its id, from `taskyard failures groups`)."
            ),
            click.option("--queue", default="", help="Only dead letters of this queue."),
            click.option("--name", default="", help="Only dead letters of this task name."),
            click.option(
                "--reason",
                type=click.Choice(sorted(REASONS)),
                default=None,
                help="Why they were dead-lettered.",
            ),
            click.option(
                "--since", type=DURATION, default=None, help="Failed at most this long ago: 30m, 2h, 7d."
            ),
            click.option("--until", type=DURATION, default=None, help="Failed at least this long ago."),
            click.option(
                "--label",
                "labels",
                multiple=True,
                callback=_label,
                metavar="KEY=VALUE",
                help="Carrying this label (repeat for several).",
            ),
            click.option(
                "--task", "task_ids", multiple=True, metavar="ID", help="This task (repeat; at most 1,000)."
            ),
        ]
        if with_all:
            options.append(
                click.option(
                    "--all", "every", is_flag=True, help="Every dead letter (when no other option is given)."
                )
            )
        for option in reversed(options):
            func = option(func)
        return func

    return decorate


def failure_filter(values: dict[str, Any], *, now: dt.datetime | None = None) -> fs.FailureFilter:
    """The FailureFilter of the options in ``values`` (removed from it)."""
    picked = {key: values.pop(key, None) for key in PARAMETERS}
    f = fs.FailureFilter(
        group_id=picked["group"] or "",
        queue=picked["queue"] or "",
        name=picked["name"] or "",
        labels=picked["labels"] or {},
        task_ids=list(picked["task_ids"] or ()),
        all=bool(picked["every"]),
    )
    if picked["reason"]:
        f.reason = REASONS[picked["reason"]]
    moment = now or dt.datetime.now(dt.UTC)
    if picked["since"] is not None:
        f.failed_after.FromDatetime(moment - picked["since"])
    if picked["until"] is not None:
        f.failed_before.FromDatetime(moment - picked["until"])
    return f
