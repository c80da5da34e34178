"""Tenants' names, and how a tenant's own names are kept apart from another's.

A tenant is named by 1 to 64 characters of ``[a-z0-9-]``: a word in a URL, a metric
label and a token file's field without quoting. ``""`` is the default tenant: what
an operator token submits into, what every task before tenants belongs to, and all
there is in dev mode without tokens.

Each tenant has its own queues, schedules and limits: two tenants may both have a
queue "reports". On the bus and in the database a name of a tenant other than the
default one is *qualified*, ``tenant/name``; the default tenant's names stay bare, so
nothing stored before tenants changes. Names never contain ``/`` (core/names.py), so
a qualified name splits one way only. The gateway is the one place that qualifies
what a caller sends and strips what it returns: a caller never sees the prefix.
"""

from __future__ import annotations

import re

MAX_CHARS = 64
PATTERN = r"[a-z0-9-]{1,64}"
CHARSET = "1 to 64 characters of [a-z0-9-]"
DEFAULT = ""
# The name that stands for the default tenant ("") in a list of tenants (settings, CLI).
DEFAULT_TENANT_NAME = "default"
SEPARATOR = "/"
# FieldViolation / ErrorInfo reasons.
INVALID_TENANT = "INVALID_TENANT"
TENANT_UNKNOWN = "TENANT_UNKNOWN"
TENANT_SUSPENDED = "TENANT_SUSPENDED"
OPERATOR_ONLY = "OPERATOR_ONLY"
# The gRPC metadata key with which an operator token acts as one tenant.
METADATA_KEY = "taskyard-tenant"
# Names no tenant may take: "default" is how a pool's --serve-tenant and the metrics'
# label name the default tenant, "other" the metrics' label of the tenants past their bound.
RESERVED = frozenset({"default", "other"})
# How much of a bad name a description quotes.
_QUOTE_CHARS = 64

_NAME = re.compile(PATTERN)


def fits(name: str) -> bool:
    """Whether ``name`` names a tenant (the default tenant ``""`` does not: it is no name)."""
    return _NAME.fullmatch(name) is not None


def problem(name: str) -> str | None:
    """What is wrong with ``name`` as a tenant's name, or None."""
    if name in RESERVED:
        return f"{name!r} is reserved (it names the default tenant or the tenants past the metrics' bound)"
    if fits(name):
        return None
    if not name:
        return "must not be empty"
    if len(name) > MAX_CHARS:
        return f"must be at most {MAX_CHARS} characters, got {len(name)}"
    shown = name if len(name) <= _QUOTE_CHARS else name[:_QUOTE_CHARS] + "…"
    return f"must be {CHARSET}, got {shown!r}"


def unknown_message(name: str) -> str:
    """TENANT_UNKNOWN's message, the gateway's (PERMISSION_DENIED, for a call's
    tenant) and the store's (FAILED_PRECONDITION, for a write's) alike."""
    return f"the tenant {name!r} is not known; an operator creates it with TenantService.CreateTenant"


def suspended_message(name: str) -> str:
    """TENANT_SUSPENDED's message (FAILED_PRECONDITION), the gateway's and the store's alike."""
    return (
        f"the tenant {name!r} is suspended: it starts no new work (submissions, retries, redrives, "
        "new schedules) until an operator resumes it (TenantService.ResumeTenant); its tasks wait, queued"
    )


def qualify(tenant: str, name: str) -> str:
    """``name`` as stored for ``tenant``: bare for the default tenant."""
    return f"{tenant}{SEPARATOR}{name}" if tenant else name


def split(stored: str) -> tuple[str, str]:
    """(tenant, name) of a stored name: ("", name) for a bare one."""
    tenant, sep, name = stored.partition(SEPARATOR)
    return (tenant, name) if sep else (DEFAULT, stored)


def strip(tenant: str, stored: str) -> str:
    """The name ``tenant`` knows a stored name of its own by."""
    return stored[len(tenant) + 1 :] if tenant and stored.startswith(tenant + SEPARATOR) else stored
