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
from integration.test_store_tenants import EVERY, change, insert, scope, tenant
from support.records import task as add_task

from taskyard.bus.v1 import queues_pb2, tenants_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import ids

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
