"""The Python client's tenants: ``client.tenants`` (TenantService requests and the tenants
read back), the ``tenant=`` option that sends ``taskyard-tenant`` on every call (checked on
a real gRPC server), a task's and an event's tenant, and the tenant's wait reasons."""

from __future__ import annotations

import asyncio
import datetime
import inspect
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest

from taskyard.client import (
    AsyncClient,
    Client,
    Endpoint,
    Event,
    Explanation,
    Rate,
    TaskInfo,
    TenantInfo,
    TenantState,
)
from taskyard.client._tenants import AsyncTenants, Tenants, definition
from taskyard.v1 import event_service_pb2, limit_pb2, task_pb2, task_service_pb2
from taskyard.v1 import tenant_service_pb2 as ts

ACME = ts.Tenant(name="acme", state=ts.TENANT_STATE_ACTIVE, weight=2, description="the acme team")


class Recorder:
    """A client's ``_call``: keeps each request and answers with the next canned reply."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.requests: list[Any] = []

    def __call__(self, method: Callable[..., Any], request: Any) -> Any:
        self.requests.append(request)
        return self.replies.pop(0)


def _tenants(recorder: Recorder) -> Tenants:
    return Tenants(grpc.insecure_channel("127.0.0.1:1"), recorder)


def test_create_sends_the_quota_weight_and_description_and_reads_the_tenant_back() -> None:
    stored = ts.Tenant()
    stored.CopyFrom(ACME)
    stored.quota.max_concurrency = 50
    stored.quota.rate.CopyFrom(limit_pb2.RateLimit(units=100, burst=20))
    stored.quota.rate.period.FromSeconds(1)
    stored.created_at.FromSeconds(1_800_000_000)
    rec = Recorder(ts.CreateTenantResponse(tenant=stored))

    info = _tenants(rec).create(
        "acme",
        max_concurrency=50,
        rate=Rate(units=100, period=datetime.timedelta(seconds=1), burst=20),
        weight=2,
        description="the acme team",
    )
    (sent,) = rec.requests
    assert isinstance(sent, ts.CreateTenantRequest)
    t = sent.tenant
    assert (t.name, t.weight, t.description, t.quota.max_concurrency) == ("acme", 2, "the acme team", 50)
    assert (t.quota.rate.units, t.quota.rate.burst, t.quota.rate.period.ToMilliseconds()) == (100, 20, 1000)
    assert info == TenantInfo(
        name="acme",
        state=TenantState.ACTIVE,
        max_concurrency=50,
        rate=Rate(units=100, period=datetime.timedelta(seconds=1), burst=20),
        weight=2,
        description="the acme team",
        created_at=datetime.datetime.fromtimestamp(1_800_000_000, tz=datetime.UTC),
        updated_at=None,
        suspended_at=None,
    )
    assert not info.suspended


def test_a_tenant_without_a_quota_has_no_bound() -> None:
    t = definition("acme")
    assert (t.quota.max_concurrency, t.quota.HasField("rate"), t.weight, t.description) == (0, False, 0, "")
    info = TenantInfo.from_proto(ts.Tenant(name="acme"))
    assert (info.max_concurrency, info.rate, info.state) == (0, None, TenantState.UNSPECIFIED)


@pytest.mark.parametrize("rate", [100, "100/s"])
def test_a_rate_without_its_period_is_refused_before_any_call(rate: Any) -> None:
    rec = Recorder()
    with pytest.raises(TypeError, match=r"rate= takes a Rate\(units=..., period=...\)"):
        _tenants(rec).create("acme", rate=rate)
    assert rec.requests == []


def test_get_update_suspend_and_resume_send_what_was_asked() -> None:
    suspended = ts.Tenant(name="acme", state=ts.TENANT_STATE_SUSPENDED)
    suspended.suspended_at.FromSeconds(1_800_000_100)
    rec = Recorder(
        ts.GetTenantResponse(tenant=ACME),
        ts.UpdateTenantResponse(tenant=ACME),
        ts.SuspendTenantResponse(tenant=suspended),
        ts.ResumeTenantResponse(tenant=ACME),
    )
    tenants = _tenants(rec)
    assert tenants.get("acme").description == "the acme team"
    assert rec.requests[0] == ts.GetTenantRequest(name="acme")
    tenants.update("acme", max_concurrency=5)
    assert isinstance(rec.requests[1], ts.UpdateTenantRequest)
    # The whole definition: a weight and description left out are sent as their defaults.
    assert (rec.requests[1].tenant.quota.max_concurrency, rec.requests[1].tenant.weight) == (5, 0)
    gone = tenants.suspend("acme", reason="invoice overdue")
    assert rec.requests[2] == ts.SuspendTenantRequest(name="acme", reason="invoice overdue")
    assert gone.suspended and gone.suspended_at is not None
    assert tenants.resume("acme").state is TenantState.ACTIVE
    assert rec.requests[3] == ts.ResumeTenantRequest(name="acme")


def _page(names: list[str], token: str) -> ts.ListTenantsResponse:
    return ts.ListTenantsResponse(tenants=[ts.Tenant(name=n) for n in names], next_page_token=token)


def test_listing_is_paged_and_iteration_follows_the_page_tokens() -> None:
    rec = Recorder(_page(["a", "b"], "t1"), _page(["a", "b"], "t1"), _page(["c"], ""))
    tenants = _tenants(rec)
    first = tenants.list(page_size=2)
    assert ([t.name for t in first.tenants], first.next_page_token) == (["a", "b"], "t1")
    assert rec.requests[0] == ts.ListTenantsRequest(page_size=2)
    assert [t.name for t in tenants] == ["a", "b", "c"]
    assert [r.page_token for r in rec.requests[1:]] == ["", "t1"]

    async def collect() -> list[str]:
        async def call(method: Callable[..., Any], request: Any) -> Any:
            return arec(method, request)

        arec = Recorder(_page(["a"], "t1"), _page(["b"], ""))
        aio = AsyncTenants(grpc.aio.insecure_channel("127.0.0.1:1"), call)
        return [t.name async for t in aio]

    assert asyncio.run(collect()) == ["a", "b"]


@pytest.mark.parametrize("method", ["create", "get", "list", "update", "suspend", "resume"])
def test_both_tenants_groups_take_the_same_arguments(method: str) -> None:
    blocking, aio = (inspect.signature(getattr(c, method)).parameters for c in (Tenants, AsyncTenants))
    assert blocking == aio
    assert inspect.iscoroutinefunction(getattr(AsyncTenants, method))
    if method in ("create", "update"):
        assert list(blocking) == ["self", "name", "max_concurrency", "rate", "weight", "description"]


def test_a_task_and_an_event_say_their_tenant() -> None:
    assert TaskInfo.from_proto(task_pb2.Task(id="t1", tenant="acme")).tenant == "acme"
    assert TaskInfo.from_proto(task_pb2.Task(id="t2")).tenant == ""
    event = event_service_pb2.Event(kind=event_service_pb2.EVENT_KIND_TENANT, type="tenant.suspended")
    event.tenant = "acme"
    seen = Event.from_proto(event)
    assert (seen.kind, seen.type, seen.tenant) == ("tenant", "tenant.suspended", "acme")


def test_an_explanation_names_the_tenants_wait_reasons() -> None:
    quota = task_service_pb2.ExplainTaskResponse(
        task=task_pb2.Task(id="t1", tenant="acme"),
        reason=task_service_pb2.WAIT_REASON_TENANT_QUOTA,
        gate=limit_pb2.FlowGate(limit="tenant.concurrency", key="acme", holder_ids=["h1"]),
    )
    e = Explanation.from_proto(quota)
    assert e.reason == "TENANT_QUOTA"
    assert e.gate is not None and (e.gate.limit, e.gate.key) == ("tenant.concurrency", "acme")
    held = task_service_pb2.ExplainTaskResponse(reason=task_service_pb2.WAIT_REASON_TENANT_SUSPENDED)
    assert Explanation.from_proto(held).reason == "TENANT_SUSPENDED"


# --- the tenant option on a real server -----------------------------------------------


class _Seen:
    """A gateway stand-in: answers GetTask and WatchEvents, keeping each call's metadata."""

    def __init__(self) -> None:
        self.metadata: list[dict[str, str]] = []

    def get_task(self, request: task_service_pb2.GetTaskRequest, context: grpc.ServicerContext) -> Any:
        self.metadata.append(dict(context.invocation_metadata()))  # type: ignore[arg-type]
        return task_service_pb2.GetTaskResponse(task=task_pb2.Task(id=request.id, tenant="acme"))

    def watch(self, request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        self.metadata.append(dict(context.invocation_metadata()))  # type: ignore[arg-type]
        yield event_service_pb2.WatchEventsResponse(
            events=[event_service_pb2.Event(cursor="c1", type="task.queued", tenant="acme")], cursor="c1"
        )


@pytest.fixture
def gateway() -> Iterator[tuple[str, _Seen]]:
    seen = _Seen()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    tasks = grpc.method_handlers_generic_handler(
        "taskyard.v1.TaskService",
        {
            "GetTask": grpc.unary_unary_rpc_method_handler(
                seen.get_task,
                request_deserializer=task_service_pb2.GetTaskRequest.FromString,
                response_serializer=task_service_pb2.GetTaskResponse.SerializeToString,
            )
        },
    )
    events = grpc.method_handlers_generic_handler(
        "taskyard.v1.EventService",
        {
            "WatchEvents": grpc.unary_stream_rpc_method_handler(
                seen.watch,
                request_deserializer=event_service_pb2.WatchEventsRequest.FromString,
                response_serializer=event_service_pb2.WatchEventsResponse.SerializeToString,
            )
        },
    )
    server.add_generic_rpc_handlers((tasks, events))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}", seen
    finally:
        server.stop(None)


