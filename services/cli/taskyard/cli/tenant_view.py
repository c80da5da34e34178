"""How tenants look in a table (``taskyard tenant ...``)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import RenderableType
from rich.text import Text

from taskyard.cli.limit_view import rate_text
from taskyard.cli.output import fields, table, when
from taskyard.v1 import tenant_service_pb2 as ts

_STATE_STYLES = {"ACTIVE": "green", "SUSPENDED": "yellow"}


def state_name(tenant: ts.Tenant) -> str:
    return ts.TenantState.Name(tenant.state).removeprefix("TENANT_STATE_")


def _state(tenant: ts.Tenant) -> Text:
    name = state_name(tenant)
    return Text(name, style=_STATE_STYLES.get(name, ""))


def concurrency_text(tenant: ts.Tenant) -> str:
    n = tenant.quota.max_concurrency
    return f"{n} at once" if n else "no bound"


def quota_rate_text(tenant: ts.Tenant) -> str:
    """As ``--rate`` takes it back (``100/s``), with its burst; "no bound" without one."""
    if not tenant.quota.HasField("rate"):
        return "no bound"
    rate = tenant.quota.rate
    return rate_text(rate) + (f", burst {rate.burst}" if rate.burst else "")


def weight_text(tenant: ts.Tenant) -> str:
    # 0 means 1 (the gateway stores it so).
    return str(tenant.weight or 1)


def tenant_detail(tenant: ts.Tenant) -> RenderableType:
    rows: list[tuple[str, RenderableType]] = [
        ("name", tenant.name),
        ("state", _state(tenant)),
        ("concurrency", concurrency_text(tenant)),
        ("rate", quota_rate_text(tenant)),
        ("weight", weight_text(tenant)),
    ]
    if tenant.description:
        rows.append(("description", tenant.description))
    for key in ("created_at", "updated_at", "suspended_at"):
        if tenant.HasField(key):
            rows.append((key.removesuffix("_at"), when(tenant, key, timespec="seconds")))
    return fields(rows)


def tenant_table(tenants: Iterable[ts.Tenant]) -> RenderableType:
    return table(
        ("name", "state", "concurrency", "rate", "weight", "created"),
        (
            (
                t.name,
                _state(t),
                concurrency_text(t),
                quota_rate_text(t),
                weight_text(t),
                when(t, "created_at", timespec="seconds"),
            )
            for t in tenants
        ),
    )
