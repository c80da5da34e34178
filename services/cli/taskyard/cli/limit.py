"""``taskyard limit ...``: flow control's named limits and fairness weights (LimitService).

A limit is a rate (``--rate 100/s``, bursts of ``--burst N``), a concurrency
(``--concurrency N`` units at once) or a circuit breaker (``--breaker 5/30s``: open
after 5 failed attempts within 30 s, ``--cool-down``, ``--probes``), global or
``--per-key``. ``update`` changes
only what it is given: it reads the limit, applies the options and sends the
whole definition back (UpdateLimit replaces it). ``delete`` asks first
(confirmation.py). Exit status: errors.py.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import click
from rich.text import Text

from taskyard.cli import durations
from taskyard.cli.confirmation import confirm, yes_option
from taskyard.cli.connection import target_options
from taskyard.cli.errors import CommandGroup
from taskyard.cli.gateway import Gateway, gateway
from taskyard.cli.limit_view import limit_detail, limit_table, weight_table
from taskyard.cli.output import Output, fields, output_option
from taskyard.core import limits as rules
from taskyard.v1 import limit_pb2
from taskyard.v1 import limit_service_pb2 as ls

RATE_HELP = "Units per period: 100/s, 10/min, 5/2s, 1000/h (ms, s, min, h, d)."
BREAKER_HELP = (
    "A circuit breaker: open after FAILURES failed attempts within WINDOW, e.g. 5/30s, 20/min "
    "(RetryAfter answers count; they spend no retry)."
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Breaker:
    """The breaker options given (None: not given)."""

    spec: limit_pb2.CircuitBreaker | None
    cool_down: dt.timedelta | None
    probes: int | None
    min_attempts: int | None
    max_refunds: int | None = None
    max_outage: dt.timedelta | None = None

    def given(self) -> bool:
        return self.spec is not None or self.tuning()

    def tuning(self) -> bool:
        tuning = (self.cool_down, self.probes, self.min_attempts, self.max_refunds, self.max_outage)
        return any(v is not None for v in tuning)


@click.group("limit", cls=CommandGroup)
@target_options
def limit_group() -> None:
    """Create and operate flow-control limits (rates, concurrency, circuit breakers) and fairness weights."""


def _rate(_ctx: click.Context, _param: click.Parameter, value: str | None) -> limit_pb2.RateLimit | None:
    if value is None:
        return None
    try:
        return rules.parse_rate(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _breaker(
    _ctx: click.Context, _param: click.Parameter, value: str | None
) -> limit_pb2.CircuitBreaker | None:
    if value is None:
        return None
    try:
        return rules.parse_breaker(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _duration(_ctx: click.Context, _param: click.Parameter, value: str | None) -> dt.timedelta | None:
    if value is None:
        return None
    try:
        return durations.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _show(reply: Any) -> Any:
    """A reply holding one ``limit``."""
    limit: limit_pb2.Limit = reply.limit
    return limit_detail(limit)


def _definition_options(func: Any) -> Any:
    for option in reversed(
        (
            click.option("--rate", callback=_rate, metavar="RATE", help=RATE_HELP),
            click.option(
                "--burst",
                type=click.IntRange(min=0),
                default=None,
                help="With --rate: units admitted at once after a quiet spell (default: the rate's units).",
            ),
            click.option(
                "--concurrency",
                type=click.IntRange(min=1),
                default=None,
                help="At most N units held at once.",
            ),
            click.option("--breaker", callback=_breaker, metavar="FAILURES/WINDOW", help=BREAKER_HELP),
            click.option(
                "--cool-down",
                callback=_duration,
                metavar="DURATION",
                help="With --breaker: how long it stays open before a probe (default 30s).",
            ),
            click.option(
                "--probes",
                type=click.IntRange(min=1, max=rules.MAX_PROBES),
                default=None,
                help="With --breaker: attempts admitted at once while half-open (default 1).",
            ),
            click.option(
                "--min-attempts",
                type=click.IntRange(min=1, max=rules.MAX_BREAKER_ATTEMPTS),
                default=None,
                help="With --breaker: attempts ended in the window before it may open (default FAILURES).",
            ),
            click.option(
                "--max-refunds",
                type=click.IntRange(min=1, max=rules.MAX_REFUNDS_PER_TASK),
                default=None,
                help="With --breaker: an outage's failures of one task it refunds; past them they are "
                f"charged (default {rules.DEFAULT_MAX_REFUNDS_PER_TASK}).",
            ),
            click.option(
                "--max-outage",
                callback=_duration,
                metavar="DURATION",
                help="With --breaker: how long after it opened an outage's failures are refunded; past it "
                "they are charged (default 1h).",
            ),
        )
    ):
        func = option(func)
    return func


@limit_group.command("create")
@click.argument("name")
@_definition_options
@click.option("--per-key", is_flag=True, help="Each key of a task's use has its own bucket.")
@click.option("--description", default="", help="Free text for people.")
@output_option
@target_options
def create_command(
    name: str,
    rate: limit_pb2.RateLimit | None,
    burst: int | None,
    concurrency: int | None,
    breaker: limit_pb2.CircuitBreaker | None,
    cool_down: dt.timedelta | None,
    probes: int | None,
    min_attempts: int | None,
    max_refunds: int | None,
    max_outage: dt.timedelta | None,
    per_key: bool,
    description: str,
    output: Output,
) -> None:
    """Create limit NAME: --rate RATE [--burst N], --concurrency N or --breaker FAILURES/WINDOW.

    \b
    Examples:
      taskyard limit create openai --rate 500/s --burst 50
      taskyard limit create per-customer --concurrency 3 --per-key
      taskyard limit create payments --breaker 5/30s --cool-down 10s --per-key
    """
    b = _Breaker(
        spec=breaker,
        cool_down=cool_down,
        probes=probes,
        min_attempts=min_attempts,
        max_refunds=max_refunds,
        max_outage=max_outage,
    )
    if [rate is not None, concurrency is not None, breaker is not None].count(True) != 1:
        raise click.UsageError("give exactly one of --rate, --concurrency and --breaker")
    _check_kind(rate, burst, concurrency, b)
    limit = limit_pb2.Limit(name=name, per_key=per_key, description=description)
    _apply(limit, rate, burst, concurrency, b)
    with gateway() as g:
        reply = g.call(g.limits.CreateLimit, ls.CreateLimitRequest(limit=limit))
    output.emit(reply, _show)


def _check_kind(
    rate: limit_pb2.RateLimit | None, burst: int | None, concurrency: int | None, breaker: _Breaker
) -> None:
    """Options of two kinds at once, refused before any call (a concurrency limit
    has no burst: it would be dropped without a word)."""
    if [rate is not None, concurrency is not None, breaker.spec is not None].count(True) > 1:
        raise click.UsageError("give one of --rate, --concurrency and --breaker")
    if burst is not None and (concurrency is not None or breaker.spec is not None):
        raise click.UsageError("--burst applies to a rate limit only")
    if breaker.tuning() and (rate is not None or concurrency is not None):
        raise click.UsageError(
            "--cool-down, --probes, --min-attempts, --max-refunds and --max-outage apply to a --breaker only"
        )


def _apply(
    limit: limit_pb2.Limit,
    rate: limit_pb2.RateLimit | None,
    burst: int | None,
    concurrency: int | None,
    breaker: _Breaker,
) -> None:
    """The kind and numbers given onto ``limit`` (the ones not given stay)."""
    if rate is not None:
        # A new rate keeps the burst it had unless --burst says otherwise.
        rate.burst = burst if burst is not None else (limit.rate.burst if limit.HasField("rate") else 0)
        limit.rate.CopyFrom(rate)
    elif burst is not None:
        if not limit.HasField("rate"):
            raise click.UsageError("--burst applies to a rate limit (give --rate too)")
        limit.rate.burst = burst
    if concurrency is not None:
        limit.concurrency.max_units = concurrency
    if breaker.spec is not None:
        # A new threshold and window keep the breaker's other numbers.
        old = limit.breaker if limit.HasField("breaker") else limit_pb2.CircuitBreaker()
        old.failure_threshold = breaker.spec.failure_threshold
        old.window.CopyFrom(breaker.spec.window)
        limit.breaker.CopyFrom(old)
    elif breaker.tuning() and not limit.HasField("breaker"):
        raise click.UsageError(
            "--cool-down, --probes, --min-attempts, --max-refunds and --max-outage apply to a breaker "
            "(give --breaker too)"
        )
    if breaker.cool_down is not None:
        limit.breaker.cool_down.FromTimedelta(breaker.cool_down)
    if breaker.probes is not None:
        limit.breaker.half_open_probes = breaker.probes
    if breaker.min_attempts is not None:
        limit.breaker.min_attempts = breaker.min_attempts
    if breaker.max_refunds is not None:
        limit.breaker.max_refunds_per_task = breaker.max_refunds
    if breaker.max_outage is not None:
        limit.breaker.max_outage.FromTimedelta(breaker.max_outage)


@limit_group.command("get")
@click.argument("name")
@output_option
@target_options
def get_command(name: str, output: Output) -> None:
    """Show one limit, with its usage on the leading scheduler."""
    with gateway() as g:
        reply = g.call(g.limits.GetLimit, ls.GetLimitRequest(name=name))
    output.emit(reply, _show)


def _every_page(g: Gateway, page_size: int, all_pages: bool) -> ls.ListLimitsResponse:
    reply = ls.ListLimitsResponse()
    request = ls.ListLimitsRequest(page_size=page_size)
    while True:
        page = g.call(g.limits.ListLimits, request)
        reply.limits.extend(page.limits)
        reply.next_page_token = request.page_token = page.next_page_token
        if not all_pages or not page.next_page_token:
            return reply


@limit_group.command("list")
@click.option("--page-size", type=click.IntRange(1, 1000), default=100, show_default=True)
@click.option("--all", "all_pages", is_flag=True, help="Every page, not only the first.")
@output_option
@target_options
def list_command(page_size: int, all_pages: bool, output: Output) -> None:
    """Limits by name: kind, numbers, per key, the task that declares it, usage."""
    with gateway() as g:
        reply = _every_page(g, page_size, all_pages)
    output.emit(reply, lambda r: limit_table(r.limits))
    if reply.next_page_token:
        output.note(f"(more: --all, or page token {reply.next_page_token})")


@limit_group.command("update")
@click.argument("name")
@_definition_options
@click.option("--per-key/--global", "per_key", default=None, help="A bucket per key, or one for all.")
@click.option("--description", default=None, help="Free text for people.")
@output_option
@target_options
def update_command(
    name: str,
    rate: limit_pb2.RateLimit | None,
    burst: int | None,
    concurrency: int | None,
    breaker: limit_pb2.CircuitBreaker | None,
    cool_down: dt.timedelta | None,
    probes: int | None,
    min_attempts: int | None,
    max_refunds: int | None,
    max_outage: dt.timedelta | None,
    per_key: bool | None,
    description: str | None,
    output: Output,
) -> None:
    """Change limit NAME: only the options given change (--rate, --concurrency or --breaker changes its kind).

    \b
    Examples:
      taskyard limit update openai --rate 800/s
      taskyard limit update per-customer --concurrency 5 --description "5 per customer"
    """
    b = _Breaker(
        spec=breaker,
        cool_down=cool_down,
        probes=probes,
        min_attempts=min_attempts,
        max_refunds=max_refunds,
        max_outage=max_outage,
    )
    nothing = rate is None and burst is None and concurrency is None and not b.given()
    if nothing and per_key is None and description is None:
        raise click.UsageError(
            "nothing to change: give --rate, --burst, --concurrency, --breaker (--cool-down, --probes, "
            "--min-attempts, --max-refunds, --max-outage), --per-key/--global or --description"
        )
    _check_kind(rate, burst, concurrency, b)
    with gateway() as g:
        limit = g.call(g.limits.GetLimit, ls.GetLimitRequest(name=name)).limit
        # Output only: the gateway ignores them, and they are not the new definition.
        for field in ("usage", "created_at", "updated_at"):
            limit.ClearField(field)
        _apply(limit, rate, burst, concurrency, b)
        if per_key is not None:
            limit.per_key = per_key
        if description is not None:
            limit.description = description
        reply = g.call(g.limits.UpdateLimit, ls.UpdateLimitRequest(limit=limit))
    output.emit(reply, _show)


def _deleted(name: str, reply: ls.DeleteLimitResponse) -> Text:
    if reply.tasks_released:
        return Text(f"deleted {name}: {reply.tasks_released} tasks that used it run without it")
    return Text(f"deleted {name}")


@limit_group.command("delete")
@click.argument("name")
@click.option("--force", is_flag=True, help="Even while tasks not final use it: they run without it.")
@yes_option
@output_option
@target_options
def delete_command(name: str, force: bool, yes: bool, output: Output) -> None:
    """Delete limit NAME; refused while tasks not final use it, unless --force."""
    confirm(f"Delete limit {name}?", yes=yes)
    with gateway() as g:
        reply = g.call(g.limits.DeleteLimit, ls.DeleteLimitRequest(name=name, force=force))
    output.emit(reply, lambda r: _deleted(name, r))


@limit_group.command("weight")
@click.argument("key")
@click.argument("weight", type=click.IntRange(0, rules.MAX_WEIGHT))
@output_option
@target_options
def weight_command(key: str, weight: int, output: Output) -> None:
    """Give fairness key KEY a WEIGHT of its lane (1 to 1000; 0: back to the default 1).

    A key of weight 3 is served three tasks for every one of a key of weight 1
    while both have tasks waiting.
    """
    request = ls.SetKeyWeightRequest(weight=limit_pb2.KeyWeight(key=key, weight=weight))
    with gateway() as g:
        reply = g.call(g.limits.SetKeyWeight, request)
    output.emit(
        reply,
        lambda r: fields(
            [("key", r.weight.key), ("weight", str(r.weight.weight) if r.weight.weight else "1 (default)")]
        ),
    )


@limit_group.command("weights")
@output_option
@target_options
def weights_command(output: Output) -> None:
    """Fairness keys with a weight, by key (the others have 1)."""
    with gateway() as g:
        reply = g.call(g.limits.ListKeyWeights, ls.ListKeyWeightsRequest())
    output.emit(reply, lambda r: weight_table(r.weights))
