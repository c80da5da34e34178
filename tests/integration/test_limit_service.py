"""LimitService and limits at submit end to end: a real cluster (gateway, scheduler,
store on PostgreSQL, pool), gRPC with bearer tokens of each scope. Bad input is
refused with the field that is wrong, and changes nothing."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from support.waiting import wait_until

from taskyard.core import limits as rules
from taskyard.v1 import event_service_pb2 as ev
from taskyard.v1 import (
    event_service_pb2_grpc,
    limit_pb2,
    limit_service_pb2,
    limit_service_pb2_grpc,
    schedule_pb2,
    schedule_service_pb2,
    schedule_service_pb2_grpc,
    task_pb2,
    task_service_pb2,
    task_service_pb2_grpc,
)

S = limit_service_pb2
T = task_service_pb2
Code = grpc.StatusCode


class Caller:
    """The cluster's gateway, called with one token."""

    def __init__(self, channel: grpc.Channel, token: str) -> None:
        self.metadata = (("authorization", f"Bearer {token}"),)
        self.limits = limit_service_pb2_grpc.LimitServiceStub(channel)
        self.tasks = task_service_pb2_grpc.TaskServiceStub(channel)
        self.events = event_service_pb2_grpc.EventServiceStub(channel)
        self.schedules = schedule_service_pb2_grpc.ScheduleServiceStub(channel)

    def __call__(self, method: Callable[..., Any], request: Any) -> Any:
        return method(request, metadata=self.metadata, timeout=15)


class Env:
    def __init__(self, cluster: Any, tokens: dict[str, str]) -> None:
        self.cluster = cluster
        channel = cluster.channel()
        self.admin, self.reader, self.submitter = (
            Caller(channel, tokens[who]) for who in ("admin", "read", "submit")
        )


@pytest.fixture
def env(cluster_factory: Callable[..., Any], tmp_path: Path) -> Iterator[Env]:
    tokens = {scope: f"{scope}-{secrets.token_urlsafe(24)}" for scope in ("admin", "read", "submit")}
    path = tmp_path / "tokens"
    path.write_text(
        f"sha256:{hashlib.sha256(tokens['admin'].encode()).hexdigest()}  admin  ops\n"
        f"{tokens['read']}  read  dashboard\n"
        f"{tokens['submit']}  submit  producer\n"
    )
    cluster = cluster_factory(start=False, grpc_tokens_file=str(path))
    cluster.start()
    env = Env(cluster, tokens)
    probe = T.SubmitTaskRequest(
        task=task_pb2.TaskSpec(name="noop", limits=[limit_pb2.LimitUse(limit="readiness-probe")])
    )

    def ready() -> bool:
        """The gateway knows the pool's names and reads the store's limits (and stores nothing)."""
        try:
            env.admin(env.admin.tasks.SubmitTask, probe)
        except grpc.RpcError as exc:
            if exc.code() == Code.UNAVAILABLE:
                return False
            if exc.code() != Code.INVALID_ARGUMENT:
                raise
            return field_violations(exc) == [("task.limits[0].limit", rules.UNKNOWN_LIMIT)]
        raise AssertionError("a task with an unknown limit was accepted")

    wait_until(ready, 45, lambda: f"a gateway that knows 'noop'\n{cluster.logs_tail()}")
    yield env


