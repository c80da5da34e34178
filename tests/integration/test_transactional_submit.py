"""taskyard_submit (migrations/0017_transactional_submit.sql) on a real PostgreSQL:
it writes the row the store writes for the same SubmitTask, refuses what the gateway
refuses with the gateway's reasons, accepts a request once, and a transaction of many
calls wakes the listeners once."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from support.waiting import wait_until_async

from taskyard.bus.v1 import tasks_pb2
from taskyard.core import codec, graph, names, payload, validation
from taskyard.core.config import Settings
from taskyard.v1 import task_pb2

pytestmark = pytest.mark.asyncio

DOC = Path(__file__).resolve().parents[2] / "docs" / "transactional-enqueue.md"
# Columns a row has whoever writes it, bar those unique to each task or moment.
_OWN = {"id", "root_id", "created_at", "updated_at", "trace_headers", "idempotency_expires_at"}


async def _connect(database_url: str) -> asyncpg.Connection:
    conn = await asyncpg.connect(database_url)
    await conn.execute("INSERT INTO task_names (name) VALUES ('add') ON CONFLICT DO NOTHING")
    return conn


async def _refusal(conn: asyncpg.Connection, *call: Any) -> asyncpg.PostgresError:
    with pytest.raises(asyncpg.PostgresError) as info:
        await conn.fetchval("SELECT taskyard_submit($1, $2::jsonb, $3::jsonb, $4::jsonb)", *call)
    return info.value


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


async def test_its_limits_are_the_gateways(database_url: str) -> None:
    conn = await _connect(database_url)
    try:
        source = await conn.fetchval("SELECT prosrc FROM pg_proc WHERE proname = 'ty_submission_of'")
        declared = dict(re.findall(r"\n\s*(\w+) constant \w+ := ([^;]+);", source))
        values = {k: await conn.fetchval(f"SELECT {v}") for k, v in declared.items() if k != "known_options"}
    finally:
        await conn.close()
    assert values == {
        "max_name_chars": validation.MAX_NAME_CHARS,
        "max_request_id_chars": validation.MAX_REQUEST_ID_CHARS,
        "max_idempotency_key_chars": validation.MAX_IDEMPOTENCY_KEY_CHARS,
        "max_labels": validation.MAX_LABELS,
        "max_label_key_chars": validation.MAX_LABEL_KEY_CHARS,
        "max_label_value_chars": validation.MAX_LABEL_VALUE_CHARS,
        "max_timeout_ms": validation.MAX_TIMEOUT_MS,
        "max_retries_limit": validation.MAX_RETRIES_LIMIT,
        "max_idempotency_window_ms": validation.MAX_IDEMPOTENCY_WINDOW_MS,
        "default_idempotency_window_ms": graph.DEFAULT_IDEMPOTENCY_WINDOW_MS,
        "max_eta_days": validation.MAX_ETA_DAYS,
        "max_nesting": payload.MAX_NESTING,
        "queue_pattern": f"^{names.PATTERN}$",
    }


async def test_the_row_is_the_one_the_store_writes_for_the_gateway(
    result_store: Any, database_url: str
) -> None:
    spec = task_pb2.TaskSpec(name="add", queue="reports.nightly", priority=task_pb2.PRIORITY_HIGH)
    spec.args.extend([2, 3])
    spec.kwargs.update({"note": "x"})
    spec.labels.update({"team": "billing"})
    (rec,) = codec.build_records(
        [spec], known_names={"add"}, limits=codec.Limits.from_settings(Settings()), field="task", single=True
    )
    reply = await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[rec]))
    gateway_id = reply.tasks[0].id

    conn = await _connect(database_url)
    try:
        sql_id = await conn.fetchval(
            "SELECT taskyard_submit('add', '[2, 3]', '{\"note\": \"x\"}', "
            '\'{"queue": "reports.nightly", "priority": "high", "labels": {"team": "billing"}}\')'
        )
        rows = {
            str(r["id"]): dict(r)
            for r in await conn.fetch("SELECT * FROM tasks WHERE id = ANY($1::uuid[])", [gateway_id, sql_id])
        }
        events = await conn.fetch(
            "SELECT task_id, type, state, attempt, priority, queue, task_name, root_id = task_id AS own_root "
            "FROM events WHERE task_id = ANY($1::uuid[]) ORDER BY id",
            [gateway_id, sql_id],
        )
    finally:
        await conn.close()
    by_sql, by_gateway = rows[str(sql_id)], rows[gateway_id]
    assert {k: v for k, v in by_sql.items() if k not in _OWN} == {
        k: v for k, v in by_gateway.items() if k not in _OWN
    }
    assert by_sql["root_id"] == by_sql["id"] and str(by_gateway["root_id"]) == gateway_id
    assert by_sql["state"] == "QUEUED" and by_sql["attempt"] == 1
    assert by_sql["max_retries"] == -1 and by_sql["timeout_ms"] == 0  # the task's own, else the defaults
    # Time-ordered ids, as the gateway's (core/ids.py): version 7.
    assert sql_id.version == 7
    # One task.queued event each, written by the insert's trigger.
    assert [(str(e["task_id"]) == gateway_id, e["type"], e["state"], e["own_root"]) for e in events] == [
        (True, "task.queued", task_pb2.TASK_STATE_QUEUED, True),
        (False, "task.queued", task_pb2.TASK_STATE_QUEUED, True),
    ]


# (name, args, kwargs, options) -> (reason, field)
_BAD: list[tuple[tuple[Any, ...], tuple[str, str]]] = [
    (("nope", "[]", "{}", "{}"), ("UNKNOWN_TASK_NAME", "name")),
    (("", "[]", "{}", "{}"), ("INVALID_ARGUMENT", "name")),
    (("add", '{"a": 1}', "{}", "{}"), ("INVALID_ARGUMENT", "args")),
    (("add", "[]", "[1]", "{}"), ("INVALID_ARGUMENT", "kwargs")),
    (("add", json.dumps(["x" * 300_000]), "{}", "{}"), ("PAYLOAD_TOO_LARGE", "args")),
    (("add", "[]", json.dumps({"big": "x" * 300_000}), "{}"), ("PAYLOAD_TOO_LARGE", "kwargs")),
    (("add", json.dumps(_nested(payload.MAX_NESTING + 1)), "{}", "{}"), ("PAYLOAD_TOO_DEEP", "args")),
    (("add", "[]", json.dumps({"k": _nested(payload.MAX_NESTING)}), "{}"), ("PAYLOAD_TOO_DEEP", "kwargs")),
    (("add", "[]", "{}", '{"queue": "no spaces"}'), ("INVALID_ARGUMENT", "options.queue")),
    (("add", "[]", "{}", json.dumps({"queue": "q" * 129})), ("INVALID_ARGUMENT", "options.queue")),
    (("add", "[]", "{}", '{"priority": 7}'), ("INVALID_ARGUMENT", "options.priority")),
    (("add", "[]", "{}", '{"priority": "urgent"}'), ("INVALID_ARGUMENT", "options.priority")),
    (("add", "[]", "{}", '{"timeout": 0}'), ("INVALID_ARGUMENT", "options.timeout")),
    (("add", "[]", "{}", '{"timeout": 90000}'), ("INVALID_ARGUMENT", "options.timeout")),
    (("add", "[]", "{}", '{"max_retries": 101}'), ("INVALID_ARGUMENT", "options.max_retries")),
    (("add", "[]", "{}", '{"max_retries": "3"}'), ("INVALID_ARGUMENT", "options.max_retries")),
    (("add", "[]", "{}", '{"countdown": -1}'), ("INVALID_ARGUMENT", "options.countdown")),
    (
        ("add", "[]", "{}", '{"countdown": 1, "eta": "2030-01-01T00:00:00Z"}'),
        ("INVALID_ARGUMENT", "options.countdown"),
    ),
    (("add", "[]", "{}", '{"eta": "tomorrow-ish"}'), ("INVALID_ARGUMENT", "options.eta")),
    # PostgreSQL's own words for a time, a time without its zone, a date that does not exist
    # (all in the past, which is taken: nothing is refused for being too far ahead).
    *[
        (("add", "[]", "{}", json.dumps({"eta": eta})), ("INVALID_ARGUMENT", "options.eta"))
        for eta in (
            "infinity",
            "-infinity",
            "now",
            "epoch",
            "tomorrow",
            "today",
            "2020-01-01 09:00",
            "2020-01-01T09:00:00",
            "2020-01-01",
            "2020-02-30T09:00:00Z",
            "2020-01-01T24:00:00Z",
            "2020-01-01T09:00:00+24:00",
            "0000-01-01T00:00:00Z",
            "Jan 1 2020 09:00:00 UTC",
        )
    ],
    (("add", "[]", "{}", '{"eta": "2999-01-01T00:00:00Z"}'), ("INVALID_ARGUMENT", "options.eta")),
    (("add", "[]", "{}", '{"labels": {"team": 1}}'), ("INVALID_ARGUMENT", 'options.labels["team"]')),
    (
        ("add", "[]", "{}", json.dumps({"labels": {f"k{i}": "v" for i in range(65)}})),
        ("INVALID_ARGUMENT", "options.labels"),
    ),
    (("add", "[]", "{}", json.dumps({"request_id": "r" * 256})), ("INVALID_ARGUMENT", "options.request_id")),
    (("add", "[]", "{}", '{"idempotency_window": 60}'), ("INVALID_ARGUMENT", "options.idempotency_window")),
    (
        ("add", "[]", "{}", '{"idempotency_key": "k", "idempotency_window": 0}'),
        ("INVALID_ARGUMENT", "options.idempotency_window"),
    ),
    (("add", "[]", "{}", '{"depends_on": []}'), ("INVALID_ARGUMENT", "options.depends_on")),
    (("add", "[]", "{}", "[]"), ("INVALID_ARGUMENT", "options")),
]


@pytest.mark.parametrize(("call", "refused"), _BAD, ids=[f"{r[1]}-{i}" for i, (_, r) in enumerate(_BAD)])
async def test_a_bad_call_is_refused_with_the_gateways_reason(
    database_url: str, call: tuple[Any, ...], refused: tuple[str, str]
) -> None:
    conn = await _connect(database_url)
    try:
        exc = await _refusal(conn, *call)
        assert exc.sqlstate == "22023", exc
        assert (exc.detail, exc.hint) == refused, str(exc)
        assert str(exc).startswith(f"{refused[0]}: {refused[1]}: "), str(exc)
        assert await conn.fetchval("SELECT count(*) FROM tasks") == 0
    finally:
        await conn.close()


async def test_within_the_limits_is_accepted(database_url: str) -> None:
    conn = await _connect(database_url)
    try:
        fine = [
            ("add", json.dumps(_nested(payload.MAX_NESTING)), "{}", "{}"),
            ("add", "[]", "{}", json.dumps({"queue": "q" * 128, "priority": 1, "max_retries": 100})),
            ("add", "[]", "{}", json.dumps({"labels": {f"k{i}": "v" * 255 for i in range(64)}})),
            (
                "add",
                "[]",
                "{}",
                '{"priority": "PRIORITY_LOW", "timeout": 86400, "eta": "2000-01-01T00:00:00Z"}',
            ),
        ]
        got = [
            await conn.fetchval("SELECT taskyard_submit($1, $2::jsonb, $3::jsonb, $4::jsonb)", *c)
            for c in fine
        ]
        rows = await conn.fetch(
            "SELECT priority, queue, max_retries, timeout_ms, state::text, run_at IS NOT NULL AS has_run_at "
            "FROM tasks WHERE id = ANY($1::uuid[]) ORDER BY id",
            got,
        )
    finally:
        await conn.close()
    assert [tuple(r) for r in rows] == [
        (3, "default", -1, 0, "QUEUED", False),
        (1, "q" * 128, 100, 0, "QUEUED", False),
        (3, "default", -1, 0, "QUEUED", False),
        # An ETA already passed: queued at once, the time asked for kept.
        (4, "default", -1, 86_400_000, "QUEUED", True),
    ]


async def test_the_payload_cap_is_the_stores_setting(database_url: str) -> None:
    from taskyard.result_store.migrate import migrate_dsn

    await migrate_dsn(database_url, max_payload_bytes=100)
    conn = await _connect(database_url)
    try:
        exc = await _refusal(conn, "add", json.dumps(["x" * 100]), "{}", "{}")
        assert exc.detail == "PAYLOAD_TOO_LARGE"
        assert "over the 100-byte limit" in str(exc)
    finally:
        await conn.close()


async def test_a_countdown_schedules_the_task(database_url: str) -> None:
    conn = await _connect(database_url)
    try:
        tid = await conn.fetchval("SELECT taskyard_submit('add', '[1, 2]', '{}', '{\"countdown\": 3600}')")
        row = await conn.fetchrow(
            "SELECT state::text, round(extract(epoch FROM run_at - created_at)) AS ahead "
            "FROM tasks WHERE id = $1",
            tid,
        )
        event = await conn.fetchval("SELECT type FROM events WHERE task_id = $1", tid)
    finally:
        await conn.close()
    assert (row["state"], row["ahead"], event) == ("SCHEDULED", 3600, "task.scheduled")


async def test_an_eta_is_the_time_its_offset_says_whatever_the_sessions_time_zone(database_url: str) -> None:
    conn = await _connect(database_url)
    try:
        await conn.execute("SET TimeZone = 'Pacific/Kiritimati'")  # UTC+14: any zone read from it shows
        etas = [
            "2020-01-01T09:00:00Z",
            "2020-01-01t09:00:00.000z",
            "2020-01-01T10:30:00+01:30",
            "2020-01-01 04:00:00-05:00",
        ]
        got = [
            await conn.fetchval(
                "SELECT taskyard_submit('add', '[]', '{}', $1::jsonb)", json.dumps({"eta": eta})
            )
            for eta in etas
        ]
        many = await conn.fetchval(
            "SELECT taskyard_submit_many($1::jsonb)",
            json.dumps([{"name": "add", "options": {"eta": "2020-01-01T09:00:00Z"}}]),
        )
        rows = await conn.fetch(
            "SELECT state::text, run_at = '2020-01-01 09:00:00+00' AS due "
            "FROM tasks WHERE id = ANY($1::uuid[])",
            [*got, *many],
        )
        with pytest.raises(asyncpg.PostgresError) as info:
            await conn.fetchval(
                "SELECT taskyard_submit_many($1::jsonb)",
                json.dumps([{"name": "add"}, {"name": "add", "options": {"eta": "now"}}]),
            )
    finally:
        await conn.close()
    assert [tuple(r) for r in rows] == [("QUEUED", True)] * 5
    refused = info.value
    assert (refused.sqlstate, refused.detail, refused.hint) == (
        "22023",
        "INVALID_ARGUMENT",
        "tasks[1].options.eta",
    )
    assert str(refused).startswith("INVALID_ARGUMENT: tasks[1].options.eta: must be an RFC 3339 timestamp")


async def test_a_request_is_accepted_once(database_url: str) -> None:
    conn = await _connect(database_url)
    try:
        call = "SELECT taskyard_submit('add', $1::jsonb, '{}', $2::jsonb)"
        first = await conn.fetchval(call, "[1, 2]", '{"request_id": "order-17"}')
        again = await conn.fetchval(call, "[9, 9]", '{"request_id": "order-17"}')
        keyed = await conn.fetchval(call, "[1]", '{"idempotency_key": "mail-5", "idempotency_window": 60}')
        keyed_again = await conn.fetchval(call, "[2]", '{"idempotency_key": "mail-5"}')
        # The key's window passes: the next call makes a new task.
        await conn.execute(
            "UPDATE tasks SET idempotency_expires_at = now() - interval '1 second' WHERE id = $1", keyed
        )
        keyed_later = await conn.fetchval(call, "[3]", '{"idempotency_key": "mail-5"}')
        count = await conn.fetchval("SELECT count(*) FROM tasks")
    finally:
        await conn.close()
    assert again == first and keyed_again == keyed
    assert keyed_later not in (keyed, first)
    assert count == 3


async def test_a_request_committed_by_another_transaction_meanwhile_returns_its_task(
    database_url: str,
) -> None:
    one, two = await _connect(database_url), await _connect(database_url)
    try:
        call = "SELECT taskyard_submit('add', '[]', '{}', '{\"request_id\": \"race\"}')"
        tx = one.transaction()
        await tx.start()
        first = await one.fetchval(call)
        # The second waits on the first's uncommitted row, then finds it committed.
        second = asyncio.create_task(two.fetchval(call))
        waiting = "SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $1"
        await wait_until_async(
            lambda: one.fetchval(waiting, two.get_server_pid()), 10, "the second call to wait on the first"
        )
        await tx.commit()
        assert await asyncio.wait_for(second, 10) == first
        assert await one.fetchval("SELECT count(*) FROM tasks") == 1
    finally:
        await one.close()
        await two.close()


async def test_one_transaction_of_many_calls_notifies_once(database_url: str) -> None:
    listener, app = await asyncpg.connect(database_url), await _connect(database_url)
    got: list[str] = []
    marker = asyncio.get_running_loop().create_future()

    def on_notify(_conn: Any, _pid: int, channel: str, body: str) -> None:
        got.append(body)
        if body == "marker" and not marker.done():
            marker.set_result(None)

    try:
        channel = await app.fetchval("SELECT value FROM taskyard_config WHERE key = 'notify_channel'")
        await listener.add_listener(channel, on_notify)
        async with app.transaction():
            await app.execute(
                "SELECT taskyard_submit('add', jsonb_build_array(i), '{}', '{}') "
                "FROM generate_series(1, 1000) AS i"
            )
        # Notifications arrive in commit order: once the marker is here, so is the submit's.
        await app.execute("SELECT pg_notify($1, 'marker')", channel)
        await asyncio.wait_for(marker, 10)
        assert got == ["inserted", "marker"]
        assert await app.fetchval("SELECT count(*) FROM tasks") == 1000
    finally:
        await listener.close()
        await app.close()


def _documented_grant() -> str:
    """docs/transactional-enqueue.md, "Permissions": its one GRANT, as written."""
    blocks = re.findall(r"^```sql\n(GRANT .*?)^```$", DOC.read_text(), re.MULTILINE | re.DOTALL)
    assert len(blocks) == 1
    return str(blocks[0])


async def _refused_in_savepoint(conn: asyncpg.Connection, sql: str) -> asyncpg.PostgresError:
    with pytest.raises(asyncpg.PostgresError) as info:
        async with conn.transaction():
            await conn.execute(sql)
    return info.value


async def test_an_application_role_with_the_documented_grant_submits_and_writes_nothing_else(
    database_url: str,
) -> None:
    """The documented GRANT alone lets app_role submit (reusing an expired idempotency
    key too), and nothing more: no write to tasks or events but through the checks, no
    helper called directly, and a temporary table named like a store's table is not
    read. All in one transaction rolled back, so app_role is never committed."""
    conn = await _connect(database_url)
    tx = conn.transaction()
    await tx.start()
    try:
        await conn.execute("CREATE ROLE app_role")
        await conn.execute(_documented_grant())
        expired = await conn.fetchval(
            "SELECT taskyard_submit('add', '[0]', '{}', '{\"idempotency_key\": \"k\"}')"
        )
        await conn.execute(
            "UPDATE tasks SET idempotency_expires_at = now() - interval '1 second' WHERE id = $1", expired
        )
        await conn.execute("SET LOCAL ROLE app_role")

        one = await conn.fetchval(
            "SELECT taskyard_submit('add', '[1, 2]', '{}', '{\"idempotency_key\": \"k\"}')"
        )
        many = await conn.fetchval("""SELECT taskyard_submit_many('[{"name": "add"}, {"name": "add"}]')""")

        # Before any temporary table: an unqualified name would be found in pg_temp first.
        denied = {
            sql: (await _refused_in_savepoint(conn, sql)).sqlstate
            for sql in (
                "INSERT INTO tasks (id, name) VALUES (gen_random_uuid(), 'undeclared')",
                "UPDATE tasks SET priority = 1",
                "DELETE FROM tasks",
                "SELECT count(*) FROM tasks",
                "INSERT INTO events (kind, type) VALUES (1, 'task.succeeded')",
                "INSERT INTO task_names (name) VALUES ('undeclared')",
                "UPDATE taskyard_config SET value = '1'",
                "SELECT ty_submit_rows('{}')",
                "SELECT ty_submission_of('undeclared', '[]', '{}', '{}', now(), '', 1)",
                "SELECT ty_uuid7()",
            )
        }
        await conn.execute("CREATE TEMP TABLE task_names (name text)")
        await conn.execute("INSERT INTO pg_temp.task_names VALUES ('undeclared')")
        shadowed = await _refused_in_savepoint(conn, "SELECT taskyard_submit('undeclared')")
        await conn.execute("CREATE TEMP TABLE taskyard_config (key text, value text)")
        await conn.execute("INSERT INTO pg_temp.taskyard_config VALUES ('max_payload_bytes', '1')")
        await conn.fetchval("SELECT taskyard_submit('add', '[1, 2, 3]')")

        await conn.execute("RESET ROLE")
        events = await conn.fetch(
            "SELECT task_id, external FROM events WHERE task_id <> $1 ORDER BY id", expired
        )
        names = await conn.fetchval("SELECT count(*) FROM tasks WHERE name = 'undeclared'")
    finally:
        await tx.rollback()
        await conn.close()
    assert one != expired and len(many) == 2
    assert (shadowed.sqlstate, shadowed.detail) == ("22023", "UNKNOWN_TASK_NAME"), str(shadowed)
    assert set(denied.values()) == {"42501"}, denied  # insufficient_privilege, each of them
    assert len(events) == 4 and all(e["external"] for e in events)
    assert names == 0


async def test_a_store_role_that_is_not_a_superuser_migrates_and_owns_the_calls(database_url: str) -> None:
    """A deployment's store is an ordinary role owning its database: every migration
    applies as it, the two calls run as it, and app_role with the documented grant
    submits through them."""
    from taskyard.result_store.migrate import migrate

    suffix = uuid.uuid4().hex[:12]
    owner, database = f"store_{suffix}", f"s_{suffix}"
    admin = await asyncpg.connect(database_url)
    try:
        await admin.execute(f"CREATE ROLE {owner} LOGIN")
        await admin.execute(f'CREATE DATABASE "{database}" OWNER {owner}')
        store = await asyncpg.connect(database_url, database=database, user=owner)
        try:
            await migrate(store)
            await store.execute("INSERT INTO task_names (name) VALUES ('add')")
            owners = await store.fetch(
                "SELECT DISTINCT proowner::regrole::text AS owner, prosecdef FROM pg_proc "
                "WHERE proname LIKE 'taskyard\\_submit%'"
            )
            superuser = await store.fetchval("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        finally:
            await store.close()
        operator = await asyncpg.connect(database_url, database=database)
        tx = operator.transaction()
        await tx.start()
        try:
            await operator.execute("CREATE ROLE app_role")
            await operator.execute(_documented_grant())
            await operator.execute("SET LOCAL ROLE app_role")
            submitted = await operator.fetchval(
                "SELECT taskyard_submit('add', '[1]', '{}', '{\"eta\": \"2020-01-01T09:00:00+01:00\"}')"
            )
            denied = await _refused_in_savepoint(
                operator, "INSERT INTO tasks (id, name) VALUES (gen_random_uuid(), 'x')"
            )
            await operator.execute("RESET ROLE")
            event = await operator.fetchrow("SELECT type, external FROM events WHERE task_id = $1", submitted)
        finally:
            await tx.rollback()
            await operator.close()
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        await admin.execute(f"DROP ROLE IF EXISTS {owner}")
        await admin.close()
    assert superuser is False
    assert [tuple(r) for r in owners] == [(owner, True)]
    assert denied.sqlstate == "42501"
    assert (event["type"], event["external"]) == ("task.queued", True)


async def test_no_one_else_may_call_the_functions_and_each_finds_the_stores_tables_first(
    database_url: str,
) -> None:
    """Every function taskyard_submit and taskyard_submit_many reach (by name, through
    ty_* calls) is pinned to the store's schema then pg_temp and not executable by
    PUBLIC; the two public ones run as their owner. A helper added later without its
    line in the migrations fails here."""
    conn = await _connect(database_url)
    try:
        rows = {
            r["proname"]: r
            for r in await conn.fetch(
                "SELECT proname, prosrc, prosecdef, proconfig, "
                "has_function_privilege('public', oid, 'EXECUTE') AS public_may "
                "FROM pg_proc WHERE pronamespace = current_schema()::regnamespace "
                "AND (proname LIKE 'ty\\_%' OR proname LIKE 'taskyard\\_submit%')"
            )
        }
        schema = await conn.fetchval("SELECT current_schema()")
    finally:
        await conn.close()
    reached, todo = set(), ["taskyard_submit", "taskyard_submit_many"]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo.extend(c for c in re.findall(r"\b(ty_\w+)\s*\(", rows[name]["prosrc"]) if c in rows)
    assert {
        "ty_submission_of",
        "ty_submit_text",
        "ty_submit_eta",
        "ty_submit_rows",
        "ty_uuid7",
    } <= reached
    for name in sorted(reached):
        assert f"search_path={schema}, pg_temp" in (rows[name]["proconfig"] or []), name
        assert not rows[name]["public_may"], name
        assert rows[name]["prosecdef"] == name.startswith("taskyard_submit"), name


async def test_many_calls_in_one_are_written_in_order(database_url: str) -> None:
    conn = await _connect(database_url)
    try:
        await conn.fetchval("SELECT taskyard_submit('add', '[0]', '{}', '{\"request_id\": \"seen\"}')")
        seen = await conn.fetchval("SELECT id FROM tasks WHERE request_id = 'seen'")
        batch = [
            {"name": "add", "args": [1, 2]},
            {"name": "add", "args": [3], "options": {"request_id": "seen"}},  # accepted before
            {"name": "add", "kwargs": {"x": 1}, "options": {"idempotency_key": "twice", "queue": "q1"}},
            {"name": "add", "options": {"idempotency_key": "twice"}},  # earlier in this batch
            {"name": "add", "options": {"countdown": 60, "priority": "low"}},
        ]
        ids = await conn.fetchval("SELECT taskyard_submit_many($1::jsonb)", json.dumps(batch))
        rows = await conn.fetch(
            "SELECT id, args, kwargs::text AS kwargs, queue, priority, state::text AS state FROM tasks "
            "WHERE id = ANY($1::uuid[]) ORDER BY id",
            ids,
        )
        empty = await conn.fetchval("SELECT taskyard_submit_many('[]')")
    finally:
        await conn.close()
    assert len(ids) == 5 and ids[1] == seen and ids[3] == ids[2]
    assert len({ids[0], ids[2], ids[4]}) == 3
    by_id = {r["id"]: r for r in rows}
    assert json.loads(by_id[ids[0]]["args"]) == [1, 2]
    assert (by_id[ids[2]]["kwargs"], by_id[ids[2]]["queue"]) == ('{"x": 1}', "q1")
    assert (by_id[ids[4]]["state"], by_id[ids[4]]["priority"]) == ("SCHEDULED", 4)
    assert empty == []


_BAD_BATCHES: list[tuple[Any, tuple[str, str]]] = [
    ({"name": "add"}, ("INVALID_ARGUMENT", "tasks")),
    ([{"name": "add"}, "add"], ("INVALID_ARGUMENT", "tasks[1]")),
    ([{"name": "add", "args": [1], "eta_at": 5}], ("INVALID_ARGUMENT", "tasks[0].eta_at")),
    ([{"name": "add"}, {"name": 7}], ("INVALID_ARGUMENT", "tasks[1].name")),
    ([{"name": "add"}, {"name": "nope"}], ("UNKNOWN_TASK_NAME", "tasks[1].name")),
    (
        [{"name": "add"}, {"name": "add", "options": {"queue": "a b"}}],
        ("INVALID_ARGUMENT", "tasks[1].options.queue"),
    ),
    ([{"name": "add", "args": [_nested(payload.MAX_NESTING)]}], ("PAYLOAD_TOO_DEEP", "tasks[0].args")),
    ([{"name": "add"}] * 10_001, ("BATCH_TOO_LARGE", "tasks")),
]


@pytest.mark.parametrize(("batch", "refused"), _BAD_BATCHES, ids=[r[1] for _, r in _BAD_BATCHES])
async def test_a_bad_batch_is_refused_whole(database_url: str, batch: Any, refused: tuple[str, str]) -> None:
    conn = await _connect(database_url)
    try:
        with pytest.raises(asyncpg.PostgresError) as info:
            await conn.fetchval("SELECT taskyard_submit_many($1::jsonb)", json.dumps(batch))
        assert (info.value.sqlstate, info.value.detail, info.value.hint) == ("22023", *refused), str(
            info.value
        )
        assert await conn.fetchval("SELECT count(*) FROM tasks") == 0
    finally:
        await conn.close()


async def test_the_docs_sql_runs_as_written(database_url: str) -> None:
    """docs/transactional-enqueue.md's SQL blocks (bar the signatures, the GRANT the role
    test runs, and the tenant's call, which test_store_tenants.py runs with its tenant made),
    in a fresh database."""
    doc = DOC.read_text()
    blocks = [
        b
        for b in re.findall(r"^```sql\n(.*?)^```$", doc, re.MULTILINE | re.DOTALL)
        if "RETURNS" not in b and not b.startswith("GRANT ") and ", 'acme')" not in b
    ]
    assert len(blocks) == 2
    conn = await _connect(database_url)
    try:
        await conn.execute("CREATE TABLE orders (id serial PRIMARY KEY, item text NOT NULL)")
        for block in blocks:
            await conn.execute(block)
        rows = await conn.fetch(
            "SELECT request_id, priority, args::text AS args FROM tasks ORDER BY created_at"
        )
    finally:
        await conn.close()
    assert [tuple(r) for r in rows] == [("order-41", 3, "[41, 1]"), ("", 3, "[1, 2]"), ("", 2, "[3, 4]")]
