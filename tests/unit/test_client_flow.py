"""The Python client's flow control: ``limits=`` and ``fairness_key=`` on a submission, the
LimitService calls' requests, and the limits, usage, weights and gates it reads back."""

from __future__ import annotations

import asyncio
import datetime
import inspect
import re
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from taskyard.client import (
    AsyncClient,
    Breaker,
    Client,
    Explanation,
    KeyWeight,
    LimitUse,
    Rate,
    TaskInfo,
    TaskRequest,
)
from taskyard.client._common import batch_request, submit_request
from taskyard.client._limits import AsyncLimits, Limits, definition
from taskyard.v1 import limit_pb2, task_pb2, task_service_pb2
from taskyard.v1 import limit_service_pb2 as ls


def test_a_mapping_names_each_limit_with_its_key() -> None:
    spec = TaskRequest(name="call", limits={"openai": "", "per-customer": "customer:42"}).to_proto()
    assert [(u.limit, u.key, u.units) for u in spec.limits] == [
        ("openai", "", 0),
        ("per-customer", "customer:42", 0),
    ]
    assert spec.fairness_key == ""


def test_limit_uses_carry_units_and_the_messages_pass_as_they_are() -> None:
    given: list[LimitUse | limit_pb2.LimitUse] = [
        LimitUse(limit="tokens", key="c:1", units=500),
        limit_pb2.LimitUse(limit="api", key="k"),
    ]
    req = submit_request("call", 1, limits=given, fairness_key="tenant-a", x=2)
    assert [(u.limit, u.key, u.units) for u in req.task.limits] == [("tokens", "c:1", 500), ("api", "k", 0)]
    assert req.task.fairness_key == "tenant-a"
    # Options are not task kwargs.
    assert set(req.task.kwargs.fields) == {"x"}


def test_a_batch_takes_them_per_task_in_both_forms() -> None:
    req = batch_request(
        [
            {"name": "a", "limits": {"api": "k1"}, "fairness_key": "t1"},
            TaskRequest(name="b", limits=[LimitUse(limit="api", key="k2")], fairness_key="t2"),
        ]
    )
    assert [(t.limits[0].key, t.fairness_key) for t in req.tasks] == [("k1", "t1"), ("k2", "t2")]


@pytest.mark.parametrize(
    ("limits", "text"),
    [
        ("openai", "got the str 'openai'"),
        ({"api": 3}, "str to str"),
        ([("api", "k")], r"limits\[0\]: a LimitUse, got tuple"),
    ],
)
def test_a_misshapen_limits_is_refused_before_any_call(limits: Any, text: str) -> None:
    with pytest.raises(TypeError, match=text):
        TaskRequest(name="call", limits=limits).to_proto()


def test_a_task_shows_its_limits_and_fairness_key() -> None:
    t = task_pb2.Task(
        id="t1",
        name="call",
        limits=[limit_pb2.LimitUse(limit="api", key="k", units=2)],
        fairness_key="tenant-a",
    )
    info = TaskInfo.from_proto(t)
    assert info.limits == (LimitUse(limit="api", key="k", units=2),)
    assert info.fairness_key == "tenant-a"
    assert TaskInfo.from_proto(task_pb2.Task(id="t2")).limits == ()


def test_a_task_says_how_many_failed_attempts_came_before_those_it_lists() -> None:
    t = task_pb2.Task(id="t1", failures=[task_pb2.TaskFailure(attempt=3001)], earlier_failures=3000)
    info = TaskInfo.from_proto(t)
    assert ([f.attempt for f in info.failures], info.earlier_failures) == ([3001], 3000)
    assert TaskInfo.from_proto(task_pb2.Task(id="t2")).earlier_failures == 0


def test_an_explanation_carries_its_gate() -> None:
    r = task_service_pb2.ExplainTaskResponse(
        task=task_pb2.Task(id="t1"),
        reason=task_service_pb2.WAIT_REASON_CONCURRENCY_FULL,
        gate=limit_pb2.FlowGate(limit="per-customer", key="c:1", holder_ids=["a", "b"]),
    )
    r.gate.next_admission_at.FromSeconds(1_800_000_000)
    e = Explanation.from_proto(r)
    assert e.reason == "CONCURRENCY_FULL"
    assert e.gate is not None and (e.gate.limit, e.gate.key, e.gate.holder_ids) == (
        "per-customer",
        "c:1",
        ("a", "b"),
    )
    assert e.gate.next_admission_at == datetime.datetime.fromtimestamp(1_800_000_000, tz=datetime.UTC)
    assert e.gate.waited is None
    plain = task_service_pb2.ExplainTaskResponse(reason=task_service_pb2.WAIT_REASON_SLOTS_BUSY)
    assert Explanation.from_proto(plain).gate is None


