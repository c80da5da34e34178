"""Migration 0027 builds the tenants' indexes on tasks CONCURRENTLY, outside a
transaction (real PostgreSQL), and a run after an interrupted build leaves no
INVALID index behind."""

from __future__ import annotations

import asyncpg
import pytest

from taskyard.result_store.migrate import NO_TRANSACTION, migrate, migration_files

INDEXES = ("tasks_tenant_listing_idx", "tasks_tenant_dead_letters_idx", "tasks_leased_tenant_idx")


async def index_states(conn: asyncpg.Connection) -> dict[str, tuple[bool, str]]:
    rows = await conn.fetch(
        """SELECT c.relname, i.indisvalid, pg_get_indexdef(i.indexrelid) AS def
           FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           WHERE c.relname = ANY($1::text[])""",
        list(INDEXES),
    )
    return {r["relname"]: (r["indisvalid"], r["def"]) for r in rows}


def test_0027_runs_outside_a_transaction_and_0025_builds_no_index_on_tasks() -> None:
    files = dict(migration_files())
    assert files["0027_tenant_indexes"].startswith(NO_TRANSACTION)
    assert "CREATE INDEX" not in files["0025_tenants"].upper()


@pytest.mark.asyncio
async def test_a_run_after_an_interrupted_build_leaves_every_index_valid(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        assert all(valid for valid, _ in (await index_states(conn)).values())
        # An interrupted CREATE INDEX CONCURRENTLY: a unique build that fails on
        # duplicate rows leaves its index INVALID, as a crash mid-build does.
        await conn.execute("DROP INDEX tasks_leased_tenant_idx")
        await conn.execute(
            "INSERT INTO tasks (id, name, queue, state) SELECT gen_random_uuid(), 'add', 'q', 'PENDING' "
            "FROM generate_series(1, 2)"
        )
        with pytest.raises(asyncpg.UniqueViolationError):
            await conn.execute("CREATE UNIQUE INDEX CONCURRENTLY tasks_leased_tenant_idx ON tasks (queue)")
        assert (await index_states(conn))["tasks_leased_tenant_idx"][0] is False
        await conn.execute("DELETE FROM schema_migrations WHERE version = '0027_tenant_indexes'")

        assert await migrate(conn) == ["0027_tenant_indexes"]
        states = await index_states(conn)
    finally:
        await conn.close()
    assert set(states) == set(INDEXES)
    assert all(valid for valid, _ in states.values()), states
    assert "(tenant, id)" in states["tasks_leased_tenant_idx"][1]
