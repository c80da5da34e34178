"""What one tenant does reaches no other tenant's rows, counts or names: a purge, a
parent id, a request id or idempotency key, the suite's caps and key weights, on
a real store with its own database (``result_store``, called in process).
"""

from __future__ import annotations

import json
import time
from typing import Any

import asyncpg
import pytest
from integration.test_dead_letters_store import fail
from integration.test_store_tenants import EVERY, change, insert, scope, tenant
from support.records import task as add_task

from taskyard.bus.v1 import failures_pb2, flow_pb2, queues_pb2, tenants_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import errors, ids
from taskyard.v1 import failure_service_pb2 as fs
from taskyard.v1 import limit_pb2

pytestmark = pytest.mark.asyncio
Op = tenants_pb2.ChangeTenantRequest.Op
A, B = scope("acme"), scope("beta")


async def tenants_ab(store: Any) -> None:
    await change(store, Op.OP_CREATE, tenant("acme"))
    await change(store, Op.OP_CREATE, tenant("beta"))


async def finished(store: Any, who: str) -> str:
    """The id of a task of ``who``'s that succeeded an hour ago."""
    tid = ids.new_task_id()
    await store.pool.execute(
        "INSERT INTO tasks (id, name, tenant, state, finished_at)"
        " VALUES ($1, 'add', $2, 'SUCCESS', now() - interval '1 hour')",
        tid,
        who,
    )
    return tid


async def ids_left(store: Any, *ids: str) -> set[str]:
    rows = await store.pool.fetch("SELECT id::text AS id FROM tasks WHERE id = ANY($1::uuid[])", list(ids))
    return {r["id"] for r in rows}


# --- purge -------------------------------------------------------------------------------------------
async def test_a_tenants_purge_deletes_its_own_finished_tasks_only(result_store: Any) -> None:
    await tenants_ab(result_store)
    a, b, d = [await finished(result_store, who) for who in ("acme", "beta", "")]

    async def purge(where: tenants_pb2.TenantScope) -> int:
        req = queues_pb2.QueueOpRequest(op=queues_pb2.QUEUE_OP_PURGE, older_than_us=1_000, scope=where)
        reply: queues_pb2.QueueOpReply = await result_store.ops.queue_op(req)
        return reply.count

    assert await purge(A) == 1
    assert await ids_left(result_store, a, b, d) == {b, d}
    assert await purge(scope()) == 1  # the default tenant's, as an operator acting as it
    assert await ids_left(result_store, a, b, d) == {b}
    assert await purge(EVERY) == 1
    assert await ids_left(result_store, a, b, d) == set()