def test_the_tenant_option_goes_on_every_call_of_the_blocking_client(gateway: tuple[str, _Seen]) -> None:
    target, seen = gateway
    with Client(target, tenant="acme", token="") as client:
        assert client.tenant == "acme"
        assert client.get("t1").tenant == "acme"
        watch = client.events.watch()
        assert next(watch).tenant == "acme"
        watch.close()
    with Client(target, token="") as client:
        assert client.tenant is None
        client.get("t2")
    assert [m.get("taskyard-tenant") for m in seen.metadata] == ["acme", "acme", None]


async def test_the_tenant_option_goes_on_every_call_of_the_asyncio_client(gateway: tuple[str, _Seen]) -> None:
    target, seen = gateway
    async with AsyncClient(target, tenant="acme", token="") as client:
        await client.get("t1")
        watch = client.events.watch()
        async for event in watch:
            assert event.tenant == "acme"
            break
        await watch.aclose()
    async with AsyncClient(target, tenant="", token="") as client:
        await client.get("t2")
    assert [m.get("taskyard-tenant") for m in seen.metadata] == ["acme", "acme", None]


def test_a_channel_of_its_own_acts_as_the_tenant_too(gateway: tuple[str, _Seen]) -> None:
    from taskyard.v1 import task_service_pb2_grpc

    target, seen = gateway
    with Endpoint(target, tenant="acme", token="").channel() as channel:
        task_service_pb2_grpc.TaskServiceStub(channel).GetTask(task_service_pb2.GetTaskRequest(id="t1"))
    assert seen.metadata[0]["taskyard-tenant"] == "acme"


