"""An outage that raises ordinary errors spends no retry of the tasks behind a
circuit breaker, through the whole suite (real services, real workers).

Key "payments-api" raises ConnectionError (not RetryAfter) until the test brings
it back; its tasks have one retry (max_retries=1). Its first task fails twice and
ends FAILURE before the other three start; the breaker opens at the sixth failure
(the others' three first and one second), and the refund of the failures that
opened it brings that first task back; every failure while it is open (the
probes' too) is refunded as well. Once the key
recovers, every task of it ends SUCCESS, none FAILURE, each charged for its
successful attempt alone; GetTask and ExplainTask show the refunds. A task of
another key with the same errors but no breaker is charged as before and ends
FAILURE, a dead letter."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from support.waiting import wait_until

from taskyard.client import Breaker

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(180)]


def _rows(cluster: Any, ids: list[str]) -> list[dict[str, Any]]:
    return cluster.query(
        "SELECT t.id::text AS id, t.state::text AS state, t.attempt, t.uncharged_attempts,"
        " t.dead_letter_reason,"
        " (SELECT count(*) FROM task_failures f WHERE f.task_id = t.id) AS failures,"
        " (SELECT count(*) FROM task_failures f WHERE f.task_id = t.id AND f.refunded_at IS NOT NULL)"
        " AS refunded"
        " FROM tasks t WHERE t.id = ANY($1::uuid[]) ORDER BY t.id",
        ids,
    )


@pytest.mark.cluster(task_modules=("taskyard.examples", "support.outage_tasks"), concurrency=4)
def test_an_outage_behind_a_breaker_spends_no_retry_and_its_tasks_complete(
    cluster: Any, tmp_path: Path
) -> None:
    client = cluster.client()
    client.limits.create("payments", breaker=Breaker(failures=6, window=60, cool_down=1), per_key=True)
    down_dir = tmp_path / "down"
    down_dir.mkdir()
    (down_dir / "payments-api").touch()
    (down_dir / "no-breaker").touch()
    watch = client.events.watch(kinds=["breaker"])
    seen: list[Any] = []
    reader = threading.Thread(target=lambda: seen.extend(iter(watch)), daemon=True)
    reader.start()
    try:
        wait_until(lambda: watch.cursor, 10, "the watch to begin")

        def submit_down() -> str:
            task = client.submit(
                "call_flaky", "payments-api", str(down_dir), limits={"payments": "payments-api"}
            )
            return str(task.id)

        # One task spends its retry and ends FAILURE before the rest start: the refund
        # must bring back a task that had already failed (when the four fail together, the
        # failure that opens the breaker may come in the same report as the last ones).
        first = submit_down()
        wait_until(lambda: _rows(cluster, [first])[0]["state"] == "FAILURE", 60, "the first task's FAILURE")
        down = [first, *(submit_down() for _ in range(3))]
        bare = [client.submit("call_flaky", "no-breaker", str(down_dir)).id for _ in range(2)]

        wait_until(
            lambda: any(e.type == "breaker.opened" for e in seen), 60, "the payments-api breaker to open"
        )
        # Opened at the sixth failure: every failure of the key so far is refunded, the
        # first task's too, which is no longer FAILURE.
        wait_until(
            lambda: (
                (rows := _rows(cluster, down))
                and all(r["state"] != "FAILURE" for r in rows)
                and all(r["refunded"] == r["failures"] > 0 for r in rows)
            ),
            60,
            lambda: f"the outage's failures refunded: {_rows(cluster, down)}",
        )
        revived = cluster.query(
            "SELECT count(DISTINCT task_id) AS n FROM events"
            " WHERE task_id = ANY($1::uuid[]) AND type = 'task.failed'",
            down,
        )[0]["n"]
        assert revived >= 1, "the first task was never FAILURE"

        # The key without a breaker is charged as before: two failures, FAILURE, a dead letter.
        wait_until(
            lambda: all(r["state"] == "FAILURE" for r in _rows(cluster, bare)), 60, "the bare tasks to fail"
        )
        for r in _rows(cluster, bare):
            assert (r["attempt"], r["uncharged_attempts"], r["refunded"]) == (2, 0, 0), r
            assert r["dead_letter_reason"] == 1, r  # RETRIES_EXHAUSTED

        (down_dir / "payments-api").unlink()  # the downstream is back
        assert [client.wait(i, timeout=90).result for i in down] == ["payments-api"] * 4
        wait_until(lambda: any(e.type == "breaker.closed" for e in seen), 30, "the breaker to close")
        rows = _rows(cluster, down)
        assert all(r["state"] == "SUCCESS" and r["dead_letter_reason"] == 0 for r in rows), rows
        # Only the successful attempt was charged: every failure was the outage's.
        assert all(r["attempt"] - r["uncharged_attempts"] == 1 for r in rows), rows
        assert all(r["refunded"] == r["failures"] > 0 for r in rows), rows
        # GetTask shows each refunded failure; the bare task's failures are charged.
        got = client.get(down[0])
        assert got.failures and all(f.refunded for f in got.failures), got.failures
        assert not any(f.refunded for f in client.get(bare[0]).failures)
        # ExplainTask says so too.
        told = client.explain(down[0]).message
        assert "failed attempt" in told and "refunded by a circuit breaker" in told, told
    finally:
        watch.close()
        client.close()
