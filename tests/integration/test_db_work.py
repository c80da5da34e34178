"""The database's work per task: the time helpers are inlined and give the values
the original definitions gave, and the transition guard runs only for a
transition the table does not allow (0009_db_work.sql)."""

from __future__ import annotations

import itertools

import asyncpg
import pytest

from taskyard.core import states
from taskyard.core.states import TaskState

# The definitions of 0001_init.sql, which the planner could not inline.
OLD_US = """CREATE FUNCTION pg_temp.old_us(ts timestamptz) RETURNS bigint LANGUAGE sql IMMUTABLE
            AS $$ SELECT coalesce((extract(epoch FROM ts) * 1000000)::bigint, 0) $$"""
OLD_TS = """CREATE FUNCTION pg_temp.old_ts(us bigint) RETURNS timestamptz LANGUAGE sql IMMUTABLE
            AS $$ SELECT timestamptz 'epoch' + us * interval '1 microsecond' $$"""

TIMESTAMPS = [
    None,
    "1970-01-01 00:00:00+00",
    "1970-01-01 00:00:00.000001+00",
    "1969-12-31 23:59:59.999999+00",
    "1900-03-01 12:34:56.789012+00",
    "0001-01-01 00:00:00+00",
    "4713-01-01 00:00:00+00 BC",
    "2026-12-01 03:59:53.123456+00",
    "2026-03-29 01:30:00.5+01",
    "9999-12-31 23:59:59.999999+00",
    "294000-01-01 00:00:00.123456+00",
]
# Beyond 2^53 us the old ty_ts was not exact (a double in between); the new one
# must be off by exactly as much.
MICROSECONDS = [None, 0, 1, -1, 999_999, 1_796_097_362_936_964, -62_135_596_800_000_000, 2**53, 2**53 + 1]
# Both raise for these (no bigint holds them); the same error either way.
OUT_OF_RANGE = ["infinity", "-infinity", "294276-12-31 23:59:59+00"]


async def _connect(url: str) -> asyncpg.Connection:
    conn = await asyncpg.connect(url)
    await conn.execute(OLD_US)
    await conn.execute(OLD_TS)
    return conn


@pytest.mark.asyncio
@pytest.mark.parametrize("zone", ["UTC", "America/St_Johns", "Asia/Kathmandu"])
async def test_ty_us_and_ty_ts_equal_the_old_definitions(database_url: str, zone: str) -> None:
    conn = await _connect(database_url)
    try:
        # The session's zone must not matter (the new bodies name UTC themselves).
        await conn.execute(f"SET timezone = '{zone}'")
        for ts in TIMESTAMPS:
            row = await conn.fetchrow(
                "SELECT ty_us($1::text::timestamptz) AS new, pg_temp.old_us($1::text::timestamptz) AS old",
                ts,
            )
            assert row["new"] == row["old"], ts
        assert await conn.fetchval("SELECT ty_us(NULL)") == 0
        for us in MICROSECONDS:
            row = await conn.fetchrow(
                "SELECT ty_ts($1::bigint) AS new, pg_temp.old_ts($1::bigint) AS old, "
                "ty_us(ty_ts($1::bigint)) AS back",
                us,
            )
            assert row["new"] == row["old"], us
            if us is not None and abs(us) < 2**53:
                assert row["back"] == us
        for ts in OUT_OF_RANGE:
            errors = []
            for fn in ("ty_us", "pg_temp.old_us"):
                try:
                    await conn.fetchval(f"SELECT {fn}($1::text::timestamptz)", ts)
                except asyncpg.PostgresError as exc:
                    errors.append((type(exc), str(exc)))
            assert len(errors) == 2 and errors[0] == errors[1], (ts, errors)
    finally:
        await conn.close()


@pytest.mark.asyncio
async def test_time_helpers_are_immutable_and_inlined(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        volatility = dict(
            await conn.fetch(
                "SELECT proname, provolatile::text FROM pg_proc "
                "WHERE proname IN ('ty_us', 'ty_ts', 'tasks_transition_allowed')"
            )
        )
        assert volatility == {"ty_us": "i", "ty_ts": "i", "tasks_transition_allowed": "i"}
        plan = "\n".join(
            r[0]
            for r in await conn.fetch(
                "EXPLAIN VERBOSE SELECT ty_us(t.created_at), ty_ts(t.attempt::bigint), "
                "tasks_transition_allowed(t.state, 'QUEUED') FROM tasks t"
            )
        )
        assert "ty_us(" not in plan and "ty_ts(" not in plan and "tasks_transition_allowed(" not in plan, plan
    finally:
        await conn.close()


@pytest.mark.asyncio
async def test_transition_expression_equals_the_python_table(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch(
            "SELECT a::text AS src, b::text AS dst, tasks_transition_allowed(a, b) AS ok "
            "FROM unnest(enum_range(NULL::task_state)) a, unnest(enum_range(NULL::task_state)) b"
        )
    finally:
        await conn.close()
    got = {(r["src"], r["dst"]) for r in rows if r["ok"]}
    want = {
        (a.name, b.name) for a, b in itertools.product(TaskState, TaskState) if states.can_transition(a, b)
    }
    assert len(rows) == 81
    assert got == want


@pytest.mark.asyncio
async def test_legal_transitions_do_not_run_the_guard(database_url: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("SET track_functions = 'all'")
        async with conn.transaction():
            await conn.execute(
                "INSERT INTO tasks (id, name, state) VALUES (gen_random_uuid(), 'probe', 'QUEUED')"
            )
            await conn.execute("UPDATE tasks SET state = 'ASSIGNED' WHERE name = 'probe'")
            await conn.execute("UPDATE tasks SET state = 'RUNNING' WHERE name = 'probe'")
            await conn.execute("UPDATE tasks SET state = 'SUCCESS' WHERE name = 'probe'")
            calls = await conn.fetchval(
                "SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions "
                "WHERE funcname = 'tasks_guard_transition'"
            )
            assert calls == 0
        with pytest.raises(asyncpg.exceptions.CheckViolationError, match="illegal task transition"):
            await conn.execute("UPDATE tasks SET state = 'QUEUED' WHERE name = 'probe'")
        assert await conn.fetchval("SELECT state::text FROM tasks WHERE name = 'probe'") == "SUCCESS"
    finally:
        await conn.close()
