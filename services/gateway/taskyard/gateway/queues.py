"""QueueService: pause/resume/clear/retry/purge, queue status and the servers registry.

Thin: each RPC validates its input, makes one store request
(``KIND_STORE_QUEUE_OP`` / ``_QUEUE_STATUS`` / ``_SERVERS``, see bus queues.proto and pools.proto)
and maps the reply. Errors leave as ``google.rpc.Status`` like TaskService's.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message

from taskyard.bus.v1 import pools_pb2, queues_pb2
from taskyard.core import codec, contract, names, rpc, tenants, validation
from taskyard.gateway import auth, status
from taskyard.v1 import queue_service_pb2 as qs
from taskyard.v1 import queue_service_pb2_grpc

log = logging.getLogger(__name__)

M = TypeVar("M", bound=Message)
R = TypeVar("R")
Context = grpc.aio.ServicerContext[Any, Any]
RETRY_MAX = 10_000
MAX_IDS = 10_000


def _queue(raw: str, field: str = "queue") -> str:
    """A queue's name as given (core/names.py's rules; empty: the default queue, or
    every queue where the call says so)."""
    return validation.chosen_name(raw, field, required=False)


def _own(name: str, *, default: bool = False) -> str:
    """The stored name of the caller's queue ``name`` (qualified for a tenant:
    core/tenants.py); with ``default`` an empty name is the default queue, else
    it stays empty (every queue of the caller's)."""
    tenant = auth.identity().home
    if not tenant or not (name or default):
        return name
    return tenants.qualify(tenant, name or names.DEFAULT_QUEUE)


def _shown(info: qs.QueueInfo) -> qs.QueueInfo:
    """``info`` named as its tenant knows its queue, with that tenant (an operator
    over every tenant reads both: the store names it qualified)."""
    info.tenant, info.name = tenants.split(info.name)
    return info


def _positive_ms(request: Message, field: str) -> int:
    """The optional Duration ``field`` of ``request`` in milliseconds (0 when unset)."""
    if not request.HasField(field):
        return 0
    ms = codec.duration_ms(getattr(request, field))
    if ms is None or ms <= 0:
        raise codec.invalid([codec.Violation(field=field, description="must be a positive duration")])
    return ms


QUEUE_SERVICE_NAME = qs.DESCRIPTOR.services_by_name["QueueService"].full_name


class QueueService(queue_service_pb2_grpc.QueueServiceServicer):
    def __init__(self, store: rpc.Caller) -> None:
        self._store = store

    @classmethod
    def register(cls, store: rpc.Caller, server: grpc.aio.Server) -> QueueService:
        service = cls(store)
        queue_service_pb2_grpc.add_QueueServiceServicer_to_server(service, server)
        return service

    async def _guard(self, context: Context, call: Callable[[], Awaitable[R]]) -> R:
        return await status.guard(context, call, log, "queue request failed")

    async def _op(self, req: queues_pb2.QueueOpRequest) -> queues_pb2.QueueOpReply:
        return await self._store.call(contract.STORE_QUEUE_OP, req)

    async def _queue_op(
        self,
        context: Context,
        op: queues_pb2.QueueOp,
        queue: str,
        respond: Callable[[queues_pb2.QueueOpReply], R],
    ) -> R:
        """One operation on one queue (pause, resume, clear), its reply mapped by ``respond``."""

        async def run() -> R:
            named = op in (queues_pb2.QUEUE_OP_PAUSE, queues_pb2.QUEUE_OP_RESUME)
            request = queues_pb2.QueueOpRequest(op=op, queue=_own(_queue(queue), default=named))
            return respond(await self._op(request))

        return await self._guard(context, run)

    async def PauseQueue(self, request: qs.PauseQueueRequest, context: Context) -> qs.PauseQueueResponse:
        return await self._queue_op(
            context,
            queues_pb2.QUEUE_OP_PAUSE,
            request.queue,
            lambda r: qs.PauseQueueResponse(queue=_shown(r.queue)),
        )

    async def ResumeQueue(self, request: qs.ResumeQueueRequest, context: Context) -> qs.ResumeQueueResponse:
        return await self._queue_op(
            context,
            queues_pb2.QUEUE_OP_RESUME,
            request.queue,
            lambda r: qs.ResumeQueueResponse(queue=_shown(r.queue)),
        )

    async def ClearQueue(self, request: qs.ClearQueueRequest, context: Context) -> qs.ClearQueueResponse:
        return await self._queue_op(
            context,
            queues_pb2.QUEUE_OP_CLEAR,
            request.queue,
            lambda r: qs.ClearQueueResponse(cleared=r.count),
        )

    async def RetryTasks(self, request: qs.RetryTasksRequest, context: Context) -> qs.RetryTasksResponse:
        async def run() -> qs.RetryTasksResponse:
            violations: list[codec.Violation] = []
            if request.limit < 0 or request.limit > RETRY_MAX:
                violations.append(
                    codec.Violation(field="limit", description=f"must be 0..{RETRY_MAX} (0 = 1000)")
                )
            if len(request.ids) > MAX_IDS:
                violations.append(codec.Violation(field="ids", description=f"at most {MAX_IDS} ids"))
            ids: list[str] = []
            for i, raw in enumerate(request.ids[:MAX_IDS]):
                canonical = codec.canonical_uuid(raw)
                if canonical is None:
                    violations.append(
                        codec.Violation(
                            field=f"ids[{i}]", description=f"must be a task id (UUID), got {codec.quote(raw)}"
                        )
                    )
                else:
                    ids.append(canonical)
            if violations:
                raise codec.invalid(violations)
            reply = await self._op(
                queues_pb2.QueueOpRequest(
                    op=queues_pb2.QUEUE_OP_RETRY,
                    queue=_own(_queue(request.queue)),
                    name=request.name.strip(),
                    ids=ids,
                    limit=request.limit,
                )
            )
            return qs.RetryTasksResponse(ids=reply.ids)

        return await self._guard(context, run)

    async def PurgeTasks(self, request: qs.PurgeTasksRequest, context: Context) -> qs.PurgeTasksResponse:
        async def run() -> qs.PurgeTasksResponse:
            older_us = _positive_ms(request, "older_than") * 1000
            reply = await self._op(
                queues_pb2.QueueOpRequest(op=queues_pb2.QUEUE_OP_PURGE, older_than_us=older_us)
            )
            return qs.PurgeTasksResponse(purged=reply.count)

        return await self._guard(context, run)

    async def GetQueueStatus(
        self, request: qs.GetQueueStatusRequest, context: Context
    ) -> qs.GetQueueStatusResponse:
        async def run() -> qs.GetQueueStatusResponse:
            reply = await self._store.call(contract.STORE_QUEUE_STATUS, queues_pb2.QueueStatusRequest())
            return qs.GetQueueStatusResponse(
                queues=[_shown(q) for q in reply.queues],
                servers=reply.servers,
                capacity=reply.capacity,
                running_tasks=reply.running_tasks,
                late_completions=reply.late_completions,
            )

        return await self._guard(context, run)

    async def ListServers(self, request: qs.ListServersRequest, context: Context) -> qs.ListServersResponse:
        async def run() -> qs.ListServersResponse:
            age_ms = _positive_ms(request, "max_age")
            reply = await self._store.call(
                contract.STORE_SERVERS, pools_pb2.ServersRequest(max_age_ms=age_ms)
            )
            return qs.ListServersResponse(servers=reply.servers)

        return await self._guard(context, run)
