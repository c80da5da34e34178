"""Tenants on a real cluster, the scheduler's side: a pool that serves tenant a only
is never sent tenant b's task, which waits QUEUED, explained NO_POOL, until a pool
that serves b starts; a suspended tenant's queued task waits, explained
TENANT_SUSPENDED, while a pool that serves it is idle, and runs once the tenant is
resumed; a tenant's concurrency quota of 1 holds its second task, explained
TENANT_QUOTA, through a change of leader."""

from __future__ import annotations

from typing import Any

import pytest
from support.waiting import wait_until


def _tenants(cluster: Any, *names: str, **quota: Any) -> None:
    with cluster.client() as operator:
        for name in names:
            operator.tenants.create(name, **quota)


def _pool(cluster: Any, pool_id: str, tenants: str) -> None:
    env = {"TASKYARD_POOL_ID": pool_id, "TASKYARD_POOL_TENANTS": tenants}
    cluster.start_service("worker-pool", instance=f"worker-pool-{pool_id}", env=env)


def _reason(client: Any, task_id: str, reason: str, cluster: Any) -> Any:
    seen: list[Any] = []

    def said() -> Any:
        seen[:] = [client.explain(task_id)]
        return seen[0].reason == reason and seen[0]

    return wait_until(
        said, 10, lambda: f"ExplainTask to say {reason} (it said {seen})\n{cluster.logs_tail()}"
    )


# The cluster's own pool serves tenant a only.
@pytest.mark.cluster(env={"TASKYARD_POOL_ID": "pool-a", "TASKYARD_POOL_TENANTS": "a"})
def test_a_pool_serving_tenant_a_never_receives_bs_task(cluster: Any) -> None:
    _tenants(cluster, "a", "b")
    with cluster.client(tenant="a") as a, cluster.client(tenant="b") as b:
        done = a.wait(a.submit("add", 1, 2).id, timeout=30)
        assert done.state.name == "SUCCESS" and done.worker_id.startswith("pool-a/"), done
        waiting = b.submit("add", 2, 3)
        # Submitted through the scheduler: in its lanes when the submission returns.
        why = b.explain(waiting.id)
        assert why.reason == "NO_POOL", why
        assert "for its tenant" in why.message
        # a's pool goes on running a's tasks meanwhile, never b's.
        for task_id in [a.submit("add", i, i).id for i in range(5)]:
            assert a.wait(task_id, timeout=30).worker_id.startswith("pool-a/")
        assert b.get(waiting.id).state.name == "QUEUED"
        _pool(cluster, "pool-b", "b")
        done = b.wait(waiting.id, timeout=30)
        assert done.state.name == "SUCCESS" and done.result == 5
        assert done.worker_id.startswith("pool-b/"), done.worker_id


# The cluster's own pool serves the default tenant only: the tenants' tasks wait for theirs.
@pytest.mark.cluster(env={"TASKYARD_POOL_ID": "pool-default", "TASKYARD_POOL_TENANTS": "default"})
def test_a_suspended_tenants_task_waits_until_it_is_resumed(cluster: Any) -> None:
    _tenants(cluster, "sleepy", "awake")
    with (
        cluster.client() as operator,
        cluster.client(tenant="sleepy") as sleepy,
        cluster.client(tenant="awake") as awake,
    ):
        waiting = sleepy.submit("add", 20, 2)
        assert sleepy.explain(waiting.id).reason == "NO_POOL"
        operator.tenants.suspend("sleepy", reason="the bill is due")
        # The scheduler hears it from the tenant.suspended event, or its next read (0.5 s).
        _reason(sleepy, waiting.id, "TENANT_SUSPENDED", cluster)
        _pool(cluster, "pool-all", "")  # serves every tenant
        # Its pool runs another tenant's task: it is dispatched to, and sleepy's is not.
        done = awake.wait(awake.submit("add", 1, 1).id, timeout=30)
        assert done.worker_id.startswith("pool-all/"), done
        assert sleepy.get(waiting.id).state.name == "QUEUED"
        assert sleepy.explain(waiting.id).reason == "TENANT_SUSPENDED"
        operator.tenants.resume("sleepy")
        done = sleepy.wait(waiting.id, timeout=30)
        assert done.state.name == "SUCCESS" and done.result == 22


@pytest.mark.cluster(env={"TASKYARD_POOL_ID": "pool-all", "TASKYARD_CONCURRENCY": "4"})
def test_a_tenants_concurrency_quota_holds_its_second_task(cluster: Any) -> None:
    _tenants(cluster, "one", max_concurrency=1)
    # The leader's word that it read the quota (its tenant.created event, or its poll).
    wait_until(lambda: "tenant quotas: 1 tenants" in cluster.log_text("scheduler"), 10, "the quota's read")
    with cluster.client(tenant="one") as one:
        first = one.submit("sleep", 30.0)
        wait_until(lambda: one.get(first.id).state.name == "RUNNING", 30, "the first task to run")
        second = one.submit("add", 1, 1)
        why = _reason(one, second.id, "TENANT_QUOTA", cluster)
        assert (why.gate.limit, why.gate.key) == ("tenant.concurrency", "one")
        assert first.id in why.gate.holder_ids
        # A new leader counts the unit the running attempt holds (the store's leased
        # attempts of the tenants with a concurrency quota): the second still waits.
        cluster.kill("scheduler")
        cluster.start_service("scheduler")
        why = _reason(one, second.id, "TENANT_QUOTA", cluster)
        assert first.id in why.gate.holder_ids
        assert one.get(second.id).state.name == "QUEUED"
        one.cancel(first.id)
        assert one.wait(second.id, timeout=30).state.name == "SUCCESS"
