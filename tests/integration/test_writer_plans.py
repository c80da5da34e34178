"""The writer's generic plans follow the size of tasks: made on an empty table
they scan it whole, so the store has the writer plan again (DISCARD PLANS) each
time the table has doubled since."""

from __future__ import annotations

import json
from typing import Any

import asyncpg

from taskyard.result_store.committer import Committer
from taskyard.result_store.queries import Q
from taskyard.result_store.store import PLAN_MIN_PAGES, WRITER_SERVER_SETTINGS, ResultStore, plans_outgrown

FILL = """
INSERT INTO tasks (id, name, args, kwargs, queue, timeout_ms, max_retries, labels, state, attempt,
                   created_at, updated_at, trace_headers)
SELECT gen_random_uuid(), 'noop', '[]', '{}', 'default', 60000, 0, '{}', 'SUCCESS', 1,
       now(), now(), '{}'
FROM generate_series(1, $1)
"""
PAGES = "SELECT pg_relation_size('tasks') / current_setting('block_size')::int"


async def fill_to(conn: asyncpg.Connection, pages: int) -> int:
    while (now := int(await conn.fetchval(PAGES))) < pages:
        await conn.execute(FILL, 500)
    return now


def scans(plan: Any) -> set[str]:
    """Node types of a JSON plan that read tasks (the UPDATE node aside)."""
    found: set[str] = set()
    stack = [plan[0]["Plan"]]
    while stack:
        node = stack.pop()
        if node.get("Relation Name") == "tasks" and node["Node Type"] != "ModifyTable":
            found.add(node["Node Type"])
        stack.extend(node.get("Plans", []))
    return found


def test_plans_are_outgrown_when_the_table_doubles() -> None:
    assert not plans_outgrown(0, PLAN_MIN_PAGES - 1)  # a small table: a scan is as cheap
    assert plans_outgrown(0, PLAN_MIN_PAGES)
    assert not plans_outgrown(100, 199)
    assert plans_outgrown(100, 200)


async def _nothing(*_: Any) -> None:
    return None


async def test_the_writer_plans_again_when_asked(database_url: str) -> None:
    """A generic plan stays as made on the empty table until the committer, asked
    to (``replan``), runs DISCARD PLANS on its connection; it is then made for the
    table as it is, without ANALYZE."""
    committer = Committer(pool=None, appliers=[], on_events=_nothing, on_finals=lambda _: None)
    conn = await asyncpg.connect(database_url, server_settings=WRITER_SERVER_SETTINGS)
    try:
        await committer._plan(conn)  # a new connection: nothing to discard
        await conn.execute(
            "PREPARE lease(uuid[], text, text, bigint[], task_state[], bigint) AS " + Q["lease_tasks"]
        )
        explain = (
            "EXPLAIN (FORMAT JSON) EXECUTE lease('{00000000-0000-4000-8000-000000000001}', "
            "'{t}', '{p}', '{1000}', '{QUEUED}', 0)"
        )
        assert scans(json.loads(await conn.fetchval(explain))) == {"Seq Scan"}
        await fill_to(conn, 4 * PLAN_MIN_PAGES)
        await committer._plan(conn)  # not asked to: the plan stays
        assert scans(json.loads(await conn.fetchval(explain))) == {"Seq Scan"}
        committer.replan()
        await committer._plan(conn)
        assert scans(json.loads(await conn.fetchval(explain))) == {"Index Scan"}
    finally:
        await conn.close()


async def test_the_store_replans_each_time_tasks_doubles(store_settings: Any, database_url: str) -> None:
    store = await ResultStore.open(store_settings, publish=False)
    conn = await asyncpg.connect(database_url)
    try:
        assert not await store.check_plans()  # empty
        pages = await fill_to(conn, PLAN_MIN_PAGES)
        assert await store.check_plans()
        assert store.committer._plans == 1
        assert not await store.check_plans()  # not grown since
        await fill_to(conn, 2 * pages)
        assert await store.check_plans()
        assert store.committer._plans == 2
    finally:
        await conn.close()
        await store.close()
