"""A tenant's dead letters, redrives, queues, key weights and submissions of every kind
on a real cluster: a tenant's token never sees or changes the other's, and another
tenant's redrive or limit answers as a missing one (the same code and message)."""

from __future__ import annotations

import secrets
import uuid
from typing import Any

from integration.gateway_tenants import (
    Caller,
    Env,
    F,
    L,
    Q,
    T,
    answer,
    env,
    later,
    refused,
    same_as_missing,
    submit,
)

from taskyard.core import limits as rules
from taskyard.v1 import limit_pb2, task_pb2

__all__ = ["env"]


def failed(caller: Caller) -> str:
    """The id of a task of ``caller``'s that failed for good (a dead letter), waited on by its own token."""
    task = submit(caller, task_pb2.TaskSpec(name="fail", queue="reports", max_retries=0))
    request = T.WaitTaskRequest(id=task.id)
    request.timeout.FromSeconds(30)
    done = caller(caller.tasks.WaitTask, request, timeout=40)
    assert (done.timed_out, done.task.state, done.task.tenant) == (
        False,
        task_pb2.TASK_STATE_FAILURE,
        task.tenant,
    )
    return task.id


def dead_letters(caller: Caller, **filters: Any) -> list[tuple[str, str]]:
    reply = caller(caller.failures.ListFailures, F.ListFailuresRequest(filter=F.FailureFilter(**filters)))
    return [(d.task_id, f"{d.tenant}:{d.queue}") for d in reply.failures]


def test_a_tenants_dead_letters_and_redrives_are_its_own(env: Env) -> None:
    ops, acme, beta = env.ops, env.acme, env.beta
    a, b = failed(acme), failed(beta)
    assert dead_letters(acme, all=True) == [(a, "acme:reports")]
    assert dead_letters(beta, queue="reports") == [(b, "beta:reports")]
    assert {(a, "acme:reports"), (b, "beta:reports")} <= set(dead_letters(ops, all=True))
    groups = acme(acme.failures.ListFailureGroups, F.ListFailureGroupsRequest()).groups
    assert [(g.tenant, g.queue, g.count) for g in groups] == [("acme", "reports", 1)]

    # B's filters never reach A's dead letter: a dry run matches none, a purge removes B's only.
    def dry_run(i: str) -> Any:
        request = F.RedriveRequest(filter=F.FailureFilter(task_ids=[i]), rate=1, dry_run=True)
        return beta(beta.failures.Redrive, request)

    missing = str(uuid.uuid4())
    assert answer(dry_run, a) == answer(dry_run, missing)  # "not dead letters", as for a missing id
    purged = beta(beta.failures.PurgeDeadLetters, F.PurgeDeadLettersRequest(filter=F.FailureFilter(all=True)))
    assert purged.purged == 1
    assert dead_letters(acme, all=True) == [(a, "acme:reports")]
    # A's redrive: B cannot see, pause, cancel or list it; it answers as a missing one.
    made = acme(acme.failures.Redrive, F.RedriveRequest(filter=F.FailureFilter(task_ids=[a]), rate=1))
    rid = made.redrive.id
    assert made.matched == 1 and made.redrive.filter.task_ids == [a] and made.redrive.tenant == "acme"
    for call in (
        lambda i: beta(beta.failures.GetRedrive, F.GetRedriveRequest(id=i)),
        lambda i: beta(beta.failures.PauseRedrive, F.PauseRedriveRequest(id=i)),
        lambda i: beta(beta.failures.CancelRedrive, F.CancelRedriveRequest(id=i)),
        lambda i: beta(beta.failures.ListRedriveItems, F.ListRedriveItemsRequest(id=i)),
    ):
        same_as_missing(call, rid)
    assert [r.id for r in beta(beta.failures.ListRedrives, F.ListRedrivesRequest()).redrives] == []
    assert [r.id for r in acme(acme.failures.ListRedrives, F.ListRedrivesRequest()).redrives] == [rid]
    assert acme(acme.failures.GetRedrive, F.GetRedriveRequest(id=rid)).redrive.id == rid