class Recorder:
    """A client's ``_call``: keeps each request and answers with the next canned reply."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.requests: list[Any] = []

    def __call__(self, method: Callable[..., Any], request: Any) -> Any:
        self.requests.append(request)
        return self.replies.pop(0)


def _limits(recorder: Recorder) -> Limits:
    return Limits(grpc.insecure_channel("127.0.0.1:1"), recorder)


def test_create_sends_a_rate_or_a_concurrency_and_reads_the_limit_back() -> None:
    stored = limit_pb2.Limit(name="openai", rate=limit_pb2.RateLimit(units=500, burst=50))
    stored.rate.period.FromMilliseconds(1000)
    stored.created_at.FromSeconds(1_800_000_000)
    stored.usage.units_in_use = 7
    stored.usage.busiest_keys.add(key="k", units_in_use=7, waiting=1)
    rec = Recorder(ls.CreateLimitResponse(limit=stored), ls.CreateLimitResponse(limit=stored))
    limits = _limits(rec)

    info = limits.create("openai", rate=500, period=datetime.timedelta(seconds=1), burst=50)
    sent = rec.requests[0].limit
    assert (sent.name, sent.rate.units, sent.rate.burst, sent.rate.period.ToMilliseconds()) == (
        "openai",
        500,
        50,
        1000,
    )
    assert info.rate == Rate(units=500, period=datetime.timedelta(seconds=1), burst=50)
    assert info.concurrency is None
    assert info.created_at == datetime.datetime.fromtimestamp(1_800_000_000, tz=datetime.UTC)
    assert info.usage is not None and info.usage.units_in_use == 7
    assert info.usage.busiest_keys[0].key == "k"

    limits.create("per-customer", concurrency=3, per_key=True, description="3 per customer")
    sent = rec.requests[1].limit
    assert sent.WhichOneof("kind") == "concurrency" and sent.concurrency.max_units == 3
    assert sent.per_key and sent.description == "3 per customer"


@pytest.mark.parametrize(
    ("options", "text"),
    [
        ({}, "exactly one of rate=, concurrency= and breaker="),
        ({"rate": 5, "concurrency": 2}, "exactly one of rate=, concurrency= and breaker="),
        ({"rate": 5, "breaker": Breaker(failures=1)}, "exactly one of rate=, concurrency= and breaker="),
        ({"concurrency": 2, "burst": 4}, "burst= applies to rate="),
        ({"breaker": Breaker(failures=2), "burst": 4}, "burst= applies to rate="),
    ],
)
def test_a_limit_is_a_rate_or_a_concurrency(options: dict[str, Any], text: str) -> None:
    rec = Recorder()
    with pytest.raises(ValueError, match=text):
        _limits(rec).create("x", **options)
    assert rec.requests == []


def test_a_breaker_is_sent_with_its_numbers_and_read_back() -> None:
    made = limit_pb2.Limit(
        name="payments", per_key=True, breaker=limit_pb2.CircuitBreaker(failure_threshold=5)
    )
    rec = Recorder(ls.CreateLimitResponse(limit=made))
    info = _limits(rec).create("payments", breaker=Breaker(failures=5, window=30, cool_down=10), per_key=True)
    sent = rec.requests[0].limit
    assert sent.WhichOneof("kind") == "breaker" and sent.per_key
    assert (sent.breaker.failure_threshold, sent.breaker.half_open_probes) == (5, 1)
    assert (sent.breaker.window.seconds, sent.breaker.cool_down.seconds) == (30, 10)
    assert info.breaker == Breaker(
        failures=5, window=datetime.timedelta(seconds=60), cool_down=datetime.timedelta(seconds=30)
    )
    assert info.rate is None and info.concurrency is None


def test_update_delete_and_weights_send_what_was_asked() -> None:
    concurrency = limit_pb2.Limit(name="c", concurrency=limit_pb2.ConcurrencyLimit(max_units=5))
    rec = Recorder(
        ls.UpdateLimitResponse(limit=concurrency),
        ls.DeleteLimitResponse(tasks_released=4),
        ls.SetKeyWeightResponse(weight=limit_pb2.KeyWeight(key="t", weight=3)),
        ls.ListKeyWeightsResponse(weights=[limit_pb2.KeyWeight(key="t", weight=3)]),
    )
    limits = _limits(rec)
    assert limits.update("c", concurrency=5).concurrency == 5
    assert isinstance(rec.requests[0], ls.UpdateLimitRequest)
    assert limits.delete("c", force=True) == 4
    assert rec.requests[1] == ls.DeleteLimitRequest(name="c", force=True)
    assert limits.set_weight("t", 3) == KeyWeight(key="t", weight=3)
    assert rec.requests[2].weight == limit_pb2.KeyWeight(key="t", weight=3)
    assert limits.weights() == [KeyWeight(key="t", weight=3)]


def test_a_limit_may_name_the_task_that_uses_it_and_its_key_argument() -> None:
    declared = limit_pb2.Limit(
        name="send_invoice.rate", task_name="send_invoice", key_argument="customer_id", per_key=True
    )
    rec = Recorder(ls.UpdateLimitResponse(limit=declared))
    info = _limits(rec).update(
        "send_invoice.rate", rate=50, per_key=True, task_name="send_invoice", key_argument="customer_id"
    )
    sent = rec.requests[0].limit
    assert (sent.task_name, sent.key_argument, sent.per_key, sent.rate.units) == (
        "send_invoice",
        "customer_id",
        True,
        50,
    )
    assert (info.task_name, info.key_argument) == ("send_invoice", "customer_id")
    # Left out, they are sent empty: the update replaces the whole definition.
    plain = definition("send_invoice.rate", rate=50)
    assert (plain.task_name, plain.key_argument, plain.per_key) == ("", "", False)


def test_a_task_kwarg_named_like_an_option_goes_as_the_submit_docstrings_say() -> None:
    """``limits`` and ``fairness_key`` are submit's options: a task's own keyword argument
    of that name goes through a TaskRequest's kwargs, as both docstrings show."""
    spec = submit_request("report", limits={"api": ""}).task
    assert [u.limit for u in spec.limits] == ["api"] and "limits" not in spec.kwargs

    class Batch:
        """A client's submit_many that keeps the request it would send."""

        def __init__(self) -> None:
            self.sent: list[Any] = []

        def submit_many(self, tasks: Any) -> list[Any]:
            self.sent.append(batch_request(tasks))
            return []

    class AsyncBatch(Batch):
        async def submit_many(self, tasks: Any) -> list[Any]:  # type: ignore[override]
            return Batch.submit_many(self, tasks)

    for doc, batch in ((Client.submit.__doc__, Batch()), (AsyncClient.submit.__doc__, AsyncBatch())):
        assert doc is not None
        (example,) = re.findall(r"``((?:await )?client\.submit_many\(.*?\))``", doc, re.S)
        scope: dict[str, Any] = {"client": batch, "TaskRequest": TaskRequest}
        exec(f"async def run() -> None:\n    {example}", scope)
        asyncio.run(scope["run"]())
        (request,) = batch.sent
        (task,) = request.tasks
        assert task.kwargs["limits"] == 10 and not task.limits


