"""Two schedulers, one leading: each on its own loopback address (the same ports),
every other service dialing both (TASKYARD_SCHEDULER_HOSTS). The standby opens no
listener. SIGKILLed under a stream of tasks, the leader is replaced (docs/scaling.md:
the leadership's ttl, a standby's wait, the pools' redial), never while its term
could still lease, and every task completes, once; SIGTERMed, it hands the
leadership over before its term would have lapsed.

Failover is measured in the database and printed: from the kill to the first lease
committed in the new leader's term (a trigger records each lease's token, which
starts with its term, as it is written). How long it takes is bench/chaos's figure
(a scheduler's recovery); what is checked here is the order of things."""

from __future__ import annotations

import asyncio
import collections
import signal
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from support import history
from support.cluster import Cluster
from support.ports import BLOCK, free_port_block, listening
from support.waiting import wait_until

from taskyard.client import TaskyardError

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(240)]

SCHEDULER_HOSTS = ("127.0.0.2", "127.0.0.3")
BOUND = 5.0
# Submissions of the stream, one after the other.
STREAM_GAP = 0.02

LEASE_HISTORY = """
CREATE TABLE test_leases (task_id uuid NOT NULL, token text NOT NULL, at timestamptz NOT NULL);
CREATE FUNCTION test_record_lease() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.state = 'ASSIGNED' AND NEW.lease_token <> ''
     AND (TG_OP = 'INSERT' OR OLD.lease_token IS DISTINCT FROM NEW.lease_token) THEN
    INSERT INTO test_leases VALUES (NEW.id, NEW.lease_token, clock_timestamp());
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER test_record_lease AFTER INSERT OR UPDATE ON tasks
  FOR EACH ROW EXECUTE FUNCTION test_record_lease();
"""


def install_lease_history(database_url: str) -> None:
    async def run() -> None:
        conn = await asyncpg.connect(database_url)
        try:
            await conn.execute(LEASE_HISTORY)
        finally:
            await conn.close()

    asyncio.run(run())


def two_schedulers(cluster_factory: Callable[..., Cluster], journal: Path, **overrides: Any) -> Cluster:
    """A cluster over tcp whose first scheduler leads and whose second stands by."""
    start = free_port_block(BLOCK + 1)
    cluster = cluster_factory(
        start=False,
        transport="tcp",
        base_port=start + 1,
        discovery_port=start,
        scheduler_hosts=SCHEDULER_HOSTS,
        concurrency=8,
        task_modules=("taskyard.examples", "support.tasks"),
        env={"TASKYARD_TEST_JOURNAL": str(journal)},
        **overrides,
    )
    install_lease_history(cluster.database_url)
    cluster.start_service("result-store")
    (leader,) = cluster.start_instances("scheduler", [{"TASKYARD_BIND_HOST": SCHEDULER_HOSTS[0]}])
    (standby,) = cluster.start_instances(
        "scheduler", [{"TASKYARD_BIND_HOST": SCHEDULER_HOSTS[1]}], wait_log="standing by"
    )
    assert (leader, standby) == ("scheduler", "scheduler-2")
    for service in ("worker-pool", "gateway"):
        cluster.start_service(service)
    cluster.wait_ready()
    base = cluster.settings.base_port
    lanes = {(SCHEDULER_HOSTS[0], base + offset) for offset in (0, 1, 2, 3, 5, 6)}
    assert lanes | {(SCHEDULER_HOSTS[0], cluster.settings.discovery_port)} <= listening(cluster.pid(leader))
    assert listening(cluster.pid(standby)) == set(), "a standby opens no listener"
    return cluster


def leader_row(cluster: Cluster) -> dict[str, Any]:
    return cluster.query(
        "SELECT term, holder, extract(epoch FROM expires_at)::float8 AS expires,"
        " extract(epoch FROM clock_timestamp())::float8 AS now FROM scheduler_leader"
    )[0]