def test_a_tenants_queues_weights_and_submissions_are_its_own(env: Env) -> None:
    ops, acme, beta = env.ops, env.acme, env.beta
    a = submit(acme, later(queue="reports"))
    b = submit(beta, later(queue="reports"))
    # Pausing A's "reports" leaves B's.
    paused = acme(acme.queues.PauseQueue, Q.PauseQueueRequest(queue="reports")).queue
    assert (paused.tenant, paused.name, paused.paused) == ("acme", "reports", True)
    mine = {q.name: q.paused for q in acme(acme.queues.GetQueueStatus, Q.GetQueueStatusRequest()).queues}
    theirs = {q.name: q.paused for q in beta(beta.queues.GetQueueStatus, Q.GetQueueStatusRequest()).queues}
    assert mine.get("reports") is True and theirs.get("reports") is False
    assert not any("/" in name for name in (*mine, *theirs))
    everyone = {(q.tenant, q.name) for q in ops(ops.queues.GetQueueStatus, Q.GetQueueStatusRequest()).queues}
    assert {("acme", "reports"), ("beta", "reports")} <= everyone
    acme(acme.queues.ResumeQueue, Q.ResumeQueueRequest(queue="reports"))
    # Retrying or purging by filter reaches its own tenant's tasks only.
    assert list(beta(beta.queues.RetryTasks, Q.RetryTasksRequest(queue="reports")).ids) == []
    # A's finished task, older than B's window, survives B's purge: B's purge counts none of A's.
    done = acme(acme.tasks.RunTask, T.RunTaskRequest(task=task_pb2.TaskSpec(name="noop")), timeout=40)
    assert (done.final, done.task.state) == (True, task_pb2.TASK_STATE_SUCCESS)
    purge = Q.PurgeTasksRequest()
    purge.older_than.FromMilliseconds(1)
    assert beta(beta.queues.PurgeTasks, purge).purged == 0
    kept = acme(acme.tasks.GetTask, T.GetTaskRequest(id=done.task.id)).task
    assert (kept.id, kept.state) == (done.task.id, task_pb2.TASK_STATE_SUCCESS)
    assert acme(acme.tasks.GetTask, T.GetTaskRequest(id=a.id)).task.state == task_pb2.TASK_STATE_SCHEDULED
    assert beta(beta.tasks.GetTask, T.GetTaskRequest(id=b.id)).task.id == b.id
    # Key weights: A's key is its own.
    key = f"k-{secrets.token_hex(3)}"
    acme(acme.limits.SetKeyWeight, L.SetKeyWeightRequest(weight=limit_pb2.KeyWeight(key=key, weight=5)))
    # The default tenant's key "acme/<key>" (its keys may hold a '/') is not acme's.
    lookalike = limit_pb2.KeyWeight(key=f"acme/{key}", weight=9)
    shown = ops(ops.limits.SetKeyWeight, L.SetKeyWeightRequest(weight=lookalike)).weight
    assert (shown.tenant, shown.key, shown.weight) == ("", f"acme/{key}", 9)
    weights = acme(acme.limits.ListKeyWeights, L.ListKeyWeightsRequest()).weights
    assert [(w.tenant, w.key, w.weight) for w in weights] == [("acme", key, 5)]
    every_weight = {
        (w.tenant, w.key, w.weight) for w in ops(ops.limits.ListKeyWeights, L.ListKeyWeightsRequest()).weights
    }
    assert {("acme", key, 5), ("", f"acme/{key}", 9)} <= every_weight
    assert [w.key for w in beta(beta.limits.ListKeyWeights, L.ListKeyWeightsRequest()).weights] == []
    # A limit of A's is no limit of B's to update.
    api = limit_pb2.Limit(name="api", rate=rules.parse_rate("10/s"))
    acme(acme.limits.CreateLimit, L.CreateLimitRequest(limit=api))
    same_as_missing(
        lambda n: beta(
            beta.limits.UpdateLimit,
            L.UpdateLimitRequest(limit=limit_pb2.Limit(name=n, rate=rules.parse_rate("99/s"))),
        ),
        "api",
    )
    assert acme(acme.limits.GetLimit, L.GetLimitRequest(name="api")).limit.rate.units == 10
    # A request id or idempotency key is the tenant's own: the operator's "acme/r1" (the
    # default tenant's, whose keys may hold a '/') is not acme's "r1", nor its task answered.
    for keys in ({"request_id": "r1"}, {"idempotency_key": "k1"}):
        held = submit(ops, later(**{k: f"acme/{v}" for k, v in keys.items()}))
        first = acme(acme.tasks.SubmitTask, T.SubmitTaskRequest(task=later(**keys)))
        again = acme(acme.tasks.SubmitTask, T.SubmitTaskRequest(task=later(**keys)))
        assert (first.created, first.task.tenant) == (True, "acme") and first.task.id != held.id
        assert (again.created, again.task.id, again.task.tenant) == (False, first.task.id, "acme")
    # Every way to submit: the tenant is the token's.
    batch = acme(acme.tasks.BatchSubmitTasks, T.BatchSubmitTasksRequest(tasks=[later(), later()])).tasks
    for t in batch:
        assert acme(acme.tasks.GetTask, T.GetTaskRequest(id=t.id)).task.tenant == "acme"
    run = acme(acme.tasks.RunTask, T.RunTaskRequest(task=task_pb2.TaskSpec(name="noop")), timeout=40)
    assert (run.final, run.task.state, run.task.tenant) == (True, task_pb2.TASK_STATE_SUCCESS, "acme")
    same_as_missing(lambda i: beta(beta.tasks.GetTask, T.GetTaskRequest(id=i)), run.task.id)
    err = refused(lambda: beta(beta.queues.PauseQueue, Q.PauseQueueRequest(queue="acme/reports")))
    assert err.code().name == "INVALID_ARGUMENT"  # a name with a tenant is no queue name
