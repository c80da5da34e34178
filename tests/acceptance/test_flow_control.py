"""Flow control through the whole suite: a per-key concurrency limit holds and frees
its units when attempts end (a cancel included), a rate limit holds tasks back
with the time of its next admission, fair share lets a second key through a
flood, and ExplainTask names each gate."""

from __future__ import annotations

from typing import Any

import pytest
from support.waiting import wait_until

pytestmark = pytest.mark.acceptance


def _running(cluster: Any, ids: list[str]) -> set[str]:
    rows = cluster.query(
        "SELECT id::text AS id FROM tasks WHERE id = ANY($1::uuid[]) AND state = 'RUNNING'", ids
    )
    return {r["id"] for r in rows}


def _explained(client: Any, task_id: str, reason: str) -> Any:
    explanation = client.explain(task_id)
    return explanation if explanation.reason == reason else None


@pytest.mark.cluster(workers=2, concurrency=4)
def test_a_full_concurrency_key_waits_while_another_key_runs_and_a_cancel_frees_a_unit(cluster: Any) -> None:
    client = cluster.client()
    client.limits.create("per-customer", concurrency=2, per_key=True)
    a = [client.submit("sleep", 60, limits={"per-customer": "a"}, fairness_key="a").id for _ in range(4)]
    b = client.submit("sleep", 60, limits={"per-customer": "b"}, fairness_key="b").id
    wait_until(
        lambda: len(_running(cluster, a)) == 2 and b in _running(cluster, [b]),
        timeout=30,
        what="two of a and b running",
    )
    held = next(i for i in a if i not in _running(cluster, a))
    explained = wait_until(
        lambda: _explained(client, held, "CONCURRENCY_FULL"), timeout=10, what="the held task's gate"
    )
    assert explained.gate is not None
    assert (explained.gate.limit, explained.gate.key) == ("per-customer", "a")
    assert set(explained.gate.holder_ids) == _running(cluster, a)
    assert "per-customer" in explained.message
    usage = client.limits.get("per-customer").usage
    assert usage is not None and usage.units_in_use == 3 and usage.waiting == 2

    # A running attempt cancelled: its unit goes to the oldest task waiting for key a.
    first = sorted(_running(cluster, a))[0]
    client.cancel(first)
    wait_until(
        lambda: held in _running(cluster, a), timeout=30, what="the held task admitted after the cancel"
    )
    assert len(_running(cluster, a)) == 2
    for task_id in [*a, b]:
        if task_id != first:
            client.cancel(task_id)


@pytest.mark.cluster(workers=1, concurrency=8)
def test_a_rate_limit_holds_tasks_back_until_its_next_admission(cluster: Any) -> None:
    client = cluster.client()
    client.limits.create("api", rate=1, period=3600.0, burst=2)
    ids = [client.submit("add", i, i, limits={"api": ""}).id for i in range(3)]
    assert [client.wait(i, timeout=30).result for i in ids[:2]] == [0, 2]
    explained = wait_until(
        lambda: _explained(client, ids[2], "RATE_LIMITED"), timeout=10, what="the third task's gate"
    )
    assert explained.gate is not None and explained.gate.limit == "api"
    assert explained.gate.next_admission_at is not None
    # Raising the limit takes effect on the leader: the held task runs.
    client.limits.update("api", rate=1000, period=1.0, burst=1000)
    assert client.wait(ids[2], timeout=30).result == 4


@pytest.mark.cluster(workers=1, concurrency=1)
def test_fair_share_serves_a_second_key_through_a_flood(cluster: Any) -> None:
    client = cluster.client()
    flood = client.submit_many([{"name": "sleep", "args": [0.02], "fairness_key": "a"} for _ in range(40)])
    late = client.submit("sleep", 0.02, fairness_key="b")
    done = {t.id: client.wait(t.id, timeout=60) for t in [*flood, late]}
    assert all(t.state.name == "SUCCESS" for t in done.values())
    late_created, late_started = done[late.id].created_at, done[late.id].started_at
    after = [t for t in flood if done[t.id].started_at > late_started]
    assert len(after) >= 20, "the flood drained before the second key came: the test did not test"
    # Between its arrival and its start, at most the flood's task that held the one
    # slot and one turn of its key went first.
    between = [t for t in flood if late_created < done[t.id].started_at < late_started]
    assert len(between) <= 2


@pytest.mark.cluster(task_modules=("taskyard.examples", "support.declared_limits"))
def test_the_first_task_of_a_name_gets_the_limits_its_pool_declares(cluster: Any) -> None:
    """The pool declares before it registers, and the scheduler reads the limits when
    it registers: a task accepted under the name has them, with no wait between."""
    client = cluster.client()
    task = client.submit("send_invoice", 7, customer_id="c-42")
    assert client.wait(task.id, timeout=60).result == 7
    uses = sorted((u.limit, u.key) for u in client.get(task.id).limits)
    assert uses == [("send_invoice.concurrency", "c-42"), ("send_invoice.rate", "c-42")]
