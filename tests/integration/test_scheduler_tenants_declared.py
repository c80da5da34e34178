"""A limit a task's name declares, on a real cluster with tenants: the pool's, but
each tenant's tasks counted in buckets of their own, so one tenant's running task
never holds another's, and ExplainTask names the caller's own holders only; a
tenant's own limit of the same name is its own."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from integration.gateway_tenants import Caller, Code, Env, L, T, later, start_env, submit
from support.waiting import wait_until

from taskyard.v1 import limit_pb2, task_pb2

RUNNING = task_pb2.TASK_STATE_RUNNING
FULL = T.WAIT_REASON_CONCURRENCY_FULL


@pytest.fixture
def env(cluster_factory: Callable[..., Any], tmp_path: Path) -> Iterator[Env]:
    """gateway_tenants' cluster, its pool loading a task that declares its limits."""

    def ready(env: Env) -> bool:
        """The gateway answers and knows the pool's names (an unknown one is refused until it does)."""
        try:
            submit(env.ops, later("settle"))
        except grpc.RpcError as exc:
            if exc.code() in (Code.UNAVAILABLE, Code.INVALID_ARGUMENT):
                return False
            raise
        return True

    yield start_env(
        cluster_factory, tmp_path, ready, task_modules=("taskyard.examples", "support.declared_limits")
    )


def settle(seconds: float, account: str, *uses: str) -> task_pb2.TaskSpec:
    spec = task_pb2.TaskSpec(name="settle", kwargs=struct_pb2.Struct())
    spec.args.append(seconds)
    spec.kwargs.update({"account": account})
    for name in uses:
        spec.limits.add(limit=name)
    return spec


def _running(caller: Caller, task_id: str) -> bool:
    return caller(caller.tasks.GetTask, T.GetTaskRequest(id=task_id)).task.state == RUNNING


def _full(caller: Caller, task_id: str) -> T.ExplainTaskResponse | None:
    said = caller(caller.tasks.ExplainTask, T.ExplainTaskRequest(id=task_id))
    return said if said.reason == FULL else None


def test_one_tenants_running_task_holds_none_of_anothers_units(env: Env) -> None:
    acme, beta = env.acme, env.beta
    # settle declares concurrency 1 keyed by account; beta's task holds 'b-acct'.
    b1 = submit(beta, settle(120, "b-acct")).id
    wait_until(lambda: _running(beta, b1), 30, "beta's settle running")
    a1 = submit(acme, settle(120, "b-acct")).id
    wait_until(lambda: _running(acme, a1), 30, "acme's settle of the same key running beside beta's")
    a2 = submit(acme, settle(0, "b-acct")).id
    said = wait_until(lambda: _full(acme, a2), 30, "acme's second settle held by its first")
    assert (said.gate.limit, said.gate.key, list(said.gate.holder_ids)) == (
        "settle.concurrency",
        "b-acct",
        [a1],
    )
    assert a1 in said.message and b1 not in said.message
    b2 = submit(beta, settle(0, "b-acct")).id
    said = wait_until(lambda: _full(beta, b2), 30, "beta's second settle held by its first")
    assert list(said.gate.holder_ids) == [b1] and a1 not in said.message


def test_a_tenants_own_limit_named_as_the_declared_one_is_its_own(env: Env) -> None:
    acme = env.acme
    own = limit_pb2.Limit(name="settle.concurrency", concurrency=limit_pb2.ConcurrencyLimit(max_units=5))
    acme(acme.limits.CreateLimit, L.CreateLimitRequest(limit=own))
    task = submit(acme, settle(0, "a-acct", "settle.concurrency"))
    # Both: acme's own (as acme knows it) and the pool's declared one.
    assert sorted(u.limit for u in task.limits) == ["settle.concurrency", "settle.concurrency"]
    wait = T.WaitTaskRequest(id=task.id)
    wait.timeout.FromSeconds(30)
    done = acme(acme.tasks.WaitTask, wait, timeout=40)
    assert done.task.state == task_pb2.TASK_STATE_SUCCESS
