"""The schedulers' election in SQL (real PostgreSQL, in-process store, through its
route): acquire, renew, expiry and release by the database's clock, and the term
fencing of the writes only a leader may make (leases at dispatch and at
submission, restart reconciliation)."""

from __future__ import annotations

from typing import Any

import pytest
from support.bus_events import Subscriber

from taskyard.bus.v1 import envelope_pb2, leader_pb2, leases_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import contract, errors, ids, rpc
from taskyard.core.states import TaskState as S

pytestmark = pytest.mark.asyncio

TTL_MS = 2_000


async def ask(store: Any, holder: str, term: int = 0, *, release: bool = False) -> leader_pb2.LeadershipReply:
    request = leader_pb2.LeadershipRequest(holder=holder, term=term, ttl_ms=TTL_MS, release=release)
    reply = await leadership_route(store)(request, envelope_pb2.Envelope())
    assert isinstance(reply, leader_pb2.LeadershipReply)
    return reply


def leadership_route(store: Any) -> Any:
    """The handler the store serves the election with (its route, as a REP socket calls it)."""
    return rpc.route_table(store.routes())[contract.STORE_LEADERSHIP.kind].handler


async def expire(store: Any) -> None:
    """The holder's lease lapses (by the database's clock), as if it stopped renewing."""
    await store.pool.execute("UPDATE scheduler_leader SET expires_at = now() - interval '1 millisecond'")


async def test_acquire_renew_expiry_and_release_by_the_database_clock(result_store: Any) -> None:
    store = result_store
    a = await ask(store, "a")
    assert (a.term, a.holder, a.leader) == (1, "a", True)
    assert TTL_MS - 500 < a.expires_in_ms <= TTL_MS
    # Held: another is refused and told who leads; the holder asking again keeps its term.
    b = await ask(store, "b")
    assert (b.term, b.holder, b.leader) == (1, "a", False) and b.expires_in_ms > 0
    assert (await ask(store, "a")).term == 1
    # Renewals: only with holder and term both matching.
    assert (await ask(store, "a", 1)).leader
    assert not (await ask(store, "b", 1)).leader
    assert not (await ask(store, "a", 2)).leader
    # Expired but taken by nobody: still the holder's to renew (a store that was out of reach).
    await expire(store)
    kept = await ask(store, "a", 1)
    assert kept.leader and kept.expires_in_ms > TTL_MS - 500
    # Expired: the next to ask takes it, a new term; the old holder's renewal is refused.
    await expire(store)
    b = await ask(store, "b")
    assert (b.term, b.holder, b.leader) == (2, "b", True)
    lost = await ask(store, "a", 1)
    assert (lost.term, lost.holder, lost.leader) == (2, "b", False)
    assert not (await ask(store, "a")).leader  # nor may it take the row back while b's lease runs
    # A release hands the row over at once (a stranger's release changes nothing).
    assert (await ask(store, "a", 2, release=True)).expires_in_ms > 0
    released = await ask(store, "b", 2, release=True)
    assert not released.leader and released.expires_in_ms == 0
    c = await ask(store, "c")
    assert (c.term, c.holder, c.leader) == (3, "c", True)


async def test_the_election_refuses_requests_without_a_holder_or_ttl(result_store: Any) -> None:
    for request in (
        leader_pb2.LeadershipRequest(ttl_ms=TTL_MS),
        leader_pb2.LeadershipRequest(holder="a"),
        leader_pb2.LeadershipRequest(holder="a", release=True),
    ):
        with pytest.raises(errors.TaskyardError) as caught:
            await leadership_route(result_store)(request, envelope_pb2.Envelope())
        assert caught.value.code is errors.Code.INVALID_ARGUMENT


async def _queued(store: Any, n: int) -> list[str]:
    records = [tr.TaskRecord(id=ids.new_task_id(), name="add", args_json=b"[1, 2]") for _ in range(n)]
    reply = await store.insert(tasks_pb2.InsertTasksRequest(tasks=records))
    return [t.id for t in reply.tasks]


async def _lease(store: Any, task_id: str, term: int, token: str = "") -> bool:
    token = token or f"t{term}.{ids.new_lease_token()}"
    reply = await store.lease(
        leases_pb2.LeaseTasksRequest(
            pool_id="pool-1",
            lease_ms=30_000,
            leases=[leases_pb2.Lease(task_id=task_id, lease_token=token)],
            term=term,
        )
    )
    return [t.id for t in reply.tasks] == [task_id]


async def _states(store: Any, task_ids: list[str]) -> dict[str, str]:
    rows = await store.pool.fetch(
        "SELECT id::text, state::text FROM tasks WHERE id = ANY($1::uuid[])", task_ids
    )
    return {r["id"]: r["state"] for r in rows}


