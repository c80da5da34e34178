"""``taskyard.v1.LimitService``: named limits and fairness weights.

The gateway checks every change with core/limits.py (INVALID_ARGUMENT with
field violations, nothing sent) and forwards it to the result-store
(STORE_LIMIT_CHANGE), which checks it again, stores it with its event and bumps
the version the schedulers poll. Reads come from the store's catalog
(STORE_LIMITS, by version: limit_catalog.py), each limit with the leading
scheduler's live usage when it answers in time (flow_gates.py).
"""

from __future__ import annotations

import base64
import binascii
import bisect
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import grpc

from taskyard.bus.v1 import flow_pb2
from taskyard.core import codec, contract, errors, names, rpc, tenants
from taskyard.core import limits as rules
from taskyard.gateway import auth, flow_gates, status
from taskyard.gateway.limit_catalog import LimitCatalog, Snapshot
from taskyard.v1 import limit_pb2, limit_service_pb2_grpc
from taskyard.v1 import limit_service_pb2 as svc

log = logging.getLogger(__name__)

R = TypeVar("R")
Context = grpc.aio.ServicerContext[object, object]
Op = flow_pb2.LimitOp

LIMIT_SERVICE_NAME = svc.DESCRIPTOR.services_by_name["LimitService"].full_name
DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
MAX_PAGE_TOKEN_CHARS = 1024
# Fields of a Limit the server sets (ignored in a request).
OUTPUT_ONLY = ("created_at", "updated_at", "usage", "tenant")


def _name(value: str, field: str = "name") -> str:
    found = names.problem(value, required=True)
    if found is not None:
        raise codec.invalid([codec.Violation(field=field, description=found[0], reason=found[1])])
    return value


def _definition(request: svc.CreateLimitRequest | svc.UpdateLimitRequest) -> limit_pb2.Limit:
    """The request's limit, checked, without its output-only fields."""
    if not request.HasField("limit"):
        raise codec.invalid([codec.Violation(field="limit", description="required")])
    limit = limit_pb2.Limit()
    limit.CopyFrom(request.limit)
    for field in OUTPUT_ONLY:
        limit.ClearField(field)
    violations = rules.limit_violations(limit, "limit")
    if violations:
        raise codec.invalid(violations)
    return limit


def _copy(weight: limit_pb2.KeyWeight) -> limit_pb2.KeyWeight:
    out = limit_pb2.KeyWeight()
    out.CopyFrom(weight)
    return out


def page_token(after: str) -> str:
    return base64.urlsafe_b64encode(after.encode()).decode().rstrip("=")


def _after(token: str, violations: list[codec.Violation]) -> str:
    """The name a page token continues after; a violation for one this API never gave."""
    if not token:
        return ""
    name = ""
    if len(token) <= MAX_PAGE_TOKEN_CHARS:
        try:
            name = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        except (binascii.Error, UnicodeDecodeError, ValueError):
            name = ""
    # An operator's listing of every tenant's continues after a qualified name.
    owner, bare = tenants.split(name)
    if not names.fits(bare) or (owner and not tenants.fits(owner)):
        violations.append(codec.Violation(field="page_token", description="not a token from a previous page"))
    return name


def _page_size(value: int, violations: list[codec.Violation]) -> int:
    size = value or DEFAULT_PAGE_SIZE
    if not 1 <= size <= MAX_PAGE_SIZE:
        violations.append(
            codec.Violation(
                field="page_size", description=f"must be between 1 and {MAX_PAGE_SIZE}, got {value}"
            )
        )
    return size


def _own_limits(held: Snapshot) -> list[limit_pb2.Limit]:
    """The limits the caller reaches, sorted by the names it knows them by: its
    tenant's, stripped (an operator over every tenant: all, others' qualified)."""
    within = auth.identity().within
    if within is None:
        return list(held.limits)
    return sorted(
        (lim for lim in held.limits if tenants.split(lim.name)[0] == within), key=lambda lim: _bare(lim.name)
    )


def _bare(stored: str) -> str:
    return tenants.split(stored)[1]


def _stored(name: str) -> str:
    return tenants.qualify(auth.identity().home, name)


def _shown_limit(limit: limit_pb2.Limit) -> limit_pb2.Limit:
    """``limit`` named as its tenant knows it, with that tenant."""
    limit.tenant, limit.name = tenants.split(limit.name)
    return limit


def _shown_weight(weight: limit_pb2.KeyWeight) -> limit_pb2.KeyWeight:
    """``weight`` keyed as its tenant knows the key: its tenant is the store's
    column, never read off the key (a default-tenant key may hold a '/')."""
    weight.key = tenants.strip(weight.tenant, weight.key)
    return weight