def test_iteration_follows_the_page_tokens() -> None:
    def page(names: list[str], token: str) -> ls.ListLimitsResponse:
        return ls.ListLimitsResponse(
            limits=[
                limit_pb2.Limit(name=n, concurrency=limit_pb2.ConcurrencyLimit(max_units=1)) for n in names
            ],
            next_page_token=token,
        )

    rec = Recorder(page(["a", "b"], "t1"), page(["c"], ""))
    assert [x.name for x in _limits(rec)] == ["a", "b", "c"]
    assert [r.page_token for r in rec.requests] == ["", "t1"]

    async def collect() -> list[str]:
        async def call(method: Callable[..., Any], request: Any) -> Any:
            return arec(method, request)

        arec = Recorder(page(["a"], "t1"), page(["b"], ""))
        limits = AsyncLimits(grpc.aio.insecure_channel("127.0.0.1:1"), call)
        return [x.name async for x in limits]

    assert asyncio.run(collect()) == ["a", "b"]


def test_the_clients_have_the_limits_group() -> None:
    with Client("127.0.0.1:1") as c:
        assert isinstance(c.limits, Limits)


@pytest.mark.parametrize("method", ["create", "get", "list", "update", "delete", "set_weight", "weights"])
def test_both_limits_groups_take_the_same_arguments(method: str) -> None:
    blocking, aio = (inspect.signature(getattr(c, method)).parameters for c in (Limits, AsyncLimits))
    assert blocking == aio
    assert inspect.iscoroutinefunction(getattr(AsyncLimits, method))
    if method in ("create", "update"):
        assert list(blocking)[:3] == ["self", "name", "rate"]
