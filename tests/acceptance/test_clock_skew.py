"""Clocks that disagree by seconds (10 s here, well inside the bus seal's 30 s window,
docs/security.md). A service's wall clock is moved with tests/support/skewed_clock (the
whole process and its workers, as a host's clock would be).

Every service seconds off the database, ahead or behind: the documented bounds
hold, because every decision of time is the database's (docs/scheduling.md,
docs/internals.md):
- an ETA is never promoted before its ``run_at`` by the database's clock, and not late
  by the skew either (the promotion's reply carries the database's earliest ``run_at``;
  the maintenance loop promotes due rows as a fallback);
- a retry's delay is kept the same way (``run_at = now() + delay`` in the store's SQL);
- a countdown is turned into a ``run_at`` by the gateway's clock (from acceptance, as
  ``created_at``): a gateway behind the database makes it due sooner by the skew, never
  before acceptance, and one ahead makes it due later by the skew;
- a lease lapses by the database's clock only: a task running three leases long is
  renewed, never rescued, and finishes as its first attempt.

Services that disagree with each other by more than a bus request's timeout (2 s for a
pool's heartbeat) work too: a responder judges a request by the budget its requester
gave it, counted from its receipt, never by the requester's deadline against its own
clock (core/rpc.py), so a pool whose clock is behind the store's is not cut off from it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from support.cluster import TESTS_DIR

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(180)]

# A skew far above what a busy machine delays a promotion or a renewal by: a clock
# that decided a time would show as the skew, load as a fraction of it.
SKEW = 10.0
# Renewed five times per lease: a renewal lapses only after stalling for most of one.
LEASE = 4.0
RENEW_INTERVAL = LEASE / 5
COUNTDOWN = 1.5
SKEWED_CLOCK = TESTS_DIR / "support" / "skewed_clock"

TRANSITIONS = """
CREATE TABLE test_transitions (
  task_id uuid NOT NULL, old_state text NOT NULL, new_state text NOT NULL,
  run_at timestamptz, at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE FUNCTION test_record_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' OR OLD.state IS DISTINCT FROM NEW.state THEN
    INSERT INTO test_transitions (task_id, old_state, new_state, run_at)
    VALUES (NEW.id, CASE WHEN TG_OP = 'INSERT' THEN '' ELSE OLD.state::text END, NEW.state::text, NEW.run_at);
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER test_record_transition AFTER INSERT OR UPDATE ON tasks FOR EACH ROW
  EXECUTE FUNCTION test_record_transition();
"""


def _install(database_url: str) -> None:
    async def run() -> None:
        conn = await asyncpg.connect(database_url)
        try:
            await conn.execute(TRANSITIONS)
        finally:
            await conn.close()

    asyncio.run(run())


def _skewed(cluster: Any, offset: float) -> dict[str, str]:
    """The environment of a service whose wall clock is ``offset`` seconds off."""
    return {
        "PYTHONPATH": f"{SKEWED_CLOCK}:{cluster.env['PYTHONPATH']}",
        "TASKYARD_TEST_CLOCK_OFFSET": str(offset),
    }


def _suite(
    cluster_factory: Callable[..., Any], tmp_path: Path, offsets: dict[str, float], timeout: float = 30.0
) -> Any:
    cluster = cluster_factory(
        start=False,
        lease_seconds=LEASE,
        renew_interval=RENEW_INTERVAL,
        task_modules=("taskyard.examples", "support.tasks", "support.time_tasks"),
        env={"TASKYARD_TEST_STATE_DIR": str(tmp_path), "TASKYARD_TEST_JOURNAL": str(tmp_path / "journal")},
    )
    for service in ("result-store", "scheduler", "worker-pool", "gateway"):
        offset = offsets.get(service, 0.0)
        cluster.start_service(service, env=_skewed(cluster, offset) if offset else None, timeout=timeout)
    cluster.wait_ready()
    return cluster


def _timing_holds(cluster: Any, pool_offset: float) -> None:
    client = cluster.client()
    # The skew is real: the pool's workers see their own clock.
    offset = client.wait(client.submit("clock_offset").id, timeout=30).result
    assert abs(offset - pool_offset) < 1.0, offset

    timed = [client.submit("journal", f"eta{i}", countdown=COUNTDOWN).id for i in range(20)]
    retried = [client.submit("asks_retry", f"r{i}", COUNTDOWN, 1).id for i in range(5)]
    long = client.submit("journal", "long", 3 * LEASE)
    for task_id in [*timed, *retried, long.id]:
        assert client.wait(task_id, timeout=60).state.name == "SUCCESS", task_id

    # Late: from the time it was due by the database's clock, or from its insert when
    # the gateway's clock, which turned the countdown into a run_at, made it due at once.
    promotions = cluster.query(
        "SELECT p.task_id::text AS id, p.old_state, extract(epoch FROM p.at - p.run_at)::float8 AS early,"
        " extract(epoch FROM p.at - greatest(p.run_at, i.at))::float8 AS late"
        " FROM test_transitions p JOIN test_transitions i ON i.task_id = p.task_id AND i.old_state = ''"
        " WHERE p.new_state = 'QUEUED' AND p.old_state IN ('SCHEDULED', 'RETRYING')"
        " AND p.task_id = ANY($1::uuid[])",
        [*timed, *retried],
    )
    assert {p["id"] for p in promotions if p["old_state"] == "SCHEDULED"} == set(timed)
    assert {p["id"] for p in promotions if p["old_state"] == "RETRYING"} == set(retried)
    lateness = sorted(p["late"] for p in promotions)
    print(f"\npromotion after due (database clock): min {lateness[0]:.3f} s, max {lateness[-1]:.3f} s")
    assert min(p["early"] for p in promotions) >= 0, (
        "a task was promoted before its time by the database's clock"
    )
    # Late by the skew would be SKEW; half of it is far more than load delays a promotion by.
    assert lateness[-1] < SKEW / 2, (
        f"a promotion was late by the skew ({SKEW} s):"
        f" {sorted((p['late'], p['old_state']) for p in promotions)}"
    )

    row = cluster.query("SELECT attempt, rescues FROM tasks WHERE id = $1::uuid", long.id)[0]
    assert (row["attempt"], row["rescues"]) == (1, 0), f"a lease lapsed by a skewed clock: {row}"


@pytest.mark.parametrize("offset", [SKEW, -SKEW], ids=["services-ahead", "services-behind"])
def test_services_off_the_database_clock_keep_etas_retries_and_leases(
    cluster_factory: Callable[..., Any], database_url: str, tmp_path: Path, offset: float
) -> None:
    _install(database_url)
    services = ("result-store", "scheduler", "worker-pool", "gateway")
    cluster = _suite(cluster_factory, tmp_path, dict.fromkeys(services, offset))
    _timing_holds(cluster, offset)


def test_a_pool_behind_the_store_by_a_few_seconds_still_works(
    cluster_factory: Callable[..., Any], database_url: str, tmp_path: Path
) -> None:
    _install(database_url)
    # A pool that works is ready within a few seconds (its first heartbeat and registration).
    cluster = _suite(cluster_factory, tmp_path, {"worker-pool": -SKEW}, timeout=15.0)
    _timing_holds(cluster, -SKEW)
