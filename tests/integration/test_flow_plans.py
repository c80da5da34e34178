"""The plan of a new leader's count of the tenants' leased attempts (real PostgreSQL).

leased_flow_tenants runs every resync inline in the scheduler's flow loop: with a
tenant's history kept by retention it must read the leased attempts, not walk the
tenant's finished rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest

from taskyard.result_store.queries import bind

pytestmark = pytest.mark.asyncio

LEASED = 200
LEASED_WITH_LIMITS = 2_000
LEASED_WITHOUT = 50_000
FINISHED = 100_000
PAGE = 5_000


async def seed(conn: asyncpg.Connection) -> None:
    """acme's few leased attempts beside its many finished ones; the default
    tenant's leased attempts, few with limits, many without."""
    await conn.execute("INSERT INTO tenants (name) VALUES ('acme')")
    await conn.execute(
        """
        INSERT INTO tasks (id, name, queue, state, lease_expires_at, limit_names)
        SELECT gen_random_uuid(), 'add', 'default', 'RUNNING', now() + interval '1 hour', ARRAY['l']
        FROM generate_series(1, $1::int)
        UNION ALL
        SELECT gen_random_uuid(), 'add', 'default', 'RUNNING'::task_state, now() + interval '1 hour', NULL
        FROM generate_series(1, $2::int)
        """,
        LEASED_WITH_LIMITS,
        LEASED_WITHOUT,
    )
    await conn.execute(
        """
        INSERT INTO tasks (id, name, queue, state, lease_expires_at, tenant)
        SELECT gen_random_uuid(), 'add', 'acme/default', 'RUNNING'::task_state,
               now() + interval '1 hour', 'acme'
        FROM generate_series(1, $1::int)
        UNION ALL
        SELECT gen_random_uuid(), 'add', 'acme/default', 'SUCCESS', now(), 'acme'
        FROM generate_series(1, $2::int)
        """,
        LEASED,
        FINISHED,
    )
    await conn.execute("ANALYZE tasks")


def nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)


async def test_a_tenants_leased_attempts_are_read_without_its_finished_rows(
    database_url: str, result_store: Any
) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await seed(conn)
        query, *args = bind(
            "leased_flow_tenants",
            after_id="00000000-0000-0000-0000-000000000000",
            limit=PAGE,
            tenants=["acme"],
        )
        raw = await conn.fetchval("EXPLAIN (ANALYZE, FORMAT JSON) " + query, *args)
        rows = await conn.fetch(query, *args)
    finally:
        await conn.close()
    plan = list(nodes(json.loads(raw)[0]["Plan"]))
    assert len(rows) == LEASED + LEASED_WITH_LIMITS
    on_tasks = [n for n in plan if n.get("Relation Name") == "tasks" or n.get("Index Name")]
    assert not [n for n in on_tasks if n["Node Type"] == "Seq Scan"], on_tasks
    assert not [n for n in on_tasks if n.get("Index Name") == "tasks_pkey"], on_tasks
    assert any(n.get("Index Name") == "tasks_leased_tenant_idx" for n in plan), plan
    # The finished rows are not read and dropped.
    read = sum(n.get("Rows Removed by Filter", 0) + n.get("Rows Removed by Index Recheck", 0) for n in plan)
    assert read == 0, on_tasks
