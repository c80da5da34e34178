"""The store's operations: routes and appliers for logs, queues,
servers and retention, registered by ``ResultStore`` in two lines."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from taskyard.bus.v1 import envelope_pb2, logs_pb2, pools_pb2, queues_pb2
from taskyard.core import contract, rpc
from taskyard.core.clock import Clock, SystemClock
from taskyard.core.config import StoreSettings

from . import bus_requests
from .appliers import Applier, Method
from .retention import DAY_US, Purger
from .writes import logs, queues

if TYPE_CHECKING:
    from .store import ResultStore

K = envelope_pb2


def appliers(settings: StoreSettings) -> list[tuple[Method, Applier]]:
    """The write kinds of these operations, for the group committer."""
    return [
        (contract.STORE_LOGS, logs.make_applier(settings.log_max_lines_per_task)),
        (contract.STORE_QUEUE_OP, queues.make_applier(development=settings.development)),
    ]


class Operations:
    def __init__(self, store: ResultStore, clock: Clock | None = None) -> None:
        self.store = store
        self.settings = store.settings
        self.purger = Purger(
            store.pool,
            clock or SystemClock(),
            retention_days=self.settings.retention_days,
            event_retention_seconds=self.settings.event_retention,
            keep_requests_s=bus_requests.keep_seconds(self.settings.bus_replay_window),
            on_purged=self._forget,
        )

    def _forget(self, ids: list[str]) -> None:
        for tid in ids:
            self.store.cache.invalidate(tid)

    # ------------------------------------------------------------ handlers
    async def write_logs(self, req: logs_pb2.LogBatch) -> logs_pb2.LogBatchReply:
        n = len(req.lines) + len(req.context) + len(req.dropped)
        if n == 0:
            return logs_pb2.LogBatchReply()
        reply: logs_pb2.LogBatchReply = await self.store._submit(contract.STORE_LOGS, req, n)
        return reply

    async def read_logs(self, req: logs_pb2.GetLogsRequest) -> logs_pb2.GetLogsReply:
        max_bytes = max(1, self.settings.max_message_bytes // 2)  # the reply crosses the bus
        return await self.store._read(logs.read_logs(self.store.pool, req, max_bytes=max_bytes))

    async def queue_op(self, req: queues_pb2.QueueOpRequest, request_id: str = "") -> queues_pb2.QueueOpReply:
        """``request_id``: the bus request's message id; a request is carried out once per
        database, whichever store a copy of it reaches (bus_requests.py)."""
        if req.op == queues_pb2.QUEUE_OP_PURGE:
            if req.older_than_us < 0:
                from taskyard.core import errors
                from taskyard.core.errors import FieldViolation

                raise errors.invalid([FieldViolation(field="older_than", description="must not be negative")])
            window = req.older_than_us or int(self.settings.retention_days * DAY_US)
            purged = self.purger.purge(window, request_id=request_id, scope=req.scope)
            count = await self.store._read(_count(purged))
            return queues_pb2.QueueOpReply(count=count.count)
        queues.validate(req, development=self.settings.development)
        reply: queues_pb2.QueueOpReply = await self.store._submit(contract.STORE_QUEUE_OP, req, 1, request_id)
        # A retry (FAILURE -> QUEUED) has nothing to forget: no store caches a
        # FAILURE record (cache.py), so none answers for a retried task from memory.
        if req.op in (queues_pb2.QUEUE_OP_PAUSE, queues_pb2.QUEUE_OP_RESUME):
            # The counts are aggregates over tasks: read after the commit, on the
            # pool, never inside the single writer's transaction.
            reply = await self.store._read(queues.queue_info(self.store.pool, reply))
        return reply

    async def status(self, req: queues_pb2.QueueStatusRequest) -> queues_pb2.QueueStatusReply:
        return await self.store._read(queues.read_status(self.store.pool, req))

    async def servers(self, req: pools_pb2.ServersRequest) -> pools_pb2.ServersReply:
        return await self.store._read(queues.read_servers(self.store.pool, req))

    def routes(self) -> list[rpc.Route[Any]]:
        return [
            rpc.serve_call(contract.STORE_LOGS, self.write_logs),
            rpc.serve_call(contract.STORE_GET_LOGS, self.read_logs),
            rpc.serve(contract.STORE_QUEUE_OP, bus_requests.once(self.queue_op)),
            rpc.serve_call(contract.STORE_QUEUE_STATUS, self.status),
            rpc.serve_call(contract.STORE_SERVERS, self.servers),
        ]


async def _count(coro: Awaitable[int]) -> queues_pb2.QueueOpReply:
    return queues_pb2.QueueOpReply(count=await coro)
