"""``taskyard.v1.FailureService``: dead letters by group, their redrive and purge.

Thin, as QueueService: each RPC checks its input (core/failure_filters.py:
INVALID_ARGUMENT with the fields named, nothing sent), makes one store request
(bus failures.proto) and answers with the store's response. The store decides
what only it knows (an unknown group is NOT_FOUND, a task that is not a dead
letter FAILED_PRECONDITION, a filter matching too many); the leading scheduler
runs an accepted redrive (scheduler/redrives.py). A redrive records who asked:
the name of the token the gateway's authenticator accepted for the call
(auth.caller_name).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc

from taskyard.bus.v1 import failures_pb2 as bus
from taskyard.core import contract, rpc, tenants
from taskyard.core import failure_filters as rules
from taskyard.gateway import auth, status
from taskyard.v1 import failure_service_pb2 as fs
from taskyard.v1 import failure_service_pb2_grpc

log = logging.getLogger(__name__)

R = TypeVar("R")
Context = grpc.aio.ServicerContext[Any, Any]
Op = bus.RedriveOp

FAILURE_SERVICE_NAME = fs.DESCRIPTOR.services_by_name["FailureService"].full_name


def _own(checked: fs.FailureFilter) -> fs.FailureFilter:
    """``checked`` with its queue as stored for the caller's tenant (core/tenants.py)."""
    tenant = auth.identity().home
    if tenant and checked.queue:
        checked.queue = tenants.qualify(tenant, checked.queue)
    return checked


def _split(queue: str) -> tuple[str, str]:
    """(tenant, name) of a stored queue name: the name as its tenant knows it."""
    return tenants.split(queue)


def _shown_redrive(redrive: fs.Redrive) -> fs.Redrive:
    """``redrive`` with its tenant, its filter's queue as that tenant knows it."""
    within = auth.identity().within
    if within is not None:
        redrive.tenant = within
    owner, bare = _split(redrive.filter.queue)
    redrive.filter.queue = bare
    if owner:
        redrive.tenant = owner
    return redrive


def _paged(page_size: int, page_token: str) -> None:
    out: list[rules.Violation] = []
    rules.check_page(out, page_size, page_token)
    rules.raise_if(out)


