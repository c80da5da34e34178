"""Schema migrations: ``migrations/NNNN_*.sql`` applied in order, once each.

A session-level advisory lock serialises stores that start together; each file
runs in its own transaction and is recorded in ``schema_migrations``, but for
a file that opens with ``-- taskyard: no-transaction``: its statements run one
by one outside any transaction (CREATE INDEX CONCURRENTLY cannot run in one),
so each must be safe to run again after a crash. After the
files, the store syncs what the Python side owns: the transition table (from
``taskyard.core.states.TRANSITIONS``, the single source), the NOTIFY channel and
the payload cap that ``taskyard_submit`` reads (0017_transactional_submit.sql).
"""

from __future__ import annotations

import logging
import re
from importlib import resources

import asyncpg

from taskyard.core import states

log = logging.getLogger(__name__)

# pg_advisory_lock key: "taskyard" as a 64-bit integer.
LOCK_KEY = 0x7461736B79617264

# The first line of a migration whose statements run alone, outside a transaction.
NO_TRANSACTION = "-- taskyard: no-transaction"

_CONCURRENT_INDEX = re.compile(
    r"CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+IF\s+NOT\s+EXISTS\s+(\w+)", re.IGNORECASE
)


def migration_files() -> list[tuple[str, str]]:
    """(version, sql) of every migration, in order."""
    folder = resources.files("taskyard.result_store").joinpath("migrations")
    found = sorted(
        (p.name, p.read_text(encoding="utf-8")) for p in folder.iterdir() if p.name.endswith(".sql")
    )
    return [(name.removesuffix(".sql"), sql) for name, sql in found]


def transition_pairs() -> set[tuple[str, str]]:
    return {(src.db_name, dst.db_name) for src, targets in states.TRANSITIONS.items() for dst in targets}


async def migrate(
    conn: asyncpg.Connection, *, notify_channel: str | None = None, max_payload_bytes: int | None = None
) -> list[str]:
    """Apply pending migrations and sync transitions and settings; returns the versions applied."""
    applied: list[str] = []
    await conn.execute("SELECT pg_advisory_lock($1)", LOCK_KEY)
    try:
        await conn.execute(
            """CREATE TABLE IF NOT EXISTS schema_migrations (
                 version    text PRIMARY KEY,
                 applied_at timestamptz NOT NULL DEFAULT now()
               )"""
        )
        done = {r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")}
        for version, sql in migration_files():
            if version in done:
                continue
            if sql.startswith(NO_TRANSACTION):
                await _run_alone(conn, sql)
                await conn.execute("INSERT INTO schema_migrations (version) VALUES ($1)", version)
            else:
                async with conn.transaction():
                    await conn.execute(sql)
                    await conn.execute("INSERT INTO schema_migrations (version) VALUES ($1)", version)
            log.info("applied migration %s", version)
            applied.append(version)
        await sync_transitions(conn)
        if notify_channel is not None:
            await _sync_config(conn, "notify_channel", notify_channel)
        if max_payload_bytes is not None:
            await _sync_config(conn, "max_payload_bytes", str(max_payload_bytes))
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", LOCK_KEY)
    return applied


def statements(sql: str) -> list[str]:
    """The statements of a no-transaction migration: its ``--`` comment lines
    dropped, split at each ``;`` outside a ``$$``-quoted body (a function's: so no
    other statement may hold one inside it, nor a body another quote than ``$$``)."""
    kept = "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))
    found: list[str] = []
    current = ""
    for i, part in enumerate(kept.split("$$")):
        if i % 2:  # inside a $$ body: kept whole
            current += "$$" + part + "$$"
            continue
        first, *rest = part.split(";")
        current += first
        for piece in rest:
            found.append(current)
            current = piece
    found.append(current)
    return [s.strip() for s in found if s.strip()]


async def _run_alone(conn: asyncpg.Connection, sql: str) -> None:
    """Each statement alone. A CREATE INDEX CONCURRENTLY that a crash (or a
    cancel) interrupted leaves its index INVALID, which IF NOT EXISTS would then
    keep for good: drop it first, so the run after a crash builds it again."""
    for statement in statements(sql):
        found = _CONCURRENT_INDEX.match(statement)
        if found is not None:
            invalid = await conn.fetchval(
                """SELECT NOT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                   WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace""",
                found[1],
            )
            if invalid:
                log.warning("dropping index %s, left invalid by an interrupted build", found[1])
                await conn.execute(f'DROP INDEX CONCURRENTLY IF EXISTS "{found[1]}"')
        await conn.execute(statement)


async def _sync_config(conn: asyncpg.Connection, key: str, value: str) -> None:
    await conn.execute(
        """INSERT INTO taskyard_config (key, value) VALUES ($1, $2)
           ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value
           WHERE taskyard_config.value IS DISTINCT FROM EXCLUDED.value""",
        key,
        value,
    )


def allowed_body(pairs: set[tuple[str, str]]) -> str:
    """The body of ``tasks_transition_allowed(src, dst)`` for these pairs: one CASE
    the planner inlines into the guard trigger's WHEN (0009_db_work.sql)."""
    targets: dict[str, list[str]] = {}
    for src, dst in sorted(pairs):
        targets.setdefault(src, []).append(dst)
    arms = " ".join(
        f"WHEN '{src}' THEN '{{{','.join(dsts)}}}'::task_state[]" for src, dsts in targets.items()
    )
    return f" SELECT dst = ANY (CASE src {arms} ELSE '{{}}'::task_state[] END) "


async def sync_transitions(conn: asyncpg.Connection) -> bool:
    """Make ``task_transitions`` and ``tasks_transition_allowed`` equal to the
    Python table; True when either changed."""
    wanted = transition_pairs()
    rows = await conn.fetch("SELECT from_state::text AS f, to_state::text AS t FROM task_transitions")
    table_ok = {(r["f"], r["t"]) for r in rows} == wanted
    body = allowed_body(wanted)
    # None on a schema without it (bench/db_work --without 0009_db_work).
    current = await conn.fetchval(
        "SELECT prosrc FROM pg_proc WHERE proname = 'tasks_transition_allowed' "
        "AND pronamespace = current_schema()::regnamespace"
    )
    function_ok = current is None or current == body
    if table_ok and function_ok:
        return False
    pairs = sorted(wanted)
    async with conn.transaction():
        if not table_ok:
            await conn.execute("DELETE FROM task_transitions")
            await conn.execute(
                """INSERT INTO task_transitions (from_state, to_state)
                   SELECT f::task_state, t::task_state FROM unnest($1::text[], $2::text[]) AS x(f, t)""",
                [p[0] for p in pairs],
                [p[1] for p in pairs],
            )
        if not function_ok:
            await conn.execute(
                "CREATE OR REPLACE FUNCTION tasks_transition_allowed(src task_state, dst task_state) "
                "RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $body$" + body + "$body$"
            )
    log.info("synced %d task transitions", len(pairs))
    return True


async def migrate_dsn(
    dsn: str, *, notify_channel: str | None = None, max_payload_bytes: int | None = None
) -> list[str]:
    conn = await asyncpg.connect(dsn)
    try:
        return await migrate(conn, notify_channel=notify_channel, max_payload_bytes=max_payload_bytes)
    finally:
        await conn.close()
