"""``taskyard tenant ...``: tenants and their quotas (TenantService), for operator tokens.

A tenant's quota is ``--max-concurrency N`` attempts of its tasks at once and ``--rate
100/s`` attempts started per period (bursts of ``--burst N``); ``--weight W`` is its share
in fair share against the other tenants. ``update`` changes only what it is given: it
reads the tenant, applies the options and sends the whole back (UpdateTenant replaces
quota, weight and description). ``suspend`` asks first (confirmation.py): it stops the
tenant's dispatch and refuses its submissions. Exit status: errors.py.
"""

from __future__ import annotations

from typing import Any

import click

from taskyard.cli.confirmation import confirm, yes_option
from taskyard.cli.connection import target_options
from taskyard.cli.errors import CommandGroup
from taskyard.cli.gateway import Gateway, gateway
from taskyard.cli.output import Output, output_option
from taskyard.cli.tenant_view import tenant_detail, tenant_table
from taskyard.core import limits as rules
from taskyard.core import tenants
from taskyard.v1 import limit_pb2
from taskyard.v1 import tenant_service_pb2 as ts

RATE_HELP = "Attempts of its tasks started per period: 100/s, 10/min, 5/2s, 1000/h (ms, s, min, h, d)."
# The gateway's bounds (docs/tenants.md), checked here too so a typo costs no call.
MAX_CONCURRENCY = 1_000_000
MAX_WEIGHT = 1000


@click.group("tenant", cls=CommandGroup)
@target_options
def tenant_group() -> None:
    """Create, change, suspend and resume tenants (operator tokens; docs/tenants.md)."""


