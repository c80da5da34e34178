"""Flow control at the gateway against fake lanes and a fake store over real NNG:
the limit catalog a submission is checked against (read only when it uses
limits, re-read on a miss), LimitService's usage from the leading scheduler,
and what a refused change never sends."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
import pytest_asyncio
from integration.gateway_fakes import GatewayEnv, gateway_env
from integration.test_gateway_errors import details

from taskyard.bus.v1 import flow_pb2
from taskyard.core import contract
from taskyard.core import limits as rules
from taskyard.v1 import limit_pb2, limit_service_pb2, limit_service_pb2_grpc, task_pb2, task_service_pb2

S = limit_service_pb2
T = task_service_pb2


@pytest_asyncio.fixture
async def gw() -> AsyncIterator[GatewayEnv]:
    async with gateway_env() as env:
        yield env


def limits_stub(gw: GatewayEnv) -> limit_service_pb2_grpc.LimitServiceStub:
    return limit_service_pb2_grpc.LimitServiceStub(gw.channel)


def rate(name: str, text: str = "100/s", *, burst: int = 0) -> limit_pb2.Limit:
    return limit_pb2.Limit(name=name, rate=rules.parse_rate(text, burst=burst))


def store_methods(gw: GatewayEnv) -> list[contract.Method[Any, Any]]:
    return [contract.METHODS[kind] for kind, _ in gw.backend.store_requests]


async def test_a_submission_without_limits_reads_no_catalog(gw: GatewayEnv) -> None:
    await gw.stub.SubmitTask(T.SubmitTaskRequest(task=task_pb2.TaskSpec(name="add")))
    await gw.stub.BatchSubmitTasks(T.BatchSubmitTasksRequest(tasks=[task_pb2.TaskSpec(name="add")] * 3))
    assert contract.STORE_LIMITS not in store_methods(gw)
    assert not any(rec.HasField("flow") for rec in gw.backend.submitted)


async def test_a_limit_created_a_moment_ago_is_accepted(gw: GatewayEnv) -> None:
    spec = task_pb2.TaskSpec(
        name="add", limits=[limit_pb2.LimitUse(limit="api", key="customer:42")], fairness_key="tenant-a"
    )
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await gw.stub.SubmitTask(T.SubmitTaskRequest(task=spec))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    error, violations = details(info.value)
    assert error.reason == rules.UNKNOWN_LIMIT
    assert [(v.field, v.reason) for v in violations] == [("task.limits[0].limit", rules.UNKNOWN_LIMIT)]
    assert gw.backend.lane_requests() == 0

    # Created through another gateway (straight into the store): this one's copy
    # does not have it yet, and reads the store again before refusing.
    gw.backend.put_limit(rate("api"))
    reads = len(gw.backend.store_asked(contract.STORE_LIMITS))
    reply = await gw.stub.SubmitTask(T.SubmitTaskRequest(task=spec))
    assert len(gw.backend.store_asked(contract.STORE_LIMITS)) == reads + 1
    # Units as admission counts them: the 0 sent reads as 1.
    shown = [limit_pb2.LimitUse(limit="api", key="customer:42", units=1)]
    assert list(reply.task.limits) == shown and reply.task.fairness_key == "tenant-a"
    (rec,) = gw.backend.submitted
    assert rec.flow.fairness_key == "tenant-a" and list(rec.flow.uses) == list(spec.limits)
    got = await gw.stub.GetTask(T.GetTaskRequest(id=reply.task.id))
    assert list(got.task.limits) == shown and got.task.fairness_key == "tenant-a"

    # The read on the miss said which version the gateway held (the store answers
    # ``unchanged`` while it is current).
    sent = gw.backend.store_asked(contract.STORE_LIMITS)
    assert [r.known_version for r in sent] == [-1, 0]


async def test_units_over_the_burst_are_refused_and_nothing_is_sent(gw: GatewayEnv) -> None:
    gw.backend.put_limit(rate("api", "10/s", burst=20))
    gw.backend.put_limit(
        limit_pb2.Limit(name="per-customer", concurrency=limit_pb2.ConcurrencyLimit(max_units=3))
    )
    specs = [
        task_pb2.TaskSpec(name="add", limits=[limit_pb2.LimitUse(limit="api", units=20)]),
        task_pb2.TaskSpec(
            name="add",
            limits=[
                limit_pb2.LimitUse(limit="api", units=21),
                limit_pb2.LimitUse(limit="per-customer", units=4),
            ],
        ),
    ]
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await gw.stub.BatchSubmitTasks(T.BatchSubmitTasksRequest(tasks=specs))
    _, violations = details(info.value)
    assert [v.field for v in violations] == ["tasks[1].limits[0].units", "tasks[1].limits[1].units"]
    assert "'api' admits at most 20 at once" in violations[0].description
    assert gw.backend.lane_requests() == 0


async def test_get_and_list_carry_the_schedulers_usage_when_it_answers(gw: GatewayEnv) -> None:
    for name in ("a", "b", "c"):
        gw.backend.put_limit(rate(name))
    stub = limits_stub(gw)
    # No scheduler answers FLOW_GATES: the store's definition without usage.
    got = (await stub.GetLimit(S.GetLimitRequest(name="b"))).limit
    assert got == rate("b") and not got.HasField("usage")

    usage = limit_pb2.LimitUsage(units_in_use=7, admitted=100, throttled=3, waiting=2, keys=1)
    gw.backend.flow_gates = flow_pb2.FlowGatesReply(usage={"b": usage})
    got = (await stub.GetLimit(S.GetLimitRequest(name="b"))).limit
    assert got.usage == usage
    assert list(gw.backend.gate_requests[-1].limits) == ["b"]

    first = await stub.ListLimits(S.ListLimitsRequest(page_size=2))
    assert [x.name for x in first.limits] == ["a", "b"] and first.next_page_token
    assert [x.HasField("usage") for x in first.limits] == [False, True]
    rest = await stub.ListLimits(S.ListLimitsRequest(page_token=first.next_page_token))
    assert [x.name for x in rest.limits] == ["c"] and not rest.next_page_token

    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.GetLimit(S.GetLimitRequest(name="missing"))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    for bad, field in (
        (S.ListLimitsRequest(page_size=1001), "page_size"),
        (S.ListLimitsRequest(page_size=-1), "page_size"),
        (S.ListLimitsRequest(page_token="!!"), "page_token"),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stub.ListLimits(bad)
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert [v.field for v in details(info.value)[1]] == [field]


@pytest.mark.parametrize(
    ("limit", "field"),
    [
        (
            limit_pb2.Limit(name="r", rate=limit_pb2.RateLimit(units=0, period={"seconds": 1})),
            "limit.rate.units",
        ),
        (
            limit_pb2.Limit(name="r", rate=limit_pb2.RateLimit(units=-5, period={"seconds": 1})),
            "limit.rate.units",
        ),
        (limit_pb2.Limit(name="r", rate=limit_pb2.RateLimit(units=5)), "limit.rate.period"),
        (
            limit_pb2.Limit(name="r", rate=limit_pb2.RateLimit(units=5, period={"seconds": -1})),
            "limit.rate.period",
        ),
        (
            limit_pb2.Limit(name="c", concurrency=limit_pb2.ConcurrencyLimit(max_units=0)),
            "limit.concurrency.max_units",
        ),
        (limit_pb2.Limit(name="", concurrency=limit_pb2.ConcurrencyLimit(max_units=1)), "limit.name"),
        (limit_pb2.Limit(name="k"), "limit"),
    ],
)
async def test_a_bad_limit_is_refused_before_the_store(
    gw: GatewayEnv, limit: limit_pb2.Limit, field: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await limits_stub(gw).CreateLimit(S.CreateLimitRequest(limit=limit))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in details(info.value)[1]] == [field]
    assert contract.STORE_LIMIT_CHANGE not in store_methods(gw)


async def test_a_change_through_the_gateway_is_seen_by_its_next_submission(gw: GatewayEnv) -> None:
    gw.gateway.limit_catalog.max_age = 3600.0  # only a change may make it read again
    gw.backend.put_limit(rate("api"))
    spec = task_pb2.TaskSpec(name="add", limits=[limit_pb2.LimitUse(limit="api")])
    await gw.stub.SubmitTask(T.SubmitTaskRequest(task=spec))
    await limits_stub(gw).DeleteLimit(S.DeleteLimitRequest(name="api"))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await gw.stub.SubmitTask(T.SubmitTaskRequest(task=spec))
    assert [(v.field, v.reason) for v in details(info.value)[1]] == [
        ("task.limits[0].limit", rules.UNKNOWN_LIMIT)
    ]
    assert len(gw.backend.submitted) == 1


async def test_a_submission_answers_with_the_limits_its_task_name_declares(gw: GatewayEnv) -> None:
    gw.backend.put_limit(rate("api"))
    declared = limit_pb2.LimitUse(limit="add.rate", units=1)
    gw.backend.declared["add"] = [declared]

    plain = await gw.stub.SubmitTask(T.SubmitTaskRequest(task=task_pb2.TaskSpec(name="add")))
    assert list(plain.task.limits) == [declared]

    asked = limit_pb2.LimitUse(limit="api", key="customer:42", units=2)
    spec = task_pb2.TaskSpec(name="add", limits=[asked], fairness_key="tenant-a")
    reply = await gw.stub.SubmitTask(T.SubmitTaskRequest(task=spec))
    assert list(reply.task.limits) == [asked, declared] and reply.task.fairness_key == "tenant-a"
    got = await gw.stub.GetTask(T.GetTaskRequest(id=reply.task.id))
    assert list(got.task.limits) == list(reply.task.limits)