# --- request ids and idempotency keys ----------------------------------------------------------------
async def test_a_request_id_or_key_is_its_tenants_own(result_store: Any, database_url: str) -> None:
    """The default tenant's keys are stored bare and may hold a '/': its "acme/r1" is
    the text acme's "r1" is stored as, and still not acme's."""
    await tenants_ab(result_store)
    later_us = (time.time_ns() // 1000) + 3_600_000_000

    def keyed(who: str, **keys: Any) -> tr.TaskRecord:
        if "idempotency_key" in keys:
            keys["idempotency_expires_at_us"] = later_us
        return add_task(tenant=who, **keys)

    async def outcome(*records: tr.TaskRecord) -> list[tuple[str, bool]]:
        reply = await insert(result_store, *records)
        return [(t.id, t.created) for t in reply.tasks]

    theirs = [keyed("", request_id="acme/r1"), keyed("", idempotency_key="acme/k1")]
    assert [c for _, c in await outcome(*theirs)] == [True, True]
    mine = [keyed("acme", request_id="r1"), keyed("acme", idempotency_key="k1")]
    assert await outcome(*mine) == [(mine[0].id, True), (mine[1].id, True)]
    # Again, alone and in a batch with the default tenant's: each finds its own tenant's task.
    again = [keyed("acme", request_id="r1"), keyed("acme", idempotency_key="k1")]
    assert await outcome(*again) == [(mine[0].id, False), (mine[1].id, False)]
    both = [keyed("", request_id="acme/r1"), keyed("acme", request_id="r1"), keyed("beta", request_id="r1")]
    (d, a, b) = await outcome(*both)
    assert (d, a) == ((theirs[0].id, False), (mine[0].id, False)) and b == (both[2].id, True)
    # The transactional enqueue: the same.
    conn = await asyncpg.connect(database_url)
    try:
        submit = "SELECT taskyard_submit('add', '[1]', '{}', $1::jsonb, 'acme')"
        plain = "SELECT taskyard_submit('add', '[1]', '{}', $1::jsonb)"
        held = await conn.fetchval(plain, json.dumps({"request_id": "acme/r2"}))
        one = await conn.fetchval(submit, json.dumps({"request_id": "r2"}))
        two = await conn.fetchval(submit, json.dumps({"request_id": "r2"}))
        window = {"idempotency_key": "acme/k2", "idempotency_window": 3600}
        key_held = await conn.fetchval(plain, json.dumps(window))
        key_one = await conn.fetchval(submit, json.dumps({**window, "idempotency_key": "k2"}))
        key_two = await conn.fetchval(submit, json.dumps({**window, "idempotency_key": "k2"}))
        tenants = dict(
            await conn.fetch("SELECT id, tenant FROM tasks WHERE id = ANY($1::uuid[])", [one, key_one])
        )
    finally:
        await conn.close()
    assert held != one == two and key_held != key_one == key_two
    assert tenants == {one: "acme", key_one: "acme"}


async def test_an_expired_key_is_freed_for_its_own_tenant_only(result_store: Any) -> None:
    """acme's "k" takes no expired key of the default tenant's "acme/k" (the same text)."""
    await tenants_ab(result_store)
    later_us = (time.time_ns() // 1000) + 3_600_000_000
    theirs = add_task(idempotency_key="acme/k", idempotency_expires_at_us=later_us)
    await insert(result_store, theirs)
    await result_store.pool.execute(  # its window has passed
        "UPDATE tasks SET idempotency_expires_at = now() - interval '1 second' WHERE id = $1", theirs.id
    )
    mine = add_task(tenant="acme", idempotency_key="k", idempotency_expires_at_us=later_us)
    assert [t.created for t in (await insert(result_store, mine)).tasks] == [True]
    keys = dict(await result_store.pool.fetch("SELECT id::text, idempotency_key FROM tasks"))
    assert keys == {theirs.id: "acme/k", mine.id: "acme/k"}


# --- key weights and the caps ------------------------------------------------------------------------
Weight, Create = flow_pb2.LIMIT_OP_SET_WEIGHT, flow_pb2.LIMIT_OP_CREATE


async def limit_change(store: Any, where: tenants_pb2.TenantScope, **kw: Any) -> flow_pb2.ChangeLimitReply:
    reply: flow_pb2.ChangeLimitReply = await store.limits.change(
        flow_pb2.ChangeLimitRequest(scope=where, **kw)
    )
    return reply


async def refusal(call: Any) -> errors.TaskyardError:
    with pytest.raises(errors.TaskyardError) as caught:
        await call
    return caught.value


async def test_a_key_weight_is_its_tenants_own(result_store: Any) -> None:
    """The default tenant's key "acme/k1" (its keys may hold a '/') is not acme's "k1"."""
    await tenants_ab(result_store)

    async def weights(where: tenants_pb2.TenantScope) -> list[tuple[str, str, int]]:
        reply = await result_store.limits.read(flow_pb2.ReadLimitsRequest(scope=where))
        return [(w.tenant, w.key, w.weight) for w in reply.weights]

    await limit_change(result_store, scope(), op=Weight, weight=limit_pb2.KeyWeight(key="acme/k1", weight=7))
    set_a = await limit_change(result_store, A, op=Weight, weight=limit_pb2.KeyWeight(key="k1", weight=5))
    assert (set_a.weight.tenant, set_a.weight.key, set_a.weight.weight) == ("acme", "acme/k1", 5)
    assert await weights(A) == [("acme", "acme/k1", 5)]
    assert await weights(scope()) == [("", "acme/k1", 7)]
    assert sorted(await weights(EVERY)) == [("", "acme/k1", 7), ("acme", "acme/k1", 5)]
    # Removing acme's leaves the default tenant's.
    await limit_change(result_store, A, op=Weight, weight=limit_pb2.KeyWeight(key="k1", weight=0))
    assert await weights(A) == [] and await weights(scope()) == [("", "acme/k1", 7)]


async def test_the_caps_are_each_tenants_own(result_store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A small cap stands for 10,000 limits, 10,000 weights and 100 active redrives: one
    tenant's use of it leaves another's whole, and the refusal tells its own count only."""
    from taskyard.core import limits as rules
    from taskyard.result_store.writes import redrives

    await tenants_ab(result_store)
    monkeypatch.setattr(rules, "MAX_LIMITS", 2)
    monkeypatch.setattr(rules, "MAX_WEIGHTS", 2)
    monkeypatch.setattr(redrives, "MAX_ACTIVE", 1)
    rate = limit_pb2.Limit(rate=rules.parse_rate("10/s"))
    for name in ("l1", "l2"):
        await limit_change(result_store, A, op=Create, limit=limit_pb2.Limit(name=name, rate=rate.rate))
    for key in ("k1", "k2"):
        await limit_change(result_store, A, op=Weight, weight=limit_pb2.KeyWeight(key=key, weight=3))
    over = await refusal(
        limit_change(result_store, A, op=Create, limit=limit_pb2.Limit(name="l3", rate=rate.rate))
    )
    assert (over.code, over.reason) == (errors.Code.RESOURCE_EXHAUSTED, "TOO_MANY_LIMITS")
    over = await refusal(
        limit_change(result_store, A, op=Weight, weight=limit_pb2.KeyWeight(key="k3", weight=3))
    )
    assert (over.code, over.reason) == (errors.Code.RESOURCE_EXHAUSTED, "TOO_MANY_WEIGHTS")
    for where in (B, scope()):  # beta's and the default tenant's caps are whole
        for name in ("l1", "l2"):
            await limit_change(
                result_store, where, op=Create, limit=limit_pb2.Limit(name=name, rate=rate.rate)
            )
        for key in ("k1", "k2"):
            await limit_change(result_store, where, op=Weight, weight=limit_pb2.KeyWeight(key=key, weight=3))

    # Redrives: acme's one active redrive is acme's cap, not beta's.
    (a1, a2) = await fail(result_store, n=2, tenant="acme")
    (b1,) = await fail(result_store, tenant="beta")

    async def redrive(where: tenants_pb2.TenantScope, *ids: str) -> Any:
        req = failures_pb2.CreateRedriveRequest(
            request=fs.RedriveRequest(filter=fs.FailureFilter(task_ids=list(ids)), rate=1)
        )
        req.scope.CopyFrom(where)
        return (await result_store.failures.create_redrive(req)).response.redrive

    mine = await redrive(A, a1)
    theirs = await redrive(B, b1)
    assert mine.id != theirs.id
    full = await refusal(redrive(A, a2))
    assert (full.code, full.reason) == (errors.Code.FAILED_PRECONDITION, "TOO_MANY_REDRIVES")
    assert full.message.startswith("1 of the tenant's redrives are running or paused")
    # A tenant's dead letter in an operator's redrive: the refusal names no redrive it cannot see.
    monkeypatch.setattr(redrives, "MAX_ACTIVE", 5)
    ops = await redrive(EVERY, a2)
    held = await refusal(redrive(A, a2))
    assert held.reason == "PENDING_IN_ANOTHER_REDRIVE" and ops.id not in held.message
    assert f"{a2} in a redrive of an operator's" in held.message
    again = await refusal(redrive(A, a1))
    assert again.reason == "PENDING_IN_ANOTHER_REDRIVE" and mine.id in again.message


# --- the migration -----------------------------------------------------------------------------------
async def test_the_keys_indexes_are_built_concurrently_and_a_second_run_changes_nothing(
    database_url: str,
) -> None:
    """0026 runs outside a transaction (its unique indexes built CONCURRENTLY, tasks
    taking writes meanwhile); run again (as after a crash) it leaves the same valid
    indexes and weights key."""
    from taskyard.result_store.migrate import NO_TRANSACTION, migrate, migration_files

    sql = dict(migration_files())["0026_tenant_keys"]
    assert sql.startswith(NO_TRANSACTION)
    conn = await asyncpg.connect(database_url)

    async def shape() -> list[tuple[str, bool, str]]:
        rows = await conn.fetch(
            """SELECT c.relname, i.indisvalid, pg_get_indexdef(i.indexrelid) AS def
               FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
               WHERE c.relname = ANY($1::text[])
               ORDER BY c.relname""",
            [
                "flow_weights_pkey",
                "tasks_idempotency_key",  # the keys' indexes before 0026: gone
                "tasks_idempotency_key_tenant_key",
                "tasks_request_id_key",
                "tasks_request_id_tenant_key",
            ],
        )
        return [(r["relname"], r["indisvalid"], r["def"].split(" USING ")[1]) for r in rows]

    try:
        before = await shape()
        assert before == [
            ("flow_weights_pkey", True, "btree (key, tenant)"),
            (
                "tasks_idempotency_key_tenant_key",
                True,
                "btree (idempotency_key, tenant) WHERE (idempotency_key <> ''::text)",
            ),
            (
                "tasks_request_id_tenant_key",
                True,
                "btree (request_id, tenant) WHERE (request_id <> ''::text)",
            ),
        ]
        await conn.execute("DELETE FROM schema_migrations WHERE version = '0026_tenant_keys'")
        assert await migrate(conn) == ["0026_tenant_keys"]
        assert await shape() == before
    finally:
        await conn.close()