async def test_a_deposed_term_leases_nothing_the_current_one_and_term_zero_do(result_store: Any) -> None:
    store = result_store
    assert (await ask(store, "a")).term == 1
    await expire(store)
    assert (await ask(store, "b")).term == 2
    old, current, unfenced = await _queued(store, 3)
    assert not await _lease(store, old, 1)  # a, deposed, has not noticed yet
    assert await _lease(store, current, 2)
    assert await _lease(store, unfenced, 0, token="tok-tools")
    assert await _states(store, [old, current, unfenced]) == {
        old: S.QUEUED.name,
        current: S.ASSIGNED.name,
        unfenced: S.ASSIGNED.name,
    }
    # The refused lease left the task for the leader.
    assert await _lease(store, old, 2)


async def test_a_deposed_terms_fast_path_inserts_the_tasks_unleased(result_store: Any) -> None:
    store = result_store
    assert (await ask(store, "a")).term == 1
    await expire(store)
    assert (await ask(store, "b")).term == 2
    by_term: dict[int, str] = {}
    for term in (1, 2):
        record = tr.TaskRecord(id=ids.new_task_id(), name="add", args_json=b"[1, 2]")
        reply = await store.insert(
            tasks_pb2.InsertTasksRequest(
                tasks=[record],
                pool_id="pool-1",
                lease_ms=30_000,
                leases=[leases_pb2.Lease(task_id=record.id, lease_token=f"t{term}.x{term}")],
                lease_term=term,
            )
        )
        assert [t.created for t in reply.tasks] == [True]  # the insert itself is never refused
        assert len(reply.leased) == (term == 2)
        by_term[term] = record.id
    assert await _states(store, list(by_term.values())) == {
        by_term[1]: S.QUEUED.name,
        by_term[2]: S.ASSIGNED.name,
    }


async def test_a_deposed_terms_submission_tells_the_leader_to_load_it(
    result_store: Any, store_settings: Any
) -> None:
    store = result_store
    assert (await ask(store, "a")).term == 1
    await expire(store)
    assert (await ask(store, "b")).term == 2
    sub = Subscriber(store_settings.events_address)
    try:
        await sub.connected()
        # The leader's own submission: its lanes have it, no wake-up. (The store's
        # LISTEN publishes one of its own when it connects: hence by commit.)
        current = tr.TaskRecord(id=ids.new_task_id(), name="add")
        await store.insert(tasks_pb2.InsertTasksRequest(tasks=[current], lease_term=2))
        await sub.wait_for(lambda e: e.task_id == current.id)
        assert sub.batch_of(lambda e: e.task_id == current.id) == ["task.queued"]
        # Through "a", deposed without knowing: inserted, and the leader is told with it.
        stale = tr.TaskRecord(id=ids.new_task_id(), name="add")
        reply = await store.insert(tasks_pb2.InsertTasksRequest(tasks=[stale], lease_term=1))
        assert [t.created for t in reply.tasks] == [True]
        await sub.wait_for(lambda e: e.task_id == stale.id)
        assert sub.batch_of(lambda e: e.task_id == stale.id) == ["task.queued", "tasks.available"]
    finally:
        sub.close()


async def test_reconciliation_is_fenced_and_hands_back_only_earlier_terms_leases(result_store: Any) -> None:
    store = result_store
    assert (await ask(store, "a")).term == 1
    t0, t1, t2, t3 = await _queued(store, 4)
    assert await _lease(store, t0, 0, token=f"tok-{t0}")  # outside any election: term 0
    assert await _lease(store, t1, 1, token=f"t1.{t1}")
    await expire(store)
    assert (await ask(store, "b")).term == 2
    assert await _lease(store, t2, 2, token=f"t2.{t2}")
    # A token that claims a later term (none can exist while 2 leads): kept too.
    assert await _lease(store, t3, 0, token=f"t3.{t3}")
    await store.pool.execute("UPDATE tasks SET updated_at = now() - interval '10 seconds'")

    def request(term: int, prefix: str) -> leases_pb2.ReconcileRequest:
        return leases_pb2.ReconcileRequest(
            pool_ids=["pool-1"], issued_before_ms_ago=1_000, own_token_prefix=prefix, term=term
        )

    async def reconcile(req: leases_pb2.ReconcileRequest) -> set[str]:
        reply = await store.committer.submit(contract.STORE_RECONCILE, req, 1)
        return {t.id for t in reply.released}

    assert await reconcile(request(1, "t1.")) == set()  # a, deposed: releases nothing
    assert await reconcile(request(2, "t2.")) == {t0, t1}
    assert await _states(store, [t0, t1, t2, t3]) == {
        t0: S.QUEUED.name,
        t1: S.QUEUED.name,
        t2: S.ASSIGNED.name,
        t3: S.ASSIGNED.name,
    }