def _rate(_ctx: click.Context, _param: click.Parameter, value: str | None) -> limit_pb2.RateLimit | None:
    if value is None:
        return None
    try:
        return rules.parse_rate(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _checked_name(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    """NAME as the gateway reads a tenant's name (core/tenants.py): a bad one is a
    usage error here, not a call (with no gateway up, the user would read UNAVAILABLE)."""
    if (problem := tenants.problem(value)) is not None:
        raise click.BadParameter(f"the tenant name {problem}")
    return value


def _show(reply: Any) -> Any:
    """A reply holding one ``tenant``."""
    tenant: ts.Tenant = reply.tenant
    return tenant_detail(tenant)


def _quota_options(func: Any) -> Any:
    for option in reversed(
        (
            click.option(
                "--max-concurrency",
                type=click.IntRange(0, MAX_CONCURRENCY),
                default=None,
                help="Attempts of its tasks running at once (0: no bound).",
            ),
            click.option("--rate", callback=_rate, metavar="RATE", help=RATE_HELP),
            click.option(
                "--burst",
                type=click.IntRange(min=0),
                default=None,
                help="With --rate: attempts started at once after a quiet spell (default: the rate's units).",
            ),
            click.option(
                "--weight",
                type=click.IntRange(0, MAX_WEIGHT),
                default=None,
                help="Its share in fair share against the other tenants (1 to 1000; 0: the default 1).",
            ),
        )
    ):
        func = option(func)
    return func


def _apply_rate(tenant: ts.Tenant, rate: limit_pb2.RateLimit | None, burst: int | None) -> None:
    if rate is not None:
        # A new rate keeps the burst it had unless --burst says otherwise.
        old = tenant.quota.rate.burst if tenant.quota.HasField("rate") else 0
        rate.burst = burst if burst is not None else old
        tenant.quota.rate.CopyFrom(rate)
    elif burst is not None:
        if not tenant.quota.HasField("rate"):
            raise click.UsageError("--burst applies to a rate (give --rate too)")
        tenant.quota.rate.burst = burst


@tenant_group.command("create")
@click.argument("name", callback=_checked_name)
@_quota_options
@click.option("--description", default="", help="Free text for people (at most 1,024 characters).")
@output_option
@target_options
def create_command(
    name: str,
    max_concurrency: int | None,
    rate: limit_pb2.RateLimit | None,
    burst: int | None,
    weight: int | None,
    description: str,
    output: Output,
) -> None:
    """Create tenant NAME (1 to 64 characters of [a-z0-9-]), active, with its quota.

    \b
    Examples:
      taskyard tenant create acme --max-concurrency 50 --rate 100/s --weight 2
      taskyard tenant create globex --description "the globex team"
    """
    tenant = ts.Tenant(name=name, weight=weight or 0, description=description)
    tenant.quota.max_concurrency = max_concurrency or 0
    _apply_rate(tenant, rate, burst)
    with gateway() as g:
        reply = g.call(g.tenants.CreateTenant, ts.CreateTenantRequest(tenant=tenant))
    output.emit(reply, _show)


@tenant_group.command("get")
@click.argument("name", callback=_checked_name)
@output_option
@target_options
def get_command(name: str, output: Output) -> None:
    """Show tenant NAME (a tenant token may read its own)."""
    with gateway() as g:
        reply = g.call(g.tenants.GetTenant, ts.GetTenantRequest(name=name))
    output.emit(reply, _show)


def _every_page(g: Gateway, page_size: int, all_pages: bool) -> ts.ListTenantsResponse:
    reply = ts.ListTenantsResponse()
    request = ts.ListTenantsRequest(page_size=page_size)
    while True:
        page = g.call(g.tenants.ListTenants, request)
        reply.tenants.extend(page.tenants)
        reply.next_page_token = request.page_token = page.next_page_token
        if not all_pages or not page.next_page_token:
            return reply


@tenant_group.command("list")
@click.option("--page-size", type=click.IntRange(1, 1000), default=100, show_default=True)
@click.option("--all", "all_pages", is_flag=True, help="Every page, not only the first.")
@output_option
@target_options
def list_command(page_size: int, all_pages: bool, output: Output) -> None:
    """Tenants by name: state, quota, weight."""
    with gateway() as g:
        reply = _every_page(g, page_size, all_pages)
    output.emit(reply, lambda r: tenant_table(r.tenants))
    if reply.next_page_token:
        output.note(f"(more: --all, or page token {reply.next_page_token})")


@tenant_group.command("update")
@click.argument("name", callback=_checked_name)
@_quota_options
@click.option("--no-rate", is_flag=True, help="Remove the rate quota (no bound).")
@click.option("--description", default=None, help="Free text for people (at most 1,024 characters).")
@output_option
@target_options
def update_command(
    name: str,
    max_concurrency: int | None,
    rate: limit_pb2.RateLimit | None,
    burst: int | None,
    weight: int | None,
    no_rate: bool,
    description: str | None,
    output: Output,
) -> None:
    """Change tenant NAME: only the options given change.

    \b
    Examples:
      taskyard tenant update acme --max-concurrency 100
      taskyard tenant update acme --no-rate --weight 3
    """
    given = (max_concurrency, rate, burst, weight, description)
    if all(v is None for v in given) and not no_rate:
        raise click.UsageError(
            "nothing to change: give --max-concurrency, --rate (--burst), --no-rate, --weight or "
            "--description"
        )
    if no_rate and (rate is not None or burst is not None):
        raise click.UsageError("--no-rate goes with neither --rate nor --burst")
    with gateway() as g:
        tenant = g.call(g.tenants.GetTenant, ts.GetTenantRequest(name=name)).tenant
        # Output only: the gateway ignores them, and they are not the new definition.
        for field in ("state", "created_at", "updated_at", "suspended_at"):
            tenant.ClearField(field)
        if max_concurrency is not None:
            tenant.quota.max_concurrency = max_concurrency
        if no_rate:
            tenant.quota.ClearField("rate")
        _apply_rate(tenant, rate, burst)
        if weight is not None:
            tenant.weight = weight
        if description is not None:
            tenant.description = description
        reply = g.call(g.tenants.UpdateTenant, ts.UpdateTenantRequest(tenant=tenant))
    output.emit(reply, _show)


@tenant_group.command("suspend")
@click.argument("name", callback=_checked_name)
@click.option("--reason", default="", help="Why, kept in the audit event (tenant.suspended).")
@yes_option
@output_option
@target_options
def suspend_command(name: str, reason: str, yes: bool, output: Output) -> None:
    """Suspend tenant NAME: its submissions are refused and its tasks wait, queued, until it
    is resumed (attempts already running finish). Nothing it had is lost."""
    confirm(
        f"Suspend tenant {name}? Its submissions are refused and none of its tasks start until "
        "it is resumed.",
        yes=yes,
    )
    with gateway() as g:
        reply = g.call(g.tenants.SuspendTenant, ts.SuspendTenantRequest(name=name, reason=reason))
    output.emit(reply, _show)


@tenant_group.command("resume")
@click.argument("name", callback=_checked_name)
@output_option
@target_options
def resume_command(name: str, output: Output) -> None:
    """Resume tenant NAME: its tasks are dispatched and its submissions taken again."""
    with gateway() as g:
        reply = g.call(g.tenants.ResumeTenant, ts.ResumeTenantRequest(name=name))
    output.emit(reply, _show)
