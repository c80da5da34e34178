"""The dashboard's shared views, one per tenant a page is confined to.

The JSON API and the task streams go through the gateway's own gRPC server, whose
interceptors judge each call's tenant. The pulse and the limits' feed are polled
once for every page that shows them: a page of a tenant's token, or of an
operator's that picked a tenant (``?tenant=NAME``), follows that tenant's view,
polled with its TenantScope and its names stripped; an operator's page without a
pick follows the view of every tenant.
"""

from __future__ import annotations

import collections
from collections.abc import Awaitable, Callable
from typing import Generic, Protocol, TypeVar

from aiohttp import web

from taskyard.bus.v1 import event_log_pb2, flow_pb2, tenants_pb2
from taskyard.core import errors, tenants
from taskyard.gateway import auth
from taskyard.gateway.dashboard import calls, hub, usage


class Shared(Protocol):
    async def serve(self, request: web.Request) -> web.StreamResponse: ...

    async def close(self) -> None: ...


F = TypeVar("F", bound=Shared)


def page_within(
    authenticator: auth.Authenticator | None, path: str, request: web.Request
) -> tuple[errors.TaskyardError | None, str | None]:
    """Why the page may not follow ``path``'s view, or the tenant it is confined to
    (None: every tenant's)."""
    who = auth.Identity(name="")
    if authenticator is not None:
        refusal, token = authenticator.authorize(path, calls.metadata(request.headers.get("Authorization")))
        if refusal is not None:
            return refusal, None
        if token is not None:
            who = auth.Identity(name=token.name, tenant=token.tenant)
    try:
        who = auth.act_as(calls.metadata(None, calls.page_tenant(request.query)), who)
    except errors.TaskyardError as exc:
        return exc, None
    return None, who.within


# Whether a tenant exists (the gateway's tenants copy, tenancy.TenantCache).
Known = Callable[[str], Awaitable[bool]]
# Tenants' views kept at once (every tenant's view besides): past it the least recently
# asked one without a page is dropped, and with none idle a new tenant's page is refused.
MAX_FEEDS = 64


class ScopedFeeds(Generic[F]):
    """One view per tenant pages are confined to, made at the first page's visit: only
    for a tenant that exists (``known``), at most ``max_feeds`` at once."""

    def __init__(
        self,
        make: Callable[[str | None], F],
        *,
        authenticator: auth.Authenticator | None,
        path: str,
        known: Known | None = None,
        max_feeds: int = MAX_FEEDS,
    ) -> None:
        self._make = make
        self._authenticator = authenticator
        self._path = path
        self._known = known
        self._max_feeds = max_feeds
        # Least recently asked first.
        self.feeds: collections.OrderedDict[str | None, F] = collections.OrderedDict()

    async def feed(self, within: str | None) -> F:
        """``within``'s view; raises TENANT_UNKNOWN for a tenant the store does not
        hold, RESOURCE_EXHAUSTED when every view kept has pages and no room is left."""
        found = self.feeds.get(within)
        if found is not None:
            self.feeds.move_to_end(within)
            return found
        if within is not None and self._known is not None and not await self._known(within):
            raise errors.TaskyardError(
                errors.Code.PERMISSION_DENIED,
                tenants.TENANT_UNKNOWN,
                f"the tenant {within!r} is not known; an operator creates it with TenantService.CreateTenant",
            )
        found = self.feeds.get(within)  # made while the tenant was looked up
        if found is not None:
            return found
        kept = [w for w in self.feeds if w is not None]
        if len(kept) >= self._max_feeds:
            idle = [w for w in kept if not getattr(self.feeds[w], "listeners", None)]
            if not idle:
                raise errors.TaskyardError(
                    errors.Code.RESOURCE_EXHAUSTED,
                    "TOO_MANY_VIEWS",
                    f"the dashboard follows at most {self._max_feeds} tenants' live views at once, "
                    "each with pages open: try again when one is closed",
                )
            await self.feeds.pop(idle[0]).close()
        found = self.feeds[within] = self._make(within)
        return found

    async def serve(self, request: web.Request) -> web.StreamResponse:
        refusal, within = page_within(self._authenticator, self._path, request)
        if refusal is not None:
            return hub.refusal_answer(refusal)
        try:
            feed = await self.feed(within)
        except errors.TaskyardError as exc:
            return hub.refusal_answer(exc)
        return await feed.serve(request)

    async def close(self) -> None:
        for feed in self.feeds.values():
            await feed.close()


def _scope(within: str | None) -> tenants_pb2.TenantScope:
    return tenants_pb2.TenantScope(all=True) if within is None else tenants_pb2.TenantScope(tenant=within)


def scoped_summarize(summarize: hub.Summarize, within: str | None) -> hub.Summarize:
    """``summarize`` over ``within``'s events, its queues named as the tenant knows them."""

    async def call(request: event_log_pb2.SummarizeEventsRequest) -> event_log_pb2.SummarizeEventsReply:
        request.scope.CopyFrom(_scope(within))
        reply = await summarize(request)
        if within:
            for entered in reply.entered:
                entered.queue = tenants.strip(within, entered.queue)
        return reply

    return call


def scoped_limits(read_limits: usage.ReadLimits, within: str | None) -> usage.ReadLimits:
    """``read_limits`` of ``within``'s limits (every tenant's for None), by the names it knows."""

    async def call(request: flow_pb2.ReadLimitsRequest) -> flow_pb2.ReadLimitsReply:
        request.scope.CopyFrom(_scope(within))
        reply = await read_limits(request)
        if within is not None:
            own = [lim for lim in reply.limits if tenants.split(lim.name)[0] == within]
            del reply.limits[:]
            for lim in own:
                lim.name = tenants.split(lim.name)[1]
                reply.limits.append(lim)
        return reply

    return call


def scoped_gates(flow_gates: usage.FlowGates, within: str | None) -> usage.FlowGates:
    """``flow_gates`` with the usage of ``within``'s limits only, by the names it knows."""

    async def call(request: flow_pb2.FlowGatesRequest) -> flow_pb2.FlowGatesReply:
        request.scope.CopyFrom(_scope(within))
        reply = await flow_gates(request)
        if within is None:
            return reply
        out = flow_pb2.FlowGatesReply()
        for name, used in reply.usage.items():
            owner, bare = tenants.split(name)
            if owner == within:
                out.usage[bare].CopyFrom(used)
        return out

    return call
