"""The gateway's metrics by tenant: a bounded label, the first tenants seen by name,
the rest "other", the default tenant "default"."""

from __future__ import annotations

from typing import Any

import grpc
from prometheus_client import REGISTRY

from taskyard.core.config import Settings
from taskyard.core.metrics import TenantLabels
from taskyard.gateway import auth
from taskyard.gateway.metrics import CallMetrics

METHOD = "/taskyard.v1.TaskService/GetTask"


class _Context:
    def code(self) -> None:
        return None


class _Details:
    def __init__(self, method: str) -> None:
        self.method = method
        self.invocation_metadata = ()


def _handled(tenant: str) -> float:
    labels = {
        "grpc_type": "unary",
        "grpc_service": "taskyard.v1.TaskService",
        "grpc_method": "GetTask",
        "grpc_code": "OK",
        "tenant": tenant,
    }
    return REGISTRY.get_sample_value("grpc_server_handled_total", labels) or 0.0


def _submitted(tenant: str) -> float:
    return REGISTRY.get_sample_value("taskyard_gateway_tasks_submitted_total", {"tenant": tenant}) or 0.0


async def test_calls_and_submissions_count_by_a_bounded_tenant_label() -> None:
    assert Settings().metrics_tenants == 20
    calls = CallMetrics(TenantLabels(2))

    async def get_task(request: Any, context: Any) -> str:
        # As the Tenancy interceptor does inside the metrics' wrapper.
        auth.set_identity(request)
        return "ok"

    async def served(details: Any) -> Any:
        return grpc.unary_unary_rpc_method_handler(get_task)

    handler: Any = await calls.intercept_service(served, _Details(METHOD))  # type: ignore[arg-type]
    callers = [
        auth.Identity(name="a", tenant="acme"),
        auth.Identity(name="b", tenant="beta"),
        auth.Identity(name="g", tenant="gamma"),  # the third tenant seen: "other"
        auth.Identity(name="ops"),  # an operator's: the default tenant's
        auth.Identity(name="a2", tenant="acme"),
    ]
    before = {t: _handled(t) for t in ("acme", "beta", "gamma", "other", "default")}
    for who in callers:
        assert await handler.unary_unary(who, _Context()) == "ok"
    after = {t: _handled(t) - before[t] for t in before}
    assert after == {"acme": 2, "beta": 1, "gamma": 0, "other": 1, "default": 1}
    start = {t: _submitted(t) for t in ("acme", "other", "default")}
    calls.submitted("acme", 3)
    calls.submitted("delta", 2)
    calls.submitted("", 1)
    assert {t: _submitted(t) - start[t] for t in start} == {"acme": 3, "other": 2, "default": 1}
