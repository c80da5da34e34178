"""The dashboard's shared live views by tenant (dashboard/scopes.py): whose view a page
follows, and each tenant's view read with its scope and its names bare."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import make_mocked_request

from taskyard.bus.v1 import event_log_pb2, flow_pb2, tenants_pb2
from taskyard.core import errors, tenants
from taskyard.gateway import auth
from taskyard.gateway.dashboard import hub, scopes
from taskyard.v1 import limit_pb2

OPS = "operator-token-0123456789abcdef"
ACME = "acme-token-0123456789abcdef"


def _page(token: str | None, query: str = "") -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return make_mocked_request("GET", f"/api/pulse{query}", headers=headers)


def test_a_page_follows_its_tokens_tenant_or_the_one_an_operator_picked(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text(f"{OPS} read ops\n{ACME} read acme-ci tenant=acme\n")
    authenticator = auth.Authenticator(auth.TokensFile(str(path)))

    def within(token: str | None, query: str = "") -> tuple[str | None, str | None]:
        refusal, tenant = scopes.page_within(authenticator, hub.WATCH_PATH, _page(token, query))
        return (refusal.reason if refusal else None), tenant

    assert within(OPS) == (None, None)
    assert within(OPS, "?tenant=beta") == (None, "beta")
    assert within(ACME) == (None, "acme")
    assert within(ACME, "?tenant=acme") == (None, "acme")
    assert within(ACME, "?tenant=beta") == (tenants.OPERATOR_ONLY, None)
    assert within(OPS, "?tenant=Beta!") == (tenants.INVALID_TENANT, None)
    assert within(None) == ("TOKEN_MISSING", None)
    # Without tokens every page is an operator's.
    assert scopes.page_within(None, hub.WATCH_PATH, _page(None, "?tenant=acme")) == (None, "acme")


async def test_a_tenants_view_is_read_with_its_scope_and_shows_its_names_bare() -> None:
    asked: list[Any] = []

    async def summarize(request: event_log_pb2.SummarizeEventsRequest) -> event_log_pb2.SummarizeEventsReply:
        asked.append(request.scope)
        reply = event_log_pb2.SummarizeEventsReply()
        reply.entered.add(queue="acme/reports", task_name="add")
        return reply

    reply = await scopes.scoped_summarize(summarize, "acme")(event_log_pb2.SummarizeEventsRequest())
    assert [e.queue for e in reply.entered] == ["reports"]
    await scopes.scoped_summarize(summarize, None)(event_log_pb2.SummarizeEventsRequest())
    assert asked == [tenants_pb2.TenantScope(tenant="acme"), tenants_pb2.TenantScope(all=True)]

    async def read_limits(request: flow_pb2.ReadLimitsRequest) -> flow_pb2.ReadLimitsReply:
        asked.append(request.scope)
        return flow_pb2.ReadLimitsReply(
            limits=[limit_pb2.Limit(name=n) for n in ("acme/api", "beta/api", "api")], version=3
        )

    limits = await scopes.scoped_limits(read_limits, "acme")(flow_pb2.ReadLimitsRequest())
    assert [lim.name for lim in limits.limits] == ["api"] and limits.version == 3
    every = await scopes.scoped_limits(read_limits, None)(flow_pb2.ReadLimitsRequest())
    assert [lim.name for lim in every.limits] == ["acme/api", "beta/api", "api"]
    assert asked[-2:] == [tenants_pb2.TenantScope(tenant="acme"), tenants_pb2.TenantScope(all=True)]

    async def gates(request: flow_pb2.FlowGatesRequest) -> flow_pb2.FlowGatesReply:
        reply = flow_pb2.FlowGatesReply()
        for name, used in (("acme/api", 1), ("beta/api", 2), ("api", 3)):
            reply.usage[name].units_in_use = used
        return reply

    usage = await scopes.scoped_gates(gates, "acme")(flow_pb2.FlowGatesRequest())
    assert {k: v.units_in_use for k, v in usage.usage.items()} == {"api": 1}
    usage = await scopes.scoped_gates(gates, None)(flow_pb2.FlowGatesRequest())
    assert len(usage.usage) == 3


class _View:
    """A shared view: its pages (listeners) and whether it was closed."""

    def __init__(self, within: str | None) -> None:
        self.within = within
        self.listeners: set[object] = set()
        self.closed = False

    async def serve(self, request: Any) -> Any:
        raise AssertionError("not served here")

    async def close(self) -> None:
        self.closed = True


async def test_views_are_made_for_tenants_that_exist_and_no_more_than_the_bound() -> None:
    asked: list[str] = []

    async def known(name: str) -> bool:
        asked.append(name)
        return name != "ghost"

    made: list[_View] = []

    def make(within: str | None) -> _View:
        made.append(_View(within))
        return made[-1]

    feeds = scopes.ScopedFeeds(make, authenticator=None, path=hub.WATCH_PATH, known=known, max_feeds=2)
    # An operator's ?tenant= of a tenant nobody created makes nothing.
    with pytest.raises(errors.TaskyardError) as unknown:
        await feeds.feed("ghost")
    assert unknown.value.reason == tenants.TENANT_UNKNOWN and not made
    acme, beta = await feeds.feed("acme"), await feeds.feed("beta")
    assert await feeds.feed("acme") is acme and await feeds.feed(None) is made[-1]
    acme.listeners.add(object())
    # Full: the idle view (beta's) goes for gamma's; every tenant's view is no tenant's.
    gamma = await feeds.feed("gamma")
    assert beta.closed and not acme.closed and set(feeds.feeds) == {"acme", None, "gamma"}
    gamma.listeners.add(object())
    with pytest.raises(errors.TaskyardError) as full:
        await feeds.feed("delta")
    assert full.value.code is errors.Code.RESOURCE_EXHAUSTED
    assert asked == ["ghost", "acme", "beta", "gamma", "delta"]
