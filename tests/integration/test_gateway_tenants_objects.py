"""A tenant's tasks, limits and schedules on a real cluster: a tenant's token never
sees, changes or waits on the other's, in lists, by id or through page tokens, and
another tenant's id answers exactly as a missing one (the same code and message)."""

from __future__ import annotations

from typing import Any

from integration.gateway_tenants import (
    Code,
    Env,
    L,
    Q,
    S,
    T,
    env,
    later,
    listed,
    refused,
    same_as_missing,
    submit,
)

from taskyard.core import limits as rules
from taskyard.v1 import limit_pb2, schedule_pb2, task_pb2

__all__ = ["env"]


def test_a_tenants_tasks_are_its_own(env: Env) -> None:
    ops, acme, beta = env.ops, env.acme, env.beta
    a = submit(acme, later(queue="reports", labels={"who": "acme"}))
    b = submit(beta, later(queue="reports", labels={"who": "beta"}))
    d = submit(ops, later(queue="reports"))
    # The tenant is the token's, never the request's; the queue is named as the tenant knows it.
    assert (a.tenant, a.queue, b.tenant, b.queue, d.tenant, d.queue) == (
        "acme",
        "reports",
        "beta",
        "reports",
        "",
        "reports",
    )
    assert env.cluster.count_tasks(queue="acme/reports") == 1  # stored qualified
    got = acme(acme.tasks.GetTask, T.GetTaskRequest(id=a.id)).task
    assert (got.id, got.tenant, got.queue) == (a.id, "acme", "reports")
    # Lists: each tenant its own, an operator every tenant's (with whose it is).
    assert [t.id for t in listed(acme)] == [a.id]
    assert [t.id for t in listed(beta, queue="reports")] == [b.id]
    assert {(t.id, t.tenant, t.queue) for t in listed(ops)} >= {
        (a.id, "acme", "reports"),
        (b.id, "beta", "reports"),
        (d.id, "", "reports"),
    }
    assert [t.id for t in listed(ops.acting_as("acme"))] == [a.id]
    # A page token of A's listing used by B lists B's rows only.
    for i in range(2):
        submit(acme, later(queue="reports", labels={"n": str(i)}))
    first = acme(acme.tasks.ListTasks, T.ListTasksRequest(page_size=1))
    assert first.next_page_token
    rest = beta(beta.tasks.ListTasks, T.ListTasksRequest(page_size=10, page_token=first.next_page_token))
    assert {t.tenant for t in rest.tasks} <= {"beta"}

    # Every id-based RPC: B's id answers A as a missing id does, and changes nothing.
    same_as_missing(lambda i: acme(acme.tasks.GetTask, T.GetTaskRequest(id=i)), b.id)
    same_as_missing(lambda i: acme(acme.tasks.ExplainTask, T.ExplainTaskRequest(id=i)), b.id)
    same_as_missing(lambda i: acme(acme.tasks.GetTaskTree, T.GetTaskTreeRequest(id=i)), b.id)
    same_as_missing(lambda i: acme(acme.tasks.GetTaskLogs, T.GetTaskLogsRequest(id=i)), b.id)
    same_as_missing(lambda i: list(acme(acme.tasks.StreamTaskLogs, T.StreamTaskLogsRequest(id=i))), b.id)
    wait = T.WaitTaskRequest()
    wait.timeout.FromSeconds(5)

    def waited(i: str) -> Any:
        request = T.WaitTaskRequest()
        request.CopyFrom(wait)
        request.id = i
        return acme(acme.tasks.WaitTask, request)

    same_as_missing(waited, b.id)
    same_as_missing(lambda i: acme(acme.tasks.CancelTask, T.CancelTaskRequest(id=i)), b.id)
    retried = acme(acme.queues.RetryTasks, Q.RetryTasksRequest(ids=[b.id]))
    assert list(retried.ids) == []
    still = beta(beta.tasks.GetTask, T.GetTaskRequest(id=b.id)).task
    assert still.state == task_pb2.TASK_STATE_SCHEDULED and not still.cancel_requested
    # A queue op of A's touches A's queue only.
    acme(acme.queues.ClearQueue, Q.ClearQueueRequest(queue="reports"))
    assert beta(beta.tasks.GetTask, T.GetTaskRequest(id=b.id)).task.state == task_pb2.TASK_STATE_SCHEDULED
    assert ops(ops.tasks.GetTask, T.GetTaskRequest(id=d.id)).task.state == task_pb2.TASK_STATE_SCHEDULED


