"""``taskyard.worker.v1.WorkerService``: workers in any language, at the gRPC edge.

One ``Work`` stream per worker. Its first message is a Hello (what it runs, how
many at once); the gateway answers Welcome and from then on the stream is a pool
on the bus (remote_pool.py). The stream's end is the pool's: a worker that
drained and half-closed leaves nothing behind; one whose stream broke leaves its
attempts to the store's recovery, as a pool that died does. A gateway that stops
drains every stream's pool and ends each stream once its pool holds nothing
(UNAVAILABLE, ``GATEWAY_STOPPING``: the worker connects again, to another gateway),
so an idle worker does not hold the stop and a busy one finishes what it runs within
the grace. The `work` scope is required (auth.py); a tenant's token runs only its
tenant's tasks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable

import grpc

from taskyard.core import errors, limit_declarations, limits, validation
from taskyard.core.config import GatewaySettings
from taskyard.gateway import auth, status
from taskyard.gateway.remote_pool import RemotePool
from taskyard.gateway.status import Context
from taskyard.v1 import limit_pb2
from taskyard.worker.v1 import worker_service_pb2 as wpb
from taskyard.worker.v1 import worker_service_pb2_grpc as wgrpc

log = logging.getLogger(__name__)

WORKER_SERVICE_NAME = wpb.DESCRIPTOR.services_by_name["WorkerService"].full_name
# Seconds a new stream has to send its Hello.
HELLO_TIMEOUT = 10.0
MAX_SLOTS = 256
MAX_TASKS = 1000

GATEWAY_STOPPING = errors.gateway_stopping(
    "the attempts it gave this worker have ended: connect again, to another gateway"
)


def hello_violations(hello: wpb.Hello) -> list[validation.Violation]:
    out: list[validation.Violation] = []
    if not 1 <= hello.slots <= MAX_SLOTS:
        out.append(
            validation.Violation(
                field="hello.slots", description=f"must be 1..{MAX_SLOTS}, got {hello.slots}"
            )
        )
    if not 1 <= len(hello.tasks) <= MAX_TASKS:
        out.append(
            validation.Violation(
                field="hello.tasks", description=f"must name 1..{MAX_TASKS} functions, got {len(hello.tasks)}"
            )
        )
    validation.check_text(out, "hello.worker_name", hello.worker_name, max_chars=200)
    validation.check_text(out, "hello.sdk", hello.sdk, max_chars=100)
    seen: set[str] = set()
    for i, decl in enumerate(hello.tasks[:MAX_TASKS]):
        path = f"hello.tasks[{i}]"
        validation.check_name(out, f"{path}.name", decl.name, None)
        if decl.name in seen:
            out.append(
                validation.Violation(field=f"{path}.name", description=f"{decl.name!r} is named twice")
            )
        seen.add(decl.name)
        if decl.HasField("timeout") and decl.timeout.ToMilliseconds() <= 0:
            out.append(validation.Violation(field=f"{path}.timeout", description="must be positive"))
        if decl.HasField("max_retries") and decl.max_retries < 0:
            out.append(validation.Violation(field=f"{path}.max_retries", description="must be >= 0"))
        if decl.concurrency < 0:
            out.append(validation.Violation(field=f"{path}.concurrency", description="must be >= 0"))
        if decl.limit_key and not decl.limit_key.isidentifier():
            out.append(
                validation.Violation(field=f"{path}.limit_key", description="must name a keyword argument")
            )
        try:
            declared = declared_limits_of(decl)
        except ValueError as exc:
            out.append(validation.Violation(field=f"{path}.rate_limit", description=str(exc)))
            continue
        for limit in declared:
            for v in limits.limit_violations(limit, path):
                out.append(validation.Violation(field=v.field, description=v.description))
    return out


def declared_limits_of(decl: wpb.TaskDeclaration) -> list[limit_pb2.Limit]:
    """The limits a worker's function declares, as a Python ``@task(...)`` would."""
    return limit_declarations.declared_limits(
        task_name=decl.name,
        rate=decl.rate_limit,
        concurrency=max(0, decl.concurrency),
        key_argument=decl.limit_key if decl.rate_limit or decl.concurrency else "",
    )