class LimitService(limit_service_pb2_grpc.LimitServiceServicer):
    def __init__(self, *, store: rpc.Caller, lane: rpc.Caller, catalog: LimitCatalog) -> None:
        self._store = store
        self._lane = lane
        self._catalog = catalog

    @classmethod
    def register(
        cls, server: grpc.aio.Server, *, store: rpc.Caller, lane: rpc.Caller, catalog: LimitCatalog
    ) -> None:
        limit_service_pb2_grpc.add_LimitServiceServicer_to_server(
            cls(store=store, lane=lane, catalog=catalog), server
        )

    async def _guard(self, context: Context, call: Callable[[], Awaitable[R]]) -> R:
        return await status.guard(context, call, log, "limit request failed")

    async def _change(self, request: flow_pb2.ChangeLimitRequest) -> flow_pb2.ChangeLimitReply:
        reply = await self._store.call(contract.STORE_LIMIT_CHANGE, request)
        # The next submission through this gateway sees the change.
        self._catalog.stale()
        return reply

    async def _with_usage(self, limits: Sequence[limit_pb2.Limit]) -> list[limit_pb2.Limit]:
        """Copies of ``limits``, each with its usage when the scheduler answers."""
        out = []
        for lim in limits:
            copy = limit_pb2.Limit()
            copy.CopyFrom(lim)
            out.append(copy)
        if out:
            reply = await flow_gates.ask(self._lane, limits=[lim.name for lim in out])
            if reply is not None:
                for lim in out:
                    if lim.name in reply.usage:
                        lim.usage.CopyFrom(reply.usage[lim.name])
        return [_shown_limit(lim) for lim in out]

    # --- changes (admin) ---------------------------------------------------------
    async def CreateLimit(self, request: svc.CreateLimitRequest, context: Context) -> svc.CreateLimitResponse:
        async def call() -> svc.CreateLimitResponse:
            limit = _definition(request)
            limit.name = _stored(limit.name)
            reply = await self._change(flow_pb2.ChangeLimitRequest(op=Op.LIMIT_OP_CREATE, limit=limit))
            return svc.CreateLimitResponse(limit=_shown_limit(reply.limit))

        return await self._guard(context, call)

    async def UpdateLimit(self, request: svc.UpdateLimitRequest, context: Context) -> svc.UpdateLimitResponse:
        async def call() -> svc.UpdateLimitResponse:
            limit = _definition(request)
            limit.name = _stored(limit.name)
            reply = await self._change(flow_pb2.ChangeLimitRequest(op=Op.LIMIT_OP_UPDATE, limit=limit))
            return svc.UpdateLimitResponse(limit=_shown_limit(reply.limit))

        return await self._guard(context, call)

    async def DeleteLimit(self, request: svc.DeleteLimitRequest, context: Context) -> svc.DeleteLimitResponse:
        async def call() -> svc.DeleteLimitResponse:
            change = flow_pb2.ChangeLimitRequest(
                op=Op.LIMIT_OP_DELETE, name=_stored(_name(request.name)), force=request.force
            )
            reply = await self._change(change)
            return svc.DeleteLimitResponse(tasks_released=reply.tasks_released)

        return await self._guard(context, call)

    async def SetKeyWeight(
        self, request: svc.SetKeyWeightRequest, context: Context
    ) -> svc.SetKeyWeightResponse:
        async def call() -> svc.SetKeyWeightResponse:
            if not request.HasField("weight"):
                raise codec.invalid([codec.Violation(field="weight", description="required")])
            violations = rules.weight_violations(request.weight, "weight")
            if violations:
                raise codec.invalid(violations)
            weight = limit_pb2.KeyWeight(key=_stored(request.weight.key), weight=request.weight.weight)
            reply = await self._change(flow_pb2.ChangeLimitRequest(op=Op.LIMIT_OP_SET_WEIGHT, weight=weight))
            return svc.SetKeyWeightResponse(weight=_shown_weight(reply.weight))

        return await self._guard(context, call)

    # --- reads (read) ---------------------------------------------------------------
    async def GetLimit(self, request: svc.GetLimitRequest, context: Context) -> svc.GetLimitResponse:
        async def call() -> svc.GetLimitResponse:
            name = _name(request.name)
            # Another tenant's limit is not found as a missing one is not.
            found = (await self._catalog.fresh()).find(_stored(name))
            if found is None:
                raise errors.not_found("limit", name)
            (limit,) = await self._with_usage([found])
            return svc.GetLimitResponse(limit=limit)

        return await self._guard(context, call)

    async def ListLimits(self, request: svc.ListLimitsRequest, context: Context) -> svc.ListLimitsResponse:
        async def call() -> svc.ListLimitsResponse:
            violations: list[codec.Violation] = []
            size = _page_size(request.page_size, violations)
            after = _after(request.page_token, violations)
            if violations:
                raise codec.invalid(violations)
            own = _own_limits(await self._catalog.fresh())
            within = auth.identity().within
            shown = [lim.name if within is None else _bare(lim.name) for lim in own]
            first = bisect.bisect_right(shown, after) if after else 0
            page = own[first : first + size + 1]
            more = len(page) > size
            page = page[:size]
            out = svc.ListLimitsResponse(limits=await self._with_usage(page))
            if more:
                # The name the listing is ordered by: an operator's listing of every tenant's, qualified.
                out.next_page_token = page_token(page[-1].name if within is None else _bare(page[-1].name))
            return out

        return await self._guard(context, call)

    async def ListKeyWeights(
        self, request: svc.ListKeyWeightsRequest, context: Context
    ) -> svc.ListKeyWeightsResponse:
        async def call() -> svc.ListKeyWeightsResponse:
            within = auth.identity().within
            weights = (await self._catalog.fresh()).weights
            if within is not None:
                weights = tuple(w for w in weights if w.tenant == within)
            return svc.ListKeyWeightsResponse(weights=[_shown_weight(_copy(w)) for w in weights])

        return await self._guard(context, call)
