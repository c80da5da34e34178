"""The PostgreSQL fixtures give each test a fresh, migrated database."""

from __future__ import annotations

import asyncpg
import pytest


@pytest.mark.asyncio
async def test_database_is_migrated(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        versions = [r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")]
        assert "0001_init" in versions
        assert await conn.fetchval("SELECT count(*) FROM task_transitions") > 0
        await conn.execute("CREATE TABLE scratch (x int)")
    finally:
        await conn.close()


@pytest.mark.asyncio
async def test_each_test_gets_its_own_database(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        assert await conn.fetchval("SELECT to_regclass('scratch')") is None
        assert await conn.fetchval("SELECT count(*) FROM tasks") == 0
    finally:
        await conn.close()