class FailureService(failure_service_pb2_grpc.FailureServiceServicer):
    def __init__(self, *, store: rpc.Caller, caller: Callable[[], str]) -> None:
        self._store = store
        self._caller = caller

    @classmethod
    def register(
        cls, server: grpc.aio.Server, *, store: rpc.Caller, caller: Callable[[], str]
    ) -> FailureService:
        service = cls(store=store, caller=caller)
        failure_service_pb2_grpc.add_FailureServiceServicer_to_server(service, server)
        return service

    async def _guard(self, context: Context, call: Callable[[], Awaitable[R]]) -> R:
        return await status.guard(context, call, log, "failure request failed")

    # --- reads (read) --------------------------------------------------------------
    async def ListFailureGroups(
        self, request: fs.ListFailureGroupsRequest, context: Context
    ) -> fs.ListFailureGroupsResponse:
        async def call() -> fs.ListFailureGroupsResponse:
            checked = rules.check_filter(request.filter, groups=True)
            _paged(request.page_size, request.page_token)
            inner = fs.ListFailureGroupsRequest(
                filter=_own(checked), page_size=request.page_size, page_token=request.page_token
            )
            reply = await self._store.call(
                contract.STORE_FAILURE_GROUPS, bus.FailureGroupsRequest(request=inner)
            )
            for group in reply.response.groups:
                group.tenant, group.queue = _split(group.queue)
            return reply.response

        return await self._guard(context, call)

    async def ListFailures(
        self, request: fs.ListFailuresRequest, context: Context
    ) -> fs.ListFailuresResponse:
        async def call() -> fs.ListFailuresResponse:
            checked = rules.check_filter(request.filter)
            _paged(request.page_size, request.page_token)
            inner = fs.ListFailuresRequest(
                filter=_own(checked), page_size=request.page_size, page_token=request.page_token
            )
            reply = await self._store.call(contract.STORE_DEAD_LETTERS, bus.DeadLettersRequest(request=inner))
            for letter in reply.response.failures:
                letter.tenant, letter.queue = _split(letter.queue)
            return reply.response

        return await self._guard(context, call)

    async def GetRedrive(self, request: fs.GetRedriveRequest, context: Context) -> fs.GetRedriveResponse:
        async def call() -> fs.GetRedriveResponse:
            return fs.GetRedriveResponse(redrive=await self._control(Op.REDRIVE_OP_GET, request.id))

        return await self._guard(context, call)

    async def ListRedrives(
        self, request: fs.ListRedrivesRequest, context: Context
    ) -> fs.ListRedrivesResponse:
        async def call() -> fs.ListRedrivesResponse:
            _paged(request.page_size, request.page_token)
            reply = await self._store.call(
                contract.STORE_REDRIVE_LIST, bus.RedriveListRequest(redrives=request)
            )
            for redrive in reply.redrives.redrives:
                _shown_redrive(redrive)
            return reply.redrives

        return await self._guard(context, call)

    async def ListRedriveItems(
        self, request: fs.ListRedriveItemsRequest, context: Context
    ) -> fs.ListRedriveItemsResponse:
        async def call() -> fs.ListRedriveItemsResponse:
            rules.redrive_id(request.id)
            _paged(request.page_size, request.page_token)
            reply = await self._store.call(contract.STORE_REDRIVE_LIST, bus.RedriveListRequest(items=request))
            return reply.items

        return await self._guard(context, call)

    # --- changes (admin) -------------------------------------------------------------
    async def Redrive(self, request: fs.RedriveRequest, context: Context) -> fs.RedriveResponse:
        async def call() -> fs.RedriveResponse:
            out: list[rules.Violation] = []
            checked = rules.filter_violations(out, request.filter)
            rules.check_rate(out, request.rate)
            rules.check_note(out, request.note)
            rules.raise_if(out)
            inner = fs.RedriveRequest(
                filter=_own(checked), rate=request.rate, dry_run=request.dry_run, note=request.note
            )
            create = bus.CreateRedriveRequest(request=inner, created_by=self._caller())
            reply = await self._store.call(contract.STORE_REDRIVE_CREATE, create)
            if reply.response.HasField("redrive"):
                _shown_redrive(reply.response.redrive)
            return reply.response

        return await self._guard(context, call)

    async def _control(self, op: bus.RedriveOp, raw_id: str) -> fs.Redrive:
        request = bus.RedriveControlRequest(op=op, id=rules.redrive_id(raw_id))
        reply = await self._store.call(contract.STORE_REDRIVE_CONTROL, request)
        return _shown_redrive(reply.redrive)

    async def PauseRedrive(
        self, request: fs.PauseRedriveRequest, context: Context
    ) -> fs.PauseRedriveResponse:
        async def call() -> fs.PauseRedriveResponse:
            return fs.PauseRedriveResponse(redrive=await self._control(Op.REDRIVE_OP_PAUSE, request.id))

        return await self._guard(context, call)

    async def ResumeRedrive(
        self, request: fs.ResumeRedriveRequest, context: Context
    ) -> fs.ResumeRedriveResponse:
        async def call() -> fs.ResumeRedriveResponse:
            return fs.ResumeRedriveResponse(redrive=await self._control(Op.REDRIVE_OP_RESUME, request.id))

        return await self._guard(context, call)

    async def CancelRedrive(
        self, request: fs.CancelRedriveRequest, context: Context
    ) -> fs.CancelRedriveResponse:
        async def call() -> fs.CancelRedriveResponse:
            return fs.CancelRedriveResponse(redrive=await self._control(Op.REDRIVE_OP_CANCEL, request.id))

        return await self._guard(context, call)

    async def PurgeDeadLetters(
        self, request: fs.PurgeDeadLettersRequest, context: Context
    ) -> fs.PurgeDeadLettersResponse:
        async def call() -> fs.PurgeDeadLettersResponse:
            inner = fs.PurgeDeadLettersRequest(
                filter=_own(rules.check_filter(request.filter)), dry_run=request.dry_run
            )
            reply = await self._store.call(
                contract.STORE_PURGE_DEAD_LETTERS, bus.PurgeDeadLettersRequest(request=inner)
            )
            return reply.response

        return await self._guard(context, call)