@pytest.mark.parametrize(
    ("tenant", "shown"), [("Acme", "'Acme'"), ("a/b", "'a/b'"), ("x" * 65, "'" + "x" * 64 + "…'")]
)
def test_a_bad_tenant_name_is_refused_before_any_call(tenant: str, shown: str) -> None:
    with pytest.raises(ValueError, match="tenant must be 1 to 64 characters of") as refused:
        Client("127.0.0.1:1", tenant=tenant)
    assert str(refused.value).endswith(f"got {shown}")


def test_a_queue_schedule_limit_weight_and_failure_views_say_whose_they_are() -> None:
    from taskyard.client import (
        DeadLetter,
        FailureGroup,
        KeyWeight,
        LimitInfo,
        QueueInfo,
        Redrive,
        ScheduleInfo,
    )
    from taskyard.v1 import failure_service_pb2, queue_service_pb2, schedule_pb2

    acme: list[Any] = [
        QueueInfo.from_proto(queue_service_pb2.QueueInfo(name="reports", tenant="acme")),
        ScheduleInfo.from_proto(schedule_pb2.Schedule(id="s1", name="nightly", tenant="acme")),
        LimitInfo.from_proto(limit_pb2.Limit(name="openai", tenant="acme")),
        KeyWeight.from_proto(limit_pb2.KeyWeight(key="customer:42", weight=3, tenant="acme")),
        FailureGroup.from_proto(failure_service_pb2.FailureGroup(group_id="g1", tenant="acme")),
        DeadLetter.from_proto(failure_service_pb2.DeadLetter(task_id="t1", tenant="acme")),
        Redrive.from_proto(failure_service_pb2.Redrive(id="r1", tenant="acme")),
    ]
    assert [x.tenant for x in acme] == ["acme"] * len(acme)
    assert QueueInfo.from_proto(queue_service_pb2.QueueInfo(name="reports")).tenant == ""
