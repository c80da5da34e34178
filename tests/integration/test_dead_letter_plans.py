"""The plans of the statements that read around many kept dead letters (real PostgreSQL).

Dead letters are kept past retention, so they pile up: a retention chunk must not
read them again each time, and a failure group's samples must come from its own
index entries, not from a walk through every dead letter.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import asyncpg
import pytest

from taskyard.bus.v1.tenants_pb2 import TenantScope
from taskyard.result_store.queries import bind
from taskyard.result_store.reads.dead_letters import check_filter
from taskyard.v1 import failure_service_pb2 as fs

pytestmark = pytest.mark.asyncio

DEAD_LETTERS = 60_000
GROUPS = 100
PURGEABLE = 3_000
CHUNK = 1_000


async def seed(conn: asyncpg.Connection) -> None:
    """Old dead letters in GROUPS groups, then old and young final tasks that are not."""
    await conn.execute(
        """
        INSERT INTO tasks (id, name, queue, state, finished_at, dead_letter_reason, failure_group)
        SELECT gen_random_uuid(), 'add', 'q', 'FAILURE', now() - interval '30 days' + g * interval '1 ms',
               1, 'g' || (g % $2::int)
        FROM generate_series(1, $1::int) g
        """,
        DEAD_LETTERS,
        GROUPS,
    )
    await conn.execute(
        """
        INSERT INTO tasks (id, name, queue, state, finished_at)
        SELECT gen_random_uuid(), 'add', 'q', 'SUCCESS'::task_state,
               now() - interval '20 days' + g * interval '1 ms'
        FROM generate_series(1, $1::int) g
        UNION ALL
        SELECT gen_random_uuid(), 'add', 'q', 'SUCCESS'::task_state, now() - g * interval '1 ms'
        FROM generate_series(1, $1::int) g
        """,
        PURGEABLE,
    )
    await conn.execute("ANALYZE tasks")


def nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)


async def explain(conn: asyncpg.Connection, query: str, args: tuple[Any, ...]) -> list[dict[str, Any]]:
    """The nodes of the plan ``query`` ran with (EXPLAIN ANALYZE, its writes rolled back)."""
    tr = conn.transaction()
    await tr.start()
    try:
        raw = await conn.fetchval("EXPLAIN (ANALYZE, FORMAT JSON) " + query, *args)
    finally:
        await tr.rollback()
    return list(nodes(json.loads(raw)[0]["Plan"]))


async def test_a_retention_chunk_reads_only_what_it_deletes(database_url: str, result_store: Any) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await seed(conn)
        query, *args = bind(
            "purge_final",
            before_us=int((time.time() - 86_400) * 1e6),
            limit=CHUNK,
            all_tenants=True,
            tenant="",
        )
        plan = await explain(conn, query, tuple(args))
    finally:
        await conn.close()
    on_tasks = [n for n in plan if n.get("Relation Name") == "tasks"]
    assert not [n for n in on_tasks if n["Node Type"] == "Seq Scan"], on_tasks
    assert any(n.get("Index Name") == "tasks_retention_idx" for n in plan), plan
    # Not one of the dead letters it keeps is read and dropped, nor more than a chunk.
    assert sum(n.get("Rows Removed by Filter", 0) for n in on_tasks) == 0, on_tasks
    assert all(n["Actual Rows"] <= CHUNK for n in on_tasks), on_tasks
    (delete,) = [n for n in plan if n["Node Type"] == "ModifyTable"]
    assert delete["Actual Rows"] == CHUNK


async def test_a_groups_samples_are_read_through_the_groups_index(
    database_url: str, result_store: Any
) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await seed(conn)
        f = check_filter(fs.FailureFilter(queue="q"), scope=TenantScope(all=True), groups=True)
        query, *args = bind("failure_groups", **f.params(), after_n=None, after_group="", limit=GROUPS)
        plan = await explain(conn, query, tuple(args))
    finally:
        await conn.close()
    samples = [
        n
        for n in plan
        if n.get("Index Name") == "tasks_dead_letter_groups_idx"
        and "failure_group" in n.get("Index Cond", "")
    ]
    assert samples, plan
    # Each group's five newest, not a walk through the other groups' dead letters.
    assert all(n.get("Rows Removed by Filter", 0) == 0 for n in samples), samples