class Stream:
    """Submits a journal task every STREAM_GAP on a thread, each retried with its
    request id until accepted (through a failover, a submission waits or fails)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.ids: list[str] = []
        self.keys: list[str] = []
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="task stream", daemon=True)
        self._thread.start()

    def _submit(self, key: str, request_id: str) -> Any:
        try:
            return self.client.submit("journal", key, 0.02, request_id=request_id)
        except TaskyardError:  # no leader to take it yet: again, the same request id
            return None

    def _run(self) -> None:
        n = 0
        try:
            while not self._stop.is_set():
                key, request_id = f"s{n}", str(uuid.uuid4())
                # Until accepted, even once stopped: a submission that may have been taken
                # is one the test must see complete.
                task = wait_until(
                    lambda key=key, request_id=request_id: self._submit(key, request_id),
                    60,
                    f"a scheduler to accept {key}",
                    interval=STREAM_GAP,
                )
                self.ids.append(task.id)
                self.keys.append(key)
                n += 1
                self._stop.wait(STREAM_GAP)  # the stream's pace; it ends at once when stopped
        except BaseException as exc:  # the test's failure, raised by stop()
            self.error = exc

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(60)
        assert not self._thread.is_alive()
        if self.error is not None:
            raise self.error


def runs(journal: Path) -> collections.Counter[str]:
    return collections.Counter(
        line.split()[1] for line in journal.read_text().splitlines() if line.startswith("done ")
    )


def test_a_killed_leader_is_replaced_within_the_bound_and_every_task_completes_once(
    cluster_factory: Callable[..., Cluster], journal: Path
) -> None:
    cluster = two_schedulers(cluster_factory, journal)
    assert leader_row(cluster)["term"] == 1
    client: Any = cluster.client()
    stream = Stream(client)
    try:
        wait_until(lambda: len(stream.ids) >= 50, 30, "50 tasks submitted to the first leader")
        killed_at = time.time()
        cluster.kill("scheduler", signal.SIGKILL)
        # The killed leader's term could lease until then (a renewal it sent may still
        # commit after this read: its term lasted at least this long).
        lapsed_at = leader_row(cluster)["expires"]
        wait_until(
            lambda: leader_row(cluster)["term"] == 2, 3 * BOUND, lambda: f"a new term\n{cluster.logs_tail()}"
        )
        submitted = len(stream.ids)
        wait_until(lambda: len(stream.ids) >= submitted + 50, 30, "50 more tasks submitted to the new leader")
    finally:
        stream.stop()
    for task_id in stream.ids:
        assert client.wait(task_id, timeout=60).state.name == "SUCCESS", task_id

    first = cluster.query(
        "SELECT extract(epoch FROM min(at))::float8 AS at FROM test_leases WHERE starts_with(token, 't2.')"
    )[0]["at"]
    assert first is not None, "the new leader leased nothing"
    print(f"\nscheduler failover (SIGKILL to the new leader's first dispatch): {first - killed_at:.3f} s")
    assert first >= lapsed_at, f"term 2 leased before term 1 lapsed\n{cluster.logs_tail()}"
    assert "elected leader (term 2)" in cluster.log_text("scheduler-2")

    done = runs(journal)
    assert set(done) == set(stream.keys)
    twice = [k for k, n in done.items() if n > 1]
    assert not twice, f"ran more than once: {twice[:10]}"
    assert cluster.count_tasks(states=("QUEUED", "ASSIGNED", "RUNNING")) == 0


def test_a_stopped_leader_hands_over_at_once(cluster_factory: Callable[..., Cluster], journal: Path) -> None:
    ttl = 30.0  # a standby that had to wait for the row to expire would wait this long
    cluster = two_schedulers(cluster_factory, journal, leader_ttl=ttl)
    client: Any = cluster.client()
    assert client.wait(client.submit("journal", "before", 0.0).id, timeout=30).state.name == "SUCCESS"

    held_until = leader_row(cluster)["expires"]
    assert cluster.kill("scheduler", signal.SIGTERM) == 0
    row = wait_until(
        lambda: (r := leader_row(cluster))["term"] == 2 and r,
        10,
        lambda: f"a new term\n{cluster.logs_tail()}",
        0.01,
    )
    # Seen by the database's clock while term 1 had not lapsed: the standby took
    # the leadership because it was released, not because it expired.
    print(f"\nscheduler handover after SIGTERM: term 2 with {held_until - row['now']:.3f} s of term 1 left")
    assert row["now"] < held_until
    assert row["holder"].startswith("scheduler-")
    assert "released the leadership (term 1)" in cluster.log_text("scheduler")
    assert client.wait(client.submit("journal", "after", 0.0).id, timeout=30).state.name == "SUCCESS"


class Load:
    """Batches of ``journal_attempt`` tasks sent back to back on a thread, each batch
    resent with its request ids until a gateway takes it: a steady load with work
    QUEUED, ASSIGNED and RUNNING at any moment."""

    def __init__(self, client: Any, batch: int = 40, seconds: float = 0.05) -> None:
        self.client = client
        self.batch = batch
        self.seconds = seconds
        self.acked: dict[str, str] = {}  # key -> task id
        self.resent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="load", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            items: list[dict[str, Any]] = [
                {
                    "name": "journal_attempt",
                    "args": [f"k{n}-{i}", self.seconds],
                    "request_id": str(uuid.uuid4()),
                }
                for i in range(self.batch)
            ]
            while True:
                try:
                    tasks = self.client.submit_many(items)
                    break
                except TaskyardError:  # no leader to take it yet: again, the same request ids
                    self.resent += 1
                    self._stop.wait(STREAM_GAP)
            for item, t in zip(items, tasks, strict=True):
                self.acked[item["args"][0]] = t.id
            n += 1

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(60)
        assert not self._thread.is_alive()


def test_a_leader_killed_under_load_loses_nothing_and_runs_no_attempt_twice(
    cluster_factory: Callable[..., Cluster], journal: Path, database_url: str
) -> None:
    history.install(database_url)
    cluster = two_schedulers(cluster_factory, journal, workers=2, lease_seconds=3.0)
    client: Any = cluster.client()
    load = Load(client)
    try:
        in_flight = wait_until(
            lambda: (n := cluster.count_tasks(states=("ASSIGNED", "RUNNING"))) >= 8 and n,
            30,
            "work in flight under the first leader",
        )
        queued = cluster.count_tasks(states=("QUEUED",))
        holder = leader_row(cluster)["holder"]
        cluster.kill("scheduler", signal.SIGKILL)
        wait_until(
            lambda: leader_row(cluster)["term"] == 2, 3 * BOUND, lambda: f"a new term\n{cluster.logs_tail()}"
        )
        taken = len(load.acked)
        wait_until(lambda: len(load.acked) >= taken + 200, 60, "200 more tasks taken by the new leader")
    finally:
        load.stop()
    print(f"\nleader {holder} killed with {in_flight} tasks in flight and {queued} queued")
    ids = list(load.acked.values())
    finals = [client.wait(task_id, timeout=60) for task_id in ids]
    assert {t.state.name for t in finals} == {"SUCCESS"}
    assert cluster.count_tasks() == len(ids), "a resent batch was taken twice"
    assert cluster.count_tasks(states=("QUEUED", "ASSIGNED", "RUNNING", "RETRYING", "SCHEDULED")) == 0
    history.check(cluster, ids)

    starts = collections.Counter(
        tuple(line.split()[1:3]) for line in journal.read_text().splitlines() if line.startswith("start ")
    )
    twice = [key for key, n in starts.items() if n > 1]
    assert not twice, f"the same attempt ran twice: {twice[:10]}"
    done = {line.split()[1] for line in journal.read_text().splitlines() if line.startswith("done ")}
    assert done >= set(load.acked), "an acknowledged task never ran to its end"
    attempts = {r["id"]: r["attempt"] for r in cluster.query("SELECT id::text AS id, attempt FROM tasks")}
    for (key, attempt), _ in starts.items():
        assert int(attempt) <= attempts[load.acked[key]], f"{key} ran attempt {attempt} the row does not show"
    rerun = sum(1 for key in load.acked if attempts[load.acked[key]] > 1)
    print(f"{len(ids)} tasks, {rerun} run again as a new attempt, {load.resent} batches resent")
