"""Transactional enqueue (docs/transactional-enqueue.md) against a real suite: a task
submitted with taskyard_submit inside the application's own transaction exists exactly
when that transaction commits, and is dispatched at once, woken by the NOTIFY of its
commit: every poll of the scheduler is far longer than any wait here."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from support.observability import scrape
from support.waiting import wait_until

pytestmark = pytest.mark.acceptance

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "transactional"
# The scheduler's fallback reload and its maintenance poll: far beyond every wait below,
# so a task that runs was woken by its transaction's NOTIFY.
SLOW = 600.0
SLOW_POLLS = {"polling_interval": SLOW, "fallback_polling_interval": SLOW}
MANY = 10_000
_STATES = "SELECT state::text, count(*) FROM tasks GROUP BY 1"


def _app_table(cluster: Any) -> None:
    cluster.query("CREATE TABLE app_orders (id serial PRIMARY KEY, item text NOT NULL)")


def _declared(cluster: Any, name: str) -> None:
    """The pools' names are in the registry taskyard_submit reads, and the scheduler has
    loaded what there was (a task through the gateway ran): nothing later is found by a
    start-up load."""
    wait_until(
        lambda: cluster.query("SELECT 1 FROM task_names WHERE name = $1", name), 30, f"{name} declared"
    )
    client = cluster.client()
    warm = client.submit("add", 1, 2)
    assert client.wait(warm.id, timeout=30).result == 3


async def _in_transaction(
    dsn: str, statements: list[tuple[str, tuple[Any, ...]]], *, commit: bool
) -> list[Any]:
    conn = await asyncpg.connect(dsn)
    try:
        tx = conn.transaction()
        await tx.start()
        got = [await conn.fetchval(sql, *args) for sql, args in statements]
        await (tx.commit() if commit else tx.rollback())
        return got
    finally:
        await conn.close()


@pytest.mark.cluster(**SLOW_POLLS)
def test_a_task_exists_exactly_when_its_transaction_commits(cluster: Any, journal: Path) -> None:
    _app_table(cluster)
    _declared(cluster, "journal")
    submit = "SELECT taskyard_submit('journal', $1::jsonb)"
    order = "INSERT INTO app_orders (item) VALUES ($1) RETURNING id"

    # Rolled back: no order, no task, nothing runs.
    rolled_back = asyncio.run(
        _in_transaction(
            cluster.database_url,
            [(order, ("rolled back",)), (submit, (json.dumps(["rolled-back"]),))],
            commit=False,
        )
    )[1]
    # Committed: both, and the task runs, woken by the commit's NOTIFY.
    committed = asyncio.run(
        _in_transaction(
            cluster.database_url,
            [(order, ("committed",)), (submit, (json.dumps(["committed"]),))],
            commit=True,
        )
    )[1]
    done = cluster.client().wait(str(committed), timeout=30)
    assert done.state.name == "SUCCESS" and done.result == "committed"

    assert cluster.query("SELECT id FROM tasks WHERE id = $1", rolled_back) == []
    assert [r["item"] for r in cluster.query("SELECT item FROM app_orders")] == ["committed"]
    # The tasks queued at all: the warm-up and the committed one (events are logged
    # by the same statements, so a rolled-back insert left none either).
    queued = cluster.query("SELECT task_name FROM events WHERE type = 'task.queued' ORDER BY id")
    assert [r["task_name"] for r in queued] == ["add", "journal"]
    assert journal.read_text().splitlines() == ["start committed", "done committed"]


@pytest.mark.cluster(**SLOW_POLLS)
def test_a_bad_call_raises_the_documented_error_and_rolls_back_the_applications_writes(
    cluster: Any,
) -> None:
    _app_table(cluster)
    _declared(cluster, "add")

    async def attempt() -> asyncpg.PostgresError:
        conn = await asyncpg.connect(cluster.database_url)
        try:
            with pytest.raises(asyncpg.PostgresError) as info:
                async with conn.transaction():
                    await conn.execute("INSERT INTO app_orders (item) VALUES ('book')")
                    await conn.fetchval("SELECT taskyard_submit('add', '[1, 2]')")
                    await conn.fetchval("SELECT taskyard_submit('no_such_task', '[1, 2]')")
            return info.value
        finally:
            await conn.close()

    exc = asyncio.run(attempt())
    assert (exc.sqlstate, exc.detail, exc.hint) == ("22023", "UNKNOWN_TASK_NAME", "name")
    assert exc.args[0] == "UNKNOWN_TASK_NAME: name: no worker pool serves a task named 'no_such_task'"
    assert cluster.query("SELECT * FROM app_orders") == []
    assert cluster.count_tasks() == 1  # the warm-up alone: the good call rolled back too


@pytest.mark.cluster(**SLOW_POLLS, workers=2, concurrency=32)
def test_ten_thousand_calls_in_one_transaction_all_run_exactly_once(cluster: Any, journal: Path) -> None:
    _declared(cluster, "journal")

    async def submit_all() -> int:
        conn = await asyncpg.connect(cluster.database_url)
        try:
            async with conn.transaction():
                await conn.execute(
                    "SELECT taskyard_submit('journal', jsonb_build_array('k' || i)) "
                    "FROM generate_series(1, $1::int) AS i",
                    MANY,
                )
                return int(await conn.fetchval("SELECT count(*) FROM tasks WHERE name = 'journal'"))
        finally:
            await conn.close()

    assert asyncio.run(submit_all()) == MANY
    wait_until(
        lambda: cluster.count_tasks(states=["SUCCESS"]) == MANY + 1,
        240,
        lambda: f"{MANY} tasks done (states: {cluster.query(_STATES)})",
    )
    starts = Counter(
        line.split()[1] for line in journal.read_text().splitlines() if line.startswith("start ")
    )
    assert len(starts) == MANY and set(starts.values()) == {1}
    assert set(starts) == {f"k{i}" for i in range(1, MANY + 1)}


def _run(argv: list[str], cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKYARD_") and k != "DATABASE_URL"}
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


DOC = ROOT / "docs" / "transactional-enqueue.md"
DOC_DSN = "postgresql://..."


def _documented(example: str) -> Callable[[str], list[str]]:
    """The shell command docs/transactional-enqueue.md gives for examples/transactional/<example>,
    as written (from the repository's root, its dependencies installed by the command itself
    when it says so), the database URL put in for its placeholder."""
    found = re.findall(
        rf"`(cd examples/transactional/{example} && [^`]*{re.escape(DOC_DSN)})`", DOC.read_text()
    )
    assert len(found) == 1, f"{example}: {found}"
    command = str(found[0])
    return lambda dsn: ["bash", "-c", command.replace(DOC_DSN, shlex.quote(dsn))]


_EXAMPLES = [
    ("asyncpg", lambda dsn: [sys.executable, str(EXAMPLES / "asyncpg_submit.py"), dsn], ROOT),
    ("psycopg", lambda dsn: [sys.executable, str(EXAMPLES / "psycopg_submit.py"), dsn], ROOT),
    ("sqlalchemy", lambda dsn: [sys.executable, str(EXAMPLES / "sqlalchemy_submit.py"), dsn], ROOT),
    ("pgx", _documented("go"), ROOT),
    ("pg", _documented("node"), ROOT),
]


@pytest.mark.cluster(**SLOW_POLLS)
def test_the_documented_examples_run(cluster: Any) -> None:
    """Each example of docs/transactional-enqueue.md as a user runs it (the Go and Node
    ones by the doc's own command lines, `npm ci` included): its order and its task
    committed together, the task run, a bad call refused and rolled back."""
    _declared(cluster, "add")
    client = cluster.client()
    for via, argv, cwd in _EXAMPLES:
        out = _run(argv(cluster.database_url), cwd)
        found = re.search(r"^order (\d+) committed with task ([0-9a-f-]{36})$", out, re.MULTILINE)
        assert found, f"{via}: {out}"
        order_id, task_id = int(found[1]), found[2]
        done = client.wait(task_id, timeout=30)
        assert (done.state.name, done.result, dict(done.labels)) == ("SUCCESS", order_id + 1, {"via": via}), (
            via
        )
        assert "refused: sqlstate 22023, reason UNKNOWN_TASK_NAME, field name" in out, f"{via}: {out}"
        stored = cluster.query("SELECT item, task_id::text AS task_id FROM orders WHERE id = $1", order_id)
        assert stored == [{"item": "book", "task_id": task_id}], via
    assert cluster.query("SELECT count(*) AS n FROM orders WHERE item = 'never stored'") == [{"n": 0}]


BACKLOG = 5_000
BURST = 1_000
BURST_CONNECTIONS = 8


def _lanes_reloads(cluster: Any) -> float:
    """The scheduler's full reloads of every QUEUED row so far (taskyard_lanes_reloads_total)."""
    text = scrape(cluster.metrics_ports["scheduler"])
    found = re.search(r"^taskyard_lanes_reloads_total (\S+)$", text, re.M)
    assert found is not None, "taskyard_lanes_reloads_total not served"
    return float(found.group(1))


@pytest.mark.cluster(metrics=True, **SLOW_POLLS)
def test_small_transactions_reach_the_lanes_without_reloading_the_backlog(
    cluster: Any, journal: Path
) -> None:
    """A backlog waits in a paused queue; then 1,000 transactions of one call each, from
    several connections at once: each task runs exactly once, and the scheduler never
    reads the backlog again (each commit's NOTIFY brings its own task). A reconnect of
    the store's listener still loads everything."""
    _declared(cluster, "journal")
    client = cluster.client()
    client.queues.pause("parked")
    cluster.query(
        "SELECT taskyard_submit('journal', jsonb_build_array('parked' || i), '{}', "
        """'{"queue": "parked"}') FROM generate_series(1, $1::int) AS i""",
        BACKLOG,
    )
    reloads = _lanes_reloads(cluster)

    submit = "SELECT taskyard_submit('journal', jsonb_build_array($1::text))"

    async def one_connection(first: int, count: int) -> None:
        conn = await asyncpg.connect(cluster.database_url)
        try:
            for i in range(first, first + count):
                async with conn.transaction():
                    await conn.execute("INSERT INTO app_orders (item) VALUES ($1)", f"b{i}")
                    await conn.execute(submit, f"b{i}")
        finally:
            await conn.close()

    async def burst() -> None:
        per = BURST // BURST_CONNECTIONS
        await asyncio.gather(*(one_connection(c * per, per) for c in range(BURST_CONNECTIONS)))

    _app_table(cluster)
    asyncio.run(burst())
    wait_until(
        lambda: cluster.count_tasks(states=["SUCCESS"]) == BURST + 1,
        120,
        lambda: f"{BURST} tasks done (states: {cluster.query(_STATES)})",
    )
    starts = Counter(
        line.split()[1] for line in journal.read_text().splitlines() if line.startswith("start ")
    )
    assert starts == Counter({f"b{i}": 1 for i in range(BURST)})
    assert _lanes_reloads(cluster) == reloads
    assert cluster.query("SELECT count(*) AS n FROM tasks WHERE queue = 'parked' AND state = 'QUEUED'") == [
        {"n": BACKLOG}
    ]

    # The store's listener loses its connection: what it missed meanwhile is found by a reload.
    cluster.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'taskyard-listen'"
    )
    wait_until(lambda: _lanes_reloads(cluster) > reloads, 30, "a full reload after the reconnect")