def test_a_tenants_limits_and_schedules_are_its_own(env: Env) -> None:
    ops, acme, beta = env.ops, env.acme, env.beta
    api = limit_pb2.Limit(name="api", rate=rules.parse_rate("100/s", burst=10))
    made = acme(acme.limits.CreateLimit, L.CreateLimitRequest(limit=api)).limit
    assert made.name == "api"
    same_as_missing(lambda n: beta(beta.limits.GetLimit, L.GetLimitRequest(name=n)), "api")
    assert [lim.name for lim in beta(beta.limits.ListLimits, L.ListLimitsRequest()).limits] == []
    # B may have its own "api", and A's task may use A's only.
    beta(beta.limits.CreateLimit, L.CreateLimitRequest(limit=limit_pb2.Limit(name="api", rate=api.rate)))
    assert [lim.name for lim in acme(acme.limits.ListLimits, L.ListLimitsRequest()).limits] == ["api"]
    used = submit(acme, later(limits=[limit_pb2.LimitUse(limit="api")]))
    assert [u.limit for u in used.limits] == ["api"]
    err = refused(lambda: submit(ops, later(limits=[limit_pb2.LimitUse(limit="api")])))
    assert err.code() == Code.INVALID_ARGUMENT  # no default-tenant "api"
    # An operator over every tenant reads each limit's tenant beside its name, and pages through them.
    first = ops(ops.limits.ListLimits, L.ListLimitsRequest(page_size=1))
    rest = ops(ops.limits.ListLimits, L.ListLimitsRequest(page_size=5, page_token=first.next_page_token))
    names = [(lim.tenant, lim.name) for lim in (*first.limits, *rest.limits)]
    assert names == [("acme", "api"), ("beta", "api")] and not rest.next_page_token
    mine = acme(acme.limits.GetLimit, L.GetLimitRequest(name="api")).limit
    assert (mine.tenant, mine.name) == ("acme", "api")
    beta(beta.limits.DeleteLimit, L.DeleteLimitRequest(name="api"))
    assert acme(acme.limits.GetLimit, L.GetLimitRequest(name="api")).limit.name == "api"

    every = schedule_pb2.Schedule(name="nightly", task=task_pb2.TaskSpec(name="noop", queue="reports"))
    every.interval.FromSeconds(3600)
    s = acme(acme.schedules.CreateSchedule, S.CreateScheduleRequest(schedule=every)).schedule
    assert (s.tenant, s.name, s.task.queue) == ("acme", "nightly", "reports")
    beta(beta.schedules.CreateSchedule, S.CreateScheduleRequest(schedule=every))  # the same name, its own
    assert [x.name for x in beta(beta.schedules.ListSchedules, S.ListSchedulesRequest()).schedules] == [
        "nightly"
    ]
    same_as_missing(lambda i: beta(beta.schedules.GetSchedule, S.GetScheduleRequest(id=i)), s.id)
    same_as_missing(lambda i: beta(beta.schedules.PauseSchedule, S.PauseScheduleRequest(id=i)), s.id)
    same_as_missing(lambda i: beta(beta.schedules.TriggerSchedule, S.TriggerScheduleRequest(id=i)), s.id)
    same_as_missing(lambda i: beta(beta.schedules.DeleteSchedule, S.DeleteScheduleRequest(id=i)), s.id)
    fired = acme(acme.schedules.TriggerSchedule, S.TriggerScheduleRequest(id=s.id))
    assert (fired.task.tenant, fired.task.queue) == ("acme", "reports")
    assert acme(acme.schedules.GetSchedule, S.GetScheduleRequest(id=s.id)).schedule.name == "nightly"
    listed_by_ops = ops(ops.schedules.ListSchedules, S.ListSchedulesRequest()).schedules
    assert sorted((x.tenant, x.name, x.task.queue) for x in listed_by_ops) == [
        ("acme", "nightly", "reports"),
        ("beta", "nightly", "reports"),
    ]
