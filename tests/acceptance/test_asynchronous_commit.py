"""PostgreSQL with ``synchronous_commit=off`` crashed mid-run: what it loses, and what holds.

An asynchronous commit is acknowledged before its WAL is on disk, so a crash loses the
commits of the last moments (docs/reliability.md, "Asynchronous commits"). This test
says exactly which: a commit made durable (here, a synchronous commit by the test that
writes a row: it flushes every WAL record before it, as the WAL writer's periodic flush
does) keeps everything acknowledged before it; after it, the WAL is kept as a prefix, so what is lost
is a tail in commit order. The WAL writer is stopped before the tail, and the server runs
without what else writes WAL out on its own (autovacuum, the background writer, a timed
checkpoint, a WAL buffer that fills), so the tail is lost as a rule; how much is printed.
What is asserted holds whatever was lost, down to nothing (a WAL write PostgreSQL makes
for reasons of its own is no failure of the suite's).

What still holds after the crash, asserted here:
- every submit acknowledged before the flush survives, and every outcome seen before it;
- what is lost is a tail: a batch sent after a batch that lost a task lost all of its own;
- no task is stuck (every surviving row ends final, without a hand), and no final row is
  ever rewritten (the recorded history, itself in the same WAL);
- resending every acknowledged submit with its request id answers a survivor with its
  own task and recreates a lost one, once; so a client that resends what it sent in the
  last moments loses nothing.
"""

from __future__ import annotations

import asyncio
import functools
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from support import history
from support.cluster import Cluster
from support.postgres import PostgresCluster, server_bindir
from support.waiting import through_outage, wait_until

from taskyard.result_store.migrate import migrate_dsn

pytestmark = [
    pytest.mark.acceptance,
    pytest.mark.timeout(180),
    pytest.mark.skipif(server_bindir() is None, reason="needs PostgreSQL server binaries to crash"),
]

BATCH = 40
BATCHES_BEFORE_FLUSH = 3
BATCHES_AFTER_FLUSH = 3
FLUSH_WAL = (
    "CREATE TABLE IF NOT EXISTS test_wal_flush (at timestamptz NOT NULL)",
    "BEGIN",
    "SET LOCAL synchronous_commit = on",
    "INSERT INTO test_wal_flush VALUES (clock_timestamp())",
    "COMMIT",
)
QUIET_WAL = {
    "synchronous_commit": "off",
    "fsync": "on",
    "autovacuum": "off",
    "checkpoint_timeout": "1h",
    "max_wal_size": "4GB",
    "bgwriter_lru_maxpages": "0",
    "wal_writer_delay": "10s",
    "wal_buffers": "64MB",  # the tail's WAL stays in shared memory, never written to make room
}


