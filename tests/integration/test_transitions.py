"""core.states.TRANSITIONS and the database trigger agree on all 81 pairs."""

from __future__ import annotations

import itertools
import uuid

import asyncpg
import pytest

from taskyard.core import states
from taskyard.core.states import TaskState

PAIRS = list(itertools.product(TaskState, TaskState))


def test_there_are_81_pairs() -> None:
    assert len(PAIRS) == 81


@pytest.mark.asyncio
async def test_database_table_equals_python_table(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch("SELECT from_state::text AS f, to_state::text AS t FROM task_transitions")
    finally:
        await conn.close()
    db = {(r["f"], r["t"]) for r in rows}
    py = {(a.name, b.name) for a, b in PAIRS if states.can_transition(a, b)}
    assert db == py


@pytest.mark.asyncio
async def test_trigger_accepts_exactly_the_allowed_transitions(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    accepted: set[tuple[str, str]] = set()
    rejected: set[tuple[str, str]] = set()
    try:
        for src, dst in PAIRS:
            tid = uuid.uuid4()
            # Insert directly in the source state (inserts are not transitions).
            await conn.execute(
                "INSERT INTO tasks (id, name, state) VALUES ($1, 'probe', $2::task_state)", tid, src.name
            )
            try:
                await conn.execute("UPDATE tasks SET state = $2::task_state WHERE id = $1", tid, dst.name)
            except asyncpg.exceptions.CheckViolationError as exc:
                assert "illegal task transition" in str(exc)
                rejected.add((src.name, dst.name))
            else:
                accepted.add((src.name, dst.name))
                got = await conn.fetchval("SELECT state::text FROM tasks WHERE id = $1", tid)
                assert got == dst.name
    finally:
        await conn.close()
    expected = {(a.name, b.name) for a, b in PAIRS if states.can_transition(a, b)}
    assert accepted == expected
    assert len(accepted) + len(rejected) == 81
    # Final immutable states never move, and no state moves to itself.
    for s in states.IMMUTABLE_STATES:
        assert not any(src == s.name for src, _ in accepted)
    assert not any(a == b for a, b in accepted)


@pytest.mark.asyncio
async def test_sync_repairs_a_tampered_table(database_url: str) -> None:
    from taskyard.result_store.migrate import sync_transitions

    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("INSERT INTO task_transitions VALUES ('SUCCESS', 'QUEUED')")
        assert await sync_transitions(conn) is True
        assert await sync_transitions(conn) is False
        assert not await conn.fetchval("SELECT count(*) FROM task_transitions WHERE from_state = 'SUCCESS'")
    finally:
        await conn.close()


@pytest.mark.asyncio
async def test_migrate_is_idempotent_and_concurrent_safe(database_url: str) -> None:
    import asyncio

    from taskyard.result_store.migrate import migrate_dsn

    results = await asyncio.gather(*(migrate_dsn(database_url) for _ in range(4)))
    assert all(r == [] for r in results)
