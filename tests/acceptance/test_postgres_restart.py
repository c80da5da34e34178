"""Delivery contract: an acknowledged submission survives a PostgreSQL crash and
restart, and the suite recovers by itself (no process is restarted by hand); also
when the crash meets a drain of the store's committer in flight (its one statement
sent, not committed): nothing of it is acknowledged, and resent it is taken once."""

from __future__ import annotations

import asyncio
import functools
import threading
from pathlib import Path

import asyncpg
import grpc
import pytest
from support import history
from support.cluster import Cluster
from support.postgres import PostgresCluster, server_bindir
from support.waiting import through_outage, wait_until

from taskyard.client import TaskInfo, TaskyardError
from taskyard.result_store.migrate import migrate_dsn

pytestmark = pytest.mark.acceptance


@pytest.mark.skipif(server_bindir() is None, reason="needs PostgreSQL server binaries to crash and restart")
def test_acknowledged_tasks_survive_a_postgresql_crash(tmp_path: Path) -> None:
    # Durable commits for this one: the shared test server trades them for speed.
    pg = PostgresCluster(settings={"synchronous_commit": "on"}).start()
    try:
        with Cluster(pg.dsn("postgres"), tmp_path, workers=1, concurrency=4, request_timeout=3.0) as cluster:
            client = cluster.client()
            acked = [
                t.id for t in client.submit_many([{"name": "sleep", "args": [0.01]} for _ in range(300)])
            ]
            assert cluster.count_tasks(states=("QUEUED",)) > 0, "nothing was waiting: the crash tests less"
            pg.restart()
            finals: list[TaskInfo] = [
                through_outage(functools.partial(client.wait, task_id, timeout=60)) for task_id in acked
            ]
            assert [t.state.name for t in finals] == ["SUCCESS"] * len(acked)
            assert cluster.count_tasks() == len(acked)
            assert cluster.count_tasks(states=("QUEUED", "ASSIGNED", "RUNNING", "RETRYING")) == 0
    finally:
        pg.stop()


# A submit whose request id starts with "held-" waits, inside the committer's drain, for an
# advisory lock the test holds: the drain is in flight, its statement sent and not committed.
HOLD_LOCK = 24_2424
HOLD_DRAIN = f"""
CREATE FUNCTION test_hold_drain() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF starts_with(NEW.request_id, 'held-') THEN PERFORM pg_advisory_xact_lock({HOLD_LOCK}); END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER test_hold_drain BEFORE INSERT ON tasks FOR EACH ROW EXECUTE FUNCTION test_hold_drain();
"""
DRAIN_WAITING = (
    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'"
)


@pytest.mark.timeout(180)
@pytest.mark.skipif(server_bindir() is None, reason="needs PostgreSQL server binaries to crash and restart")
def test_a_crash_mid_drain_acknowledges_none_of_it_and_a_resend_is_taken_once(tmp_path: Path) -> None:
    pg = PostgresCluster(settings={"synchronous_commit": "on"}).start()
    try:
        dsn = pg.dsn("postgres")
        asyncio.run(migrate_dsn(dsn))
        history.install(dsn)

        async def install_hold() -> asyncpg.Connection:
            conn = await asyncpg.connect(dsn)
            await conn.execute(HOLD_DRAIN)
            await conn.execute(f"SELECT pg_advisory_lock({HOLD_LOCK})")
            return conn

        loop = asyncio.new_event_loop()
        holder = loop.run_until_complete(install_hold())
        with Cluster(dsn, tmp_path, workers=1, concurrency=4, request_timeout=3.0) as cluster:
            client = cluster.client()
            acked = [t.id for t in client.submit_many([{"name": "sleep", "args": [0.5]} for _ in range(100)])]
            held = [{"name": "sleep", "args": [0.01], "request_id": f"held-{i}"} for i in range(20)]
            answered: list[list[TaskInfo] | BaseException] = []

            def send_held() -> None:
                try:
                    answered.append(client.submit_many(held))
                except BaseException as exc:  # what it was is asserted below
                    answered.append(exc)

            sender = threading.Thread(target=send_held, name="held drain")
            sender.start()
            wait_until(
                lambda: loop.run_until_complete(holder.fetchval(DRAIN_WAITING)) > 0,
                30,
                lambda: f"the drain to wait on the lock\n{cluster.logs_tail()}",
            )
            # Nothing of a drain still in flight is acknowledged. Its caller may have given up
            # already (the gateway's request limit is 3 s, and finding the lock wait on a busy
            # machine can take longer): a refusal that says "try again" is no acknowledgement.
            for early in list(answered):
                assert isinstance(early, TaskyardError), (
                    f"a drain still in flight was acknowledged: {early!r:.200}"
                )
                assert early.code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED), early
            assert cluster.count_tasks(states=("QUEUED", "ASSIGNED", "RUNNING")) > 0, "nothing in flight"
            pg.restart()  # the lock's holder dies with it; the held rows were never committed
            holder.terminate()
            sender.join(60)
            assert not sender.is_alive()
            (outcome,) = answered
            print(f"\nthe in-flight submit of the drain answered: {outcome!r:.200}")
            if isinstance(outcome, BaseException):
                assert isinstance(outcome, TaskyardError), outcome
                assert outcome.code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)

            resent = through_outage(functools.partial(client.submit_many, held))
            if not isinstance(outcome, BaseException):  # taken after the restart: a resend is the same
                assert [t.id for t in resent] == [t.id for t in outcome]
            for item in held:
                assert cluster.count_tasks(request_id=str(item["request_id"])) == 1, item
            ids = acked + [t.id for t in resent]
            finals = [through_outage(functools.partial(client.wait, t, timeout=60)) for t in ids]
            assert {t.state.name for t in finals} == {"SUCCESS"}
            assert cluster.count_tasks() == len(ids)
            history.check(cluster, ids)
        loop.close()
    finally:
        pg.stop()
