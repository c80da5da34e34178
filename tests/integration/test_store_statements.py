"""Every named statement of the store, as rewritten for asyncpg, prepares on the
migrated schema and takes exactly the parameters it names, with the types its
casts give them."""

from __future__ import annotations

import asyncpg
import pytest

from taskyard.result_store.queries import FRAGMENTS, STATEMENTS

pytestmark = pytest.mark.asyncio


async def test_every_statement_prepares_with_its_named_parameters(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        prepared = 0
        for name, statement in STATEMENTS.items():
            if name in FRAGMENTS:
                continue
            ps = await conn.prepare(statement.sql)
            assert len(ps.get_parameters()) == len(statement.params), name
            prepared += 1
        assert prepared == len(STATEMENTS) - len(FRAGMENTS)
        lease = STATEMENTS["lease_tasks"]
        kinds = (await conn.prepare(lease.sql)).get_parameters()
        types = {p: t.name for p, t in zip(lease.params, kinds, strict=True)}
        # The text columns come as one array literal (text), the others as arrays.
        assert types == {
            "ids": "uuid[]",
            "tokens": "text",
            "pool_ids": "text",
            "lease_ms": "int8[]",
            "sources": "task_state[]",
            "term": "int8",
        }
    finally:
        await conn.close()
