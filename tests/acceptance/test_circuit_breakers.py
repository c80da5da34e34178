"""Circuit breakers through the whole suite: a key whose downstream answers "503,
retry after 1 s" opens its breaker while another key's tasks run; its tasks spend
no retry (max_retries=0, none ends FAILURE), ExplainTask says BREAKER_OPEN with the
next probe, WatchEvents shows the open, and once the downstream is back a probe's
success closes the breaker and every task completes. The limit is made with the
command docs/flow-control.md shows, as written."""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from support.waiting import wait_until

from taskyard.client import Breaker

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(180)]

DOC = Path(__file__).resolve().parents[2] / "docs" / "flow-control.md"


def taskyard(target: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "taskyard.cli", *args, "--target", target],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def documented_create() -> list[str]:
    """The breaker section's `taskyard limit create` line, as words."""
    section = DOC.read_text().split("\n## Circuit breakers\n", 1)[1].split("\n## ", 1)[0]
    (line,) = [ln for ln in section.splitlines() if ln.startswith("taskyard limit create ")]
    return shlex.split(line)[1:]


def _states(cluster: Any, ids: list[str]) -> list[dict[str, Any]]:
    return cluster.query(
        "SELECT id::text AS id, state::text AS state, attempt, uncharged_attempts FROM tasks"
        " WHERE id = ANY($1::uuid[]) ORDER BY id",
        ids,
    )


@pytest.mark.cluster(task_modules=("taskyard.examples", "support.breaker_tasks"), concurrency=4)
def test_an_open_breaker_holds_its_key_spends_no_retry_and_closes_after_a_probe(
    cluster: Any, tmp_path: Path
) -> None:
    args = documented_create()
    assert args[:3] == ["limit", "create", "payments"] and "--breaker" in args and "--per-key" in args
    made = taskyard(cluster.target, *args)
    assert made.returncode == 0, made.stderr
    assert "kind:         breaker" in made.stdout, made.stdout
    # Faster numbers for a test: open at 2 failures, probe after 1 s.
    tuned = taskyard(cluster.target, "limit", "update", "payments", "--breaker", "2/60s", "--cool-down", "1s")
    assert tuned.returncode == 0, tuned.stderr
    assert "opens at 2/min failed, cool-down 1s, 1 probe(s)" in tuned.stdout, tuned.stdout

    down_dir = tmp_path / "down"
    down_dir.mkdir()
    (down_dir / "payments-api").touch()
    client = cluster.client()
    watch = client.events.watch(kinds=["breaker"])
    seen: list[Any] = []
    reader = threading.Thread(target=lambda: seen.extend(iter(watch)), daemon=True)
    reader.start()
    try:
        wait_until(lambda: watch.cursor, 10, "the watch to begin")

        def submit(key: str) -> str:
            return client.submit(
                "call_downstream", key, str(down_dir), limits={"payments": key}, fairness_key=key
            ).id

        down = [submit("payments-api") for _ in range(4)]
        opened = wait_until(
            lambda: next((e for e in seen if e.type == "breaker.opened"), None), 30, "the breaker to open"
        )
        assert (opened.attributes["limit"], opened.attributes["key"]) == ("payments", "payments-api")
        assert opened.attributes["next_probe_at"] and int(opened.attributes["failures"]) >= 2

        # Every other key flows while it is open.
        up = [submit("ledger-api") for _ in range(8)]
        assert [client.wait(i, timeout=30).result for i in up] == ["ledger-api"] * 8

        held = wait_until(
            lambda: next((x for i in down if (x := client.explain(i)).reason == "BREAKER_OPEN"), None),
            30,
            "a task of the open key held at its breaker",
        )
        assert held.gate is not None and (held.gate.limit, held.gate.key) == ("payments", "payments-api")
        assert "circuit breaker" in held.message

        # Throttled attempts spent no retry: with a budget of 0, none is FAILURE.
        rows = _states(cluster, down)
        assert all(r["state"] != "FAILURE" for r in rows), rows
        assert any(r["uncharged_attempts"] >= 1 for r in rows), rows

        (down_dir / "payments-api").unlink()  # the downstream is back
        wait_until(lambda: any(e.type == "breaker.closed" for e in seen), 30, "the breaker to close")
        assert [client.wait(i, timeout=60).result for i in down] == ["payments-api"] * 4
        rows = _states(cluster, down)
        # Each ran its body once for a charge: every other attempt was throttled.
        assert all(r["attempt"] - r["uncharged_attempts"] == 1 for r in rows), rows
        assert [e.type for e in seen][:1] == ["breaker.opened"]
    finally:
        watch.close()
        client.close()


@pytest.mark.cluster(task_modules=("taskyard.examples", "support.breaker_tasks"), concurrency=4)
def test_a_new_scheduler_starts_every_breaker_closed_and_learns_the_outage_again(
    cluster: Any, tmp_path: Path
) -> None:
    """Breakers live on the leader only: after a SIGKILL of the scheduler its successor
    admits the key's tasks again, their throttled attempts open its own breaker, and
    still no retry is spent; once the downstream is back every task completes."""
    client = cluster.client()
    client.limits.create("payments", breaker=Breaker(failures=2, window=60, cool_down=30), per_key=True)
    down_dir = tmp_path / "down"
    down_dir.mkdir()
    (down_dir / "payments-api").touch()
    watch = client.events.watch(kinds=["breaker"])
    seen: list[Any] = []
    reader = threading.Thread(target=lambda: seen.extend(iter(watch)), daemon=True)
    reader.start()
    try:
        wait_until(lambda: watch.cursor, 10, "the watch to begin")
        down = [
            client.submit(
                "call_downstream", "payments-api", str(down_dir), limits={"payments": "payments-api"}
            ).id
            for _ in range(3)
        ]
        wait_until(
            lambda: [e for e in seen if e.type == "breaker.opened"], 30, "the first term's breaker to open"
        )
        cluster.kill("scheduler", signal.SIGKILL)
        cluster.start_service("scheduler")
        # A cool-down of 30 s: a second open within the test is the new leader's own.
        wait_until(
            lambda: len([e for e in seen if e.type == "breaker.opened"]) >= 2,
            45,
            lambda: f"the new leader's breaker to open: {[e.type for e in seen]}",
        )
        rows = _states(cluster, down)
        assert all(r["state"] != "FAILURE" for r in rows), rows
        (down_dir / "payments-api").unlink()
        # Its cool-down is 30 s: make the probe come sooner (an update keeps the breaker's state).
        client.limits.update("payments", breaker=Breaker(failures=2, window=60, cool_down=0.5), per_key=True)
        assert [client.wait(i, timeout=90).result for i in down] == ["payments-api"] * 3
        wait_until(lambda: any(e.type == "breaker.closed" for e in seen), 30, "the breaker to close")
        rows = _states(cluster, down)
        assert all(r["attempt"] - r["uncharged_attempts"] == 1 for r in rows), rows
    finally:
        watch.close()
        client.close()