def refused(call: Callable[[], Any]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        call()
    return info.value


def field_violations(err: grpc.RpcError) -> list[tuple[str, str]]:
    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert status is not None
    bad = error_details_pb2.BadRequest()
    for d in status.details:
        if d.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            d.Unpack(bad)
    return [(v.field, v.reason) for v in bad.field_violations]


def rate(name: str, text: str = "100/s", *, burst: int = 0, per_key: bool = False) -> limit_pb2.Limit:
    return limit_pb2.Limit(name=name, rate=rules.parse_rate(text, burst=burst), per_key=per_key)


def concurrency(name: str, max_units: int, *, per_key: bool = True) -> limit_pb2.Limit:
    return limit_pb2.Limit(
        name=name, concurrency=limit_pb2.ConcurrencyLimit(max_units=max_units), per_key=per_key
    )


def later(name: str = "noop", **fields: Any) -> task_pb2.TaskSpec:
    """A task that stays SCHEDULED (not final) for the test's length."""
    spec = task_pb2.TaskSpec(name=name, **fields)
    spec.countdown.FromSeconds(3600)
    return spec


def definition(limit: limit_pb2.Limit) -> limit_pb2.Limit:
    out = limit_pb2.Limit()
    out.CopyFrom(limit)
    for field in ("created_at", "updated_at", "usage"):
        out.ClearField(field)
    return out


def test_each_rpc_and_the_scope_it_needs(env: Env) -> None:
    admin, reader, submitter = env.admin, env.reader, env.submitter
    api = rate("api", "100/s", burst=10, per_key=True)
    created = admin(admin.limits.CreateLimit, S.CreateLimitRequest(limit=api)).limit
    assert definition(created) == api and created.HasField("created_at")
    admin(admin.limits.CreateLimit, S.CreateLimitRequest(limit=concurrency("per-customer", 3)))
    err = refused(lambda: admin(admin.limits.CreateLimit, S.CreateLimitRequest(limit=rate("api"))))
    assert err.code() == Code.ALREADY_EXISTS

    got = reader(reader.limits.GetLimit, S.GetLimitRequest(name="api")).limit
    assert definition(got) == api
    # The leading scheduler's usage, once it has read the new limit (it polls the store).
    wait_until(
        lambda: reader(reader.limits.GetLimit, S.GetLimitRequest(name="api")).limit.HasField("usage"),
        10,
        "GetLimit to carry the scheduler's usage",
        interval=0.1,
    )
    page = reader(reader.limits.ListLimits, S.ListLimitsRequest(page_size=1))
    assert [x.name for x in page.limits] == ["api"] and page.next_page_token
    rest = reader(reader.limits.ListLimits, S.ListLimitsRequest(page_token=page.next_page_token))
    assert [x.name for x in rest.limits] == ["per-customer"] and not rest.next_page_token

    changed = rate("api", "50/s", burst=5, per_key=True)
    changed.description = "the partner's API"
    updated = admin(admin.limits.UpdateLimit, S.UpdateLimitRequest(limit=changed)).limit
    assert definition(updated) == changed
    assert definition(reader(reader.limits.GetLimit, S.GetLimitRequest(name="api")).limit) == changed
    err = refused(lambda: admin(admin.limits.UpdateLimit, S.UpdateLimitRequest(limit=rate("missing"))))
    assert err.code() == Code.NOT_FOUND

    weight = limit_pb2.KeyWeight(key="tenant-a", weight=3)
    assert admin(admin.limits.SetKeyWeight, S.SetKeyWeightRequest(weight=weight)).weight == weight
    assert list(reader(reader.limits.ListKeyWeights, S.ListKeyWeightsRequest()).weights) == [weight]

    # Changes need admin; reads need read (a submit token has neither).
    for who, method, request in (
        (reader, "CreateLimit", S.CreateLimitRequest(limit=rate("x"))),
        (reader, "UpdateLimit", S.UpdateLimitRequest(limit=rate("api"))),
        (reader, "DeleteLimit", S.DeleteLimitRequest(name="api")),
        (reader, "SetKeyWeight", S.SetKeyWeightRequest(weight=weight)),
        (submitter, "CreateLimit", S.CreateLimitRequest(limit=rate("x"))),
        (submitter, "GetLimit", S.GetLimitRequest(name="api")),
        (submitter, "ListLimits", S.ListLimitsRequest()),
        (submitter, "ListKeyWeights", S.ListKeyWeightsRequest()),
    ):
        err = refused(lambda: who(getattr(who.limits, method), request))  # noqa: B023 - called at once
        assert err.code() == Code.PERMISSION_DENIED, method
    assert [x.name for x in reader(reader.limits.ListLimits, S.ListLimitsRequest()).limits] == [
        "api",
        "per-customer",
    ]

    assert admin(admin.limits.DeleteLimit, S.DeleteLimitRequest(name="per-customer")).tasks_released == 0
    err = refused(lambda: reader(reader.limits.GetLimit, S.GetLimitRequest(name="per-customer")))
    assert err.code() == Code.NOT_FOUND
    err = refused(lambda: admin(admin.limits.DeleteLimit, S.DeleteLimitRequest(name="per-customer")))
    assert err.code() == Code.NOT_FOUND


@pytest.mark.parametrize(
    ("limit", "field"),
    [
        (
            limit_pb2.Limit(name="r", rate=limit_pb2.RateLimit(units=0, period={"seconds": 1})),
            "limit.rate.units",
        ),
        (
            limit_pb2.Limit(name="r", rate=limit_pb2.RateLimit(units=-3, period={"seconds": 1})),
            "limit.rate.units",
        ),
        (limit_pb2.Limit(name="r", rate=limit_pb2.RateLimit(units=5)), "limit.rate.period"),
        (
            limit_pb2.Limit(name="r", rate=limit_pb2.RateLimit(units=5, period={"seconds": -1})),
            "limit.rate.period",
        ),
        (concurrency("c", 0), "limit.concurrency.max_units"),
        (concurrency("c", -1), "limit.concurrency.max_units"),
    ],
)
def test_a_bad_limit_is_refused_and_nothing_is_stored(env: Env, limit: limit_pb2.Limit, field: str) -> None:
    admin = env.admin
    err = refused(lambda: admin(admin.limits.CreateLimit, S.CreateLimitRequest(limit=limit)))
    assert err.code() == Code.INVALID_ARGUMENT
    assert field_violations(err) == [(field, rules.INVALID_ARGUMENT)]
    assert not admin(admin.limits.ListLimits, S.ListLimitsRequest()).limits
    # An update of an existing limit to a bad definition leaves the stored one.
    good = rate(limit.name) if limit.HasField("rate") else concurrency(limit.name, 2)
    admin(admin.limits.CreateLimit, S.CreateLimitRequest(limit=good))
    err = refused(lambda: admin(admin.limits.UpdateLimit, S.UpdateLimitRequest(limit=limit)))
    assert field_violations(err) == [(field, rules.INVALID_ARGUMENT)]
    assert definition(admin(admin.limits.GetLimit, S.GetLimitRequest(name=limit.name)).limit) == good


def test_bad_limit_uses_at_submit_are_refused_and_nothing_is_stored(env: Env) -> None:
    admin = env.admin
    admin(admin.limits.CreateLimit, S.CreateLimitRequest(limit=rate("api", "10/s", burst=20, per_key=True)))
    admin(admin.limits.CreateLimit, S.CreateLimitRequest(limit=concurrency("per-customer", 3)))
    use = limit_pb2.LimitUse
    cases: list[tuple[task_pb2.TaskSpec, list[tuple[str, str]]]] = [
        (later(limits=[use(limit="nope")]), [("task.limits[0].limit", rules.UNKNOWN_LIMIT)]),
        (later(limits=[use(limit="api", key="k" * 257)]), [("task.limits[0].key", rules.INVALID_ARGUMENT)]),
        (later(fairness_key="é" * 129), [("task.fairness_key", rules.INVALID_ARGUMENT)]),
        (
            later(limits=[use(limit="api", key=str(i)) for i in range(9)]),
            [("task.limits", rules.INVALID_ARGUMENT)],
        ),
        (later(limits=[use(limit="api", units=21)]), [("task.limits[0].units", rules.INVALID_ARGUMENT)]),
        (
            later(limits=[use(limit="api"), use(limit="per-customer", key="c", units=4)]),
            [("task.limits[1].units", rules.INVALID_ARGUMENT)],
        ),
    ]
    for spec, expected in cases:
        err = refused(lambda: admin(admin.tasks.SubmitTask, T.SubmitTaskRequest(task=spec)))  # noqa: B023
        assert err.code() == Code.INVALID_ARGUMENT, spec
        assert field_violations(err) == expected, spec
    # In a batch, the path names the task.
    batch = [later(), later(limits=[use(limit="nope")])]
    err = refused(lambda: admin(admin.tasks.BatchSubmitTasks, T.BatchSubmitTasksRequest(tasks=batch)))
    assert field_violations(err) == [("tasks[1].limits[0].limit", rules.UNKNOWN_LIMIT)]
    assert not admin(admin.tasks.ListTasks, T.ListTasksRequest()).tasks
    # A schedule's task is checked as a submission is.
    template = task_pb2.TaskSpec(name="noop", limits=[use(limit="nope")])
    schedule = schedule_pb2.Schedule(name="tick", cron="* * * * *", task=template)
    err = refused(
        lambda: admin(
            admin.schedules.CreateSchedule, schedule_service_pb2.CreateScheduleRequest(schedule=schedule)
        )
    )
    assert field_violations(err) == [("schedule.task.limits[0].limit", rules.UNKNOWN_LIMIT)]
    assert not admin(admin.schedules.ListSchedules, schedule_service_pb2.ListSchedulesRequest()).schedules
    # A fairness weight out of range.
    err = refused(
        lambda: admin(
            admin.limits.SetKeyWeight, S.SetKeyWeightRequest(weight=limit_pb2.KeyWeight(key="t", weight=1001))
        )
    )
    assert field_violations(err) == [("weight.weight", rules.INVALID_ARGUMENT)]
    assert not admin(admin.limits.ListKeyWeights, S.ListKeyWeightsRequest()).weights


def test_limits_at_submit_round_trip_and_a_used_limit_is_deleted_only_by_force(env: Env) -> None:
    admin = env.admin
    # Created and used at once.
    admin(admin.limits.CreateLimit, S.CreateLimitRequest(limit=concurrency("per-customer", 3)))
    uses = [limit_pb2.LimitUse(limit="per-customer", key="customer:42", units=2)]
    submitted = admin(
        admin.tasks.SubmitTask, T.SubmitTaskRequest(task=later(limits=uses, fairness_key="tenant-a"))
    ).task
    got = admin(admin.tasks.GetTask, T.GetTaskRequest(id=submitted.id)).task
    assert list(got.limits) == uses and got.fairness_key == "tenant-a"
    plain = admin(admin.tasks.SubmitTask, T.SubmitTaskRequest(task=later())).task
    got = admin(admin.tasks.GetTask, T.GetTaskRequest(id=plain.id)).task
    assert not got.limits and not got.fairness_key

    err = refused(lambda: admin(admin.limits.DeleteLimit, S.DeleteLimitRequest(name="per-customer")))
    assert err.code() == Code.FAILED_PRECONDITION
    assert admin(admin.limits.GetLimit, S.GetLimitRequest(name="per-customer")).limit.name == "per-customer"
    forced = admin(admin.limits.DeleteLimit, S.DeleteLimitRequest(name="per-customer", force=True))
    assert forced.tasks_released == 1
    err = refused(lambda: admin(admin.limits.GetLimit, S.GetLimitRequest(name="per-customer")))
    assert err.code() == Code.NOT_FOUND


def test_watch_events_shows_limit_changes(env: Env) -> None:
    admin = env.admin
    stream = admin.events.WatchEvents(
        ev.WatchEventsRequest(kinds=[ev.EVENT_KIND_LIMIT]), metadata=admin.metadata, timeout=30
    )
    next(stream)  # the first response: where the stream starts
    admin(admin.limits.CreateLimit, S.CreateLimitRequest(limit=rate("api")))
    admin(
        admin.limits.SetKeyWeight, S.SetKeyWeightRequest(weight=limit_pb2.KeyWeight(key="tenant-a", weight=3))
    )
    seen: list[ev.Event] = []
    for response in stream:
        seen.extend(response.events)
        if len(seen) >= 2:
            break
    stream.cancel()
    assert [(e.kind, e.type, dict(e.attributes)) for e in seen] == [
        (ev.EVENT_KIND_LIMIT, "limit.created", {"limit": "api"}),
        (ev.EVENT_KIND_LIMIT, "limit.weight", {"key": "tenant-a", "weight": "3"}),
    ]


def test_explain_names_the_concurrency_limit_that_holds_a_queued_task(env: Env) -> None:
    admin = env.admin
    one = concurrency("one-at-a-time", 1, per_key=False)
    admin(admin.limits.CreateLimit, S.CreateLimitRequest(limit=one))
    uses = [limit_pb2.LimitUse(limit="one-at-a-time")]
    args = struct_pb2.ListValue()
    args.append(60)
    holder = admin(
        admin.tasks.SubmitTask,
        T.SubmitTaskRequest(task=task_pb2.TaskSpec(name="sleep", args=args, limits=uses)),
    ).task
    wait_until(
        lambda: (
            admin(admin.tasks.GetTask, T.GetTaskRequest(id=holder.id)).task.state
            == task_pb2.TASK_STATE_RUNNING
        ),
        30,
        "the holder to run",
        interval=0.1,
    )
    waiting = admin(
        admin.tasks.SubmitTask, T.SubmitTaskRequest(task=task_pb2.TaskSpec(name="noop", limits=uses))
    ).task

    seen: list[T.ExplainTaskResponse] = []

    def explained() -> T.ExplainTaskResponse | None:
        out: T.ExplainTaskResponse = admin(admin.tasks.ExplainTask, T.ExplainTaskRequest(id=waiting.id))
        seen.append(out)
        return out if out.reason == T.WAIT_REASON_CONCURRENCY_FULL else None

    out = wait_until(
        explained,
        15,
        lambda: f"ExplainTask to name the full concurrency limit, not {seen[-1:]}",
        interval=0.1,
    )
    assert out.gate.limit == "one-at-a-time" and list(out.gate.holder_ids) == [holder.id]
    assert out.message == f"concurrency limit 'one-at-a-time' is full: held by 1 task ({holder.id})"
    admin(admin.tasks.CancelTask, T.CancelTaskRequest(id=holder.id))
