"""The gateway's gRPC server metrics, named as go-grpc-prometheus names them
(``grpc_server_started_total``, ``grpc_server_handled_total{grpc_code}``,
``grpc_server_handling_seconds``), so existing dashboards and alerts apply; the
calls handled and the tasks submitted by tenant (a bounded label: core/metrics.py)."""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from prometheus_client import Counter, Histogram

from taskyard.core import metrics
from taskyard.core.metrics import TenantLabels
from taskyard.gateway import auth
from taskyard.gateway.admission import Handler, Interceptor, behavior_of, handler_like

# TASKYARD_METRICS_TENANTS' default (core/config.py).
DEFAULT_TENANTS = 20

_LABELS = ["grpc_type", "grpc_service", "grpc_method"]
STARTED = Counter("grpc_server_started", "RPCs started on the server.", _LABELS)
HANDLED = Counter(
    "grpc_server_handled",
    "RPCs completed on the server, by status code and the caller's tenant.",
    [*_LABELS, "grpc_code", "tenant"],
)
SUBMITTED = Counter(
    "taskyard_gateway_tasks_submitted",
    "Tasks a submission created (SubmitTask, BatchSubmitTasks, RunTask), by tenant.",
    ["tenant"],
)
SECONDS = Histogram(
    "grpc_server_handling_seconds",
    "Time to the RPC's end (a stream's whole life).",
    _LABELS,
    buckets=metrics.RPC_SECONDS,
)


def _type(handler: Handler) -> str:
    if handler.request_streaming and handler.response_streaming:
        return "bidi_stream"
    if handler.request_streaming:
        return "client_stream"
    return "server_stream" if handler.response_streaming else "unary"


def _code(context: grpc.aio.ServicerContext[Any, Any], failed: bool) -> str:
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code.name
    return "UNKNOWN" if failed else "OK"


def measured(handler: Handler, method: str, tenants: TenantLabels | None = None) -> Handler:
    """``handler`` counted and timed under ``method`` (``/package.Service/Method``);
    its end under its caller's tenant (as the call's identity says once it ends:
    a call refused before its identity was known counts as an operator's)."""
    labels_of = tenants or TenantLabels(DEFAULT_TENANTS)
    service, _, name = method.lstrip("/").rpartition("/")
    labels = (_type(handler), service, name)
    started, seconds = STARTED.labels(*labels), SECONDS.labels(*labels)
    behavior = behavior_of(handler)

    def done(context: grpc.aio.ServicerContext[Any, Any], began: float, failed: bool) -> None:
        seconds.observe(time.perf_counter() - began)
        HANDLED.labels(*labels, _code(context, failed), labels_of.of(auth.identity().home)).inc()

    if inspect.isasyncgenfunction(behavior):

        async def stream(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
            started.inc()
            began, failed = time.perf_counter(), True
            try:
                async for item in behavior(request, context):
                    yield item
                failed = False
            finally:
                done(context, began, failed)

        return handler_like(handler, stream)

    async def call(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        started.inc()
        began, failed = time.perf_counter(), True
        try:
            reply = await behavior(request, context)
            failed = False
            return reply
        finally:
            done(context, began, failed)

    return handler_like(handler, call)


class CallMetrics(Interceptor):
    """Every call counted and timed (outermost, so refused calls count too)."""

    def __init__(self, tenants: TenantLabels | None = None) -> None:
        self._wrapped: dict[str, tuple[Handler, Handler]] = {}
        self.tenants = tenants or TenantLabels(DEFAULT_TENANTS)

    def submitted(self, tenant: str, count: int) -> None:
        """``count`` tasks a submission of ``tenant`` created."""
        SUBMITTED.labels(self.tenants.of(tenant)).inc(count)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler]],
        details: grpc.HandlerCallDetails,
    ) -> Handler:
        handler = await continuation(details)
        if handler is None:
            return handler
        method = details.method
        cached = self._wrapped.get(method)
        if cached is None or cached[0] is not handler:
            cached = (handler, measured(handler, method, self.tenants))
            self._wrapped[method] = cached
        return cached[1]