async def _execute(dsn: str, *statements: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        for sql in statements:
            await conn.execute(sql)
    finally:
        await conn.close()


@pytest.fixture
def asynchronous_pg() -> Iterator[PostgresCluster]:
    """A server of the test's own (it is crashed) whose commits do not wait for the WAL,
    and where, the WAL writer stopped, nothing else writes it out in the test's time."""
    pg = PostgresCluster(settings=QUIET_WAL).start()
    try:
        asyncio.run(migrate_dsn(pg.dsn("postgres")))
        history.install(pg.dsn("postgres"))
        yield pg
    finally:
        pg.stop()


def test_a_crash_with_asynchronous_commits_loses_only_a_tail_and_leaves_nothing_stuck(
    asynchronous_pg: PostgresCluster, tmp_path: Path
) -> None:
    pg = asynchronous_pg
    dsn = pg.dsn("postgres")
    with Cluster(dsn, tmp_path, concurrency=8, lease_seconds=2.0, request_timeout=3.0) as cluster:
        client: Any = cluster.client()
        batches: list[list[dict[str, Any]]] = []
        acked: dict[str, str] = {}  # request id -> task id, as acknowledged

        def send_batch(tag: str) -> list[str]:
            items: list[dict[str, Any]] = [
                {"name": "sleep", "args": [0.01], "request_id": f"{tag}-{len(batches)}-{i}"}
                for i in range(BATCH)
            ]
            batches.append(items)
            tasks = client.submit_many(items)
            for item, task in zip(items, tasks, strict=True):
                acked[item["request_id"]] = task.id
            return [t.id for t in tasks]

        for _ in range(BATCHES_BEFORE_FLUSH):
            send_batch("durable")
        seen_final = {
            t.id: t.state.name for t in (client.wait(acked[i["request_id"]], timeout=30) for i in batches[0])
        }
        durable = dict(acked)
        # A synchronous commit that wrote WAL flushes it up to itself: all of the above is on
        # disk now. (One that wrote none, as txid_current()'s, is not waited for.)
        asyncio.run(_execute(dsn, *FLUSH_WAL))

        walwriter = pg.process("walwriter")
        walwriter.send_signal(signal.SIGSTOP)
        for _ in range(BATCHES_AFTER_FLUSH):
            send_batch("tail")
        # Outcomes acknowledged to a client after the flush may be lost too.
        tail_seen = {
            t.id: t.state.name
            for t in (client.wait(acked[i["request_id"]], timeout=30) for i in batches[-1][:5])
        }
        pg.kill_and_restart()

        ids = list(acked.values())
        surviving = {
            r["id"]: r["state"]
            for r in through_outage(
                functools.partial(
                    cluster.query,
                    "SELECT id::text AS id, state::text AS state FROM tasks WHERE id = ANY($1::uuid[])",
                    ids,
                )
            )
        }
        assert set(durable.values()) <= set(surviving), "a submit acknowledged before the flush was lost"
        for task_id, state in seen_final.items():
            assert surviving[task_id] == state, f"an outcome seen before the flush changed: {task_id}"

        # The loss is a tail: after a batch that lost a task, no later batch kept one.
        lost_in = [sum(acked[i["request_id"]] not in surviving for i in batch) for batch in batches]
        first_loss = next((n for n, lost in enumerate(lost_in) if lost), len(batches))
        for later in range(first_loss + 1, len(batches)):
            assert lost_in[later] == BATCH, (
                f"batch {later} kept a task after batch {first_loss} lost one: {lost_in}"
            )
        lost = sum(lost_in)
        forgotten = [t for t in tail_seen if surviving.get(t) not in history.FINAL]
        print(
            f"\nasynchronous commits: {lost} of {len(acked)} acknowledged submits lost"
            f" (per batch {lost_in}); {len(forgotten)} of {len(tail_seen)} outcomes seen"
            " after the flush lost (with their task or rewound)"
        )

        # Every acknowledged submit resent with its request id: a survivor answers with its own
        # task, a lost one is created again, once.
        resent = through_outage(functools.partial(client.submit_many, [i for b in batches for i in b]))
        again = {i["request_id"]: t.id for i, t in zip((i for b in batches for i in b), resent, strict=True)}
        for request_id, task_id in acked.items():
            if task_id in surviving:
                assert again[request_id] == task_id, f"a surviving submit {request_id} was answered anew"
            else:
                assert again[request_id] != task_id
        assert cluster.count_tasks() == len(acked), "a resent submit was accepted twice"

        finals = [through_outage(functools.partial(client.wait, t, timeout=60)) for t in again.values()]
        assert {t.state.name for t in finals} == {"SUCCESS"}
        # A rewound outcome the gateway already answered is run again once its lease lapses:
        # every row ends final by itself.
        wait_until(
            lambda: (
                cluster.count_tasks(states=("QUEUED", "ASSIGNED", "RUNNING", "RETRYING", "SCHEDULED")) == 0
            ),
            60,
            "every task final without a hand",
        )
        history.check(cluster, list(again.values()))
