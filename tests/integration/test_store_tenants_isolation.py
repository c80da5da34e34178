"""What one tenant does reaches no other tenant's rows, counts or names: a purge, a
parent id, a request id or idempotency key, the suite's caps and key weights, on
a real store with its own database (``result_store``, called in process).
"""

from __future__ import annotations

from typing import Any

import pytest
from integration.test_store_tenants import EVERY, change, scope, tenant

from taskyard.bus.v1 import queues_pb2, tenants_pb2
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