class WorkerService(wgrpc.WorkerServiceServicer):
    def __init__(self, settings: GatewaySettings) -> None:
        self._settings = settings
        # The pools of the streams open now (operations and tests).
        self.pools: dict[str, RemotePool] = {}
        self._stopping = asyncio.Event()

    def close(self) -> None:
        """The gateway stops: every stream ends once its pool, drained, holds nothing."""
        self._stopping.set()

    @classmethod
    def register(cls, server: grpc.aio.Server, settings: GatewaySettings) -> WorkerService:
        service = cls(settings)
        wgrpc.add_WorkerServiceServicer_to_server(service, server)
        return service

    async def Work(
        self, request_iterator: AsyncIterator[wpb.WorkRequest], context: Context
    ) -> AsyncIterator[wpb.WorkResponse]:
        requests = aiter(request_iterator)
        try:
            first = await asyncio.wait_for(anext(requests), HELLO_TIMEOUT)
        except (TimeoutError, StopAsyncIteration):
            await status.abort(context, errors.invalid([], f"no Hello within {HELLO_TIMEOUT:g} s"))
        if first.WhichOneof("message") != "hello":
            await status.abort(context, errors.invalid([], "the first message on the stream must be a Hello"))
        violations = hello_violations(first.hello)
        if violations:
            await status.abort(context, errors.invalid(list(violations)))
        if len(self.pools) >= self._settings.grpc_max_workers:
            await status.abort(
                context,
                errors.TaskyardError(
                    errors.Code.RESOURCE_EXHAUSTED,
                    "TOO_MANY_WORKERS",
                    f"this gateway serves at most {self._settings.grpc_max_workers} worker streams "
                    "(TASKYARD_GRPC_MAX_WORKERS): connect to another gateway",
                ),
            )
        outbox: asyncio.Queue[wpb.WorkResponse | None] = asyncio.Queue()
        ended: list[errors.TaskyardError] = []

        def end(error: errors.TaskyardError) -> None:
            if not ended:
                ended.append(error)
                outbox.put_nowait(None)

        def dead(reason: str) -> None:
            end(
                errors.TaskyardError(
                    errors.Code.ABORTED, "WORKER_LOST", f"the worker's stream ended: {reason}"
                )
            )

        pool = RemotePool(
            self._settings,
            first.hello,
            tenant=auth.identity().home,
            send=outbox.put_nowait,
            on_dead=dead,
            declared=[limit for decl in first.hello.tasks for limit in declared_limits_of(decl)],
        )
        self.pools[pool.pool_id] = pool
        helpers: list[asyncio.Task[None]] = []
        try:
            await pool.start()
            log.info(
                "worker %s (%s, %s) connected: %d slots, %d functions",
                pool.pool_id,
                first.hello.worker_name or "unnamed",
                first.hello.sdk or "?",
                first.hello.slots,
                len(first.hello.tasks),
            )
            welcome = wpb.Welcome(
                worker_id=pool.pool_id,
                # What the gRPC port takes, which is less than the bus's limit by default.
                max_message_bytes=min(
                    self._settings.grpc_max_message_bytes, self._settings.max_message_bytes
                ),
                max_result_bytes=self._settings.max_result_bytes,
            )
            welcome.heartbeat_interval.FromMilliseconds(int(pool.presence.heartbeat_interval * 1000))
            yield wpb.WorkResponse(welcome=welcome)
            helpers.append(
                asyncio.create_task(self._read(requests, pool, outbox), name=f"{pool.pool_id}-read")
            )
            helpers.append(asyncio.create_task(self._end_at_stop(pool, end), name=f"{pool.pool_id}-stop"))
            while (msg := await outbox.get()) is not None:
                yield msg
            if ended:
                await status.abort(context, ended[0])
        finally:
            for helper in helpers:
                helper.cancel()
            await asyncio.gather(*helpers, return_exceptions=True)
            self.pools.pop(pool.pool_id, None)
            await pool.close()
            log.info("worker %s disconnected", pool.pool_id)

    async def _end_at_stop(self, pool: RemotePool, end: Callable[[errors.TaskyardError], None]) -> None:
        await self._stopping.wait()
        pool.drain()
        await pool.drained()
        end(GATEWAY_STOPPING)

    async def _read(
        self,
        requests: AsyncIterator[wpb.WorkRequest],
        pool: RemotePool,
        outbox: asyncio.Queue[wpb.WorkResponse | None],
    ) -> None:
        try:
            async for req in requests:
                pool.on_heartbeat()  # any word from the worker shows it alive
                kind = req.WhichOneof("message")
                if kind == "reports":
                    pool.on_reports(req.reports)
                elif kind == "started":
                    pool.on_started(req.started.ref)
                elif kind == "outcome":
                    pool.on_outcome(req.outcome)
                elif kind == "logs":
                    pool.on_logs(req.logs)
                elif kind == "progress":
                    pool.on_progress(req.progress)
                elif kind == "drain":
                    pool.drain()
                # A heartbeat needs nothing more; a second Hello, or a message this gateway
                # does not know, is ignored (a newer worker may send what an older gateway
                # does not read).
        except (grpc.aio.AioRpcError, asyncio.CancelledError):
            pass
        except Exception:
            log.exception("worker %s: reading its stream failed", pool.pool_id)
        # Half-closed (after a drain, nothing held) or broken: the stream ends either way.
        outbox.put_nowait(None)
