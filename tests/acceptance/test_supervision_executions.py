"""Every execution of a task body is visible: real processes, real signals.

Each task body journals "run <task id> <attempt> <pid>" when it starts
(support/supervision_tasks.py ``journal_run``, ``journal_until_released``), the one record of an execution
the database cannot give. The invariant checked: the executions of a task carry
distinct attempt numbers, and an execution whose outcome came back after its
task had moved on is a refused late report, counted (taskyard_counters
'late_completions') and noted on the task (``late_reports``, ``late_attempt``,
shown by GetTask and ExplainTask).

- Two pools frozen with 16 attempts in hand, 8 each: one sends its start
  notices at the usual delay, and the test freezes after the store has seen all
  of them start (RUNNING); the other holds its notices for the whole test
  (TASKYARD_START_NOTICE_DELAY), so the store still sees its 8 ASSIGNED. Another
  pool runs all 16 as attempt 2 (a charged rescue for the first 8, a re-run that
  spends no retry for the others), and the thawed pools' outcomes of attempt 1
  are refused and counted.
- The same two pools SIGKILLed (managers and workers) once every body started:
  the re-runs on another pool are attempt 2, not a second attempt 1.
"""

from __future__ import annotations

import collections
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import history
from support.history import wait_until

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(120)]

TASKS = 16
# One worker of eight slots per pool: 16 attempts fill both pools, 8 each.
POOL: dict[str, Any] = {"lease_seconds": 2.0, "renew_interval": 0.5, "workers": 1, "concurrency": 8}
# The second pool's start notices wait longer than any test runs: the store
# never sees its bodies start (their outcomes, after a thaw, carry the starts).
HELD_POOL = "worker-pool-h"
HOLD = {"TASKYARD_POOL_ID": "pool-h", "TASKYARD_START_NOTICE_DELAY": "600"}


def _runs(journal: Path) -> dict[str, list[tuple[int, int]]]:
    """Executions per task id: (attempt, pid), in journal order."""
    out: dict[str, list[tuple[int, int]]] = collections.defaultdict(list)
    for line in journal.read_text().splitlines():
        if line.startswith("run "):
            _, task_id, attempt, pid = line.split()
            out[task_id].append((int(attempt), int(pid)))
    return out


def _late_completions(cluster: Any) -> int:
    rows = cluster.query("SELECT value FROM taskyard_counters WHERE name = 'late_completions'")
    return int(rows[0]["value"]) if rows else 0


def _rows(cluster: Any, ids: list[str]) -> dict[str, dict[str, Any]]:
    rows = cluster.query(
        "SELECT id::text AS id, state::text AS state, attempt, uncharged_attempts, rescues,"
        " late_reports, late_attempt, worker_id FROM tasks WHERE id = ANY($1::uuid[])",
        ids,
    )
    return {r["id"]: r for r in rows}


def _check_executions(cluster: Any, journal: Path, ids: list[str]) -> dict[str, list[tuple[int, int]]]:
    """Each execution has its own attempt; every attempt before the last is
    accounted for: charged (a death or lapse of a started attempt) or not."""
    runs = _runs(journal)
    rows = _rows(cluster, ids)
    for tid in ids:
        attempts = [a for a, _ in runs[tid]]
        assert attempts, f"task {tid} never ran"
        assert len(attempts) == len(set(attempts)), f"task {tid} ran twice under one attempt: {runs[tid]}"
        r = rows[tid]
        assert max(attempts) == r["attempt"], (runs[tid], r)
        assert r["rescues"] + r["uncharged_attempts"] == r["attempt"] - 1, r
    return runs


def _started_first(cluster: Any) -> set[str]:
    """Tasks whose attempt 1 the store saw start (its history has RUNNING at
    attempt 1); the others were in the start-notice delay when their pool stopped."""
    rows = cluster.query(
        "SELECT DISTINCT task_id::text AS id FROM test_task_history"
        " WHERE new_state = 'RUNNING' AND new_attempt = 1"
    )
    return {r["id"] for r in rows}


def _start_pool_b(cluster: Any) -> None:
    """A pool that takes all 16 re-runs at once."""
    env = {"TASKYARD_POOL_ID": "pool-b", "TASKYARD_WORKERS": "2"}
    cluster.start_service("worker-pool", instance="worker-pool-b", env=env)


def _two_pools_busy(
    cluster: Any, client: Any, journal: Path, release: Path
) -> tuple[list[str], list[int], set[str]]:
    """The ids of 16 tasks whose bodies have all started, 8 on each pool, and run until
    ``release`` exists, once the store has seen the starts on the prompt pool; the
    processes of both pools; and the tasks the prompt pool runs."""
    cluster.start_service("worker-pool", instance=HELD_POOL, env=HOLD)
    prompt = cluster.wait_workers(1)
    held = wait_until(lambda: cluster.worker_pids(HELD_POOL) or None, 30, "the held pool's worker")
    body = {"name": "journal_until_released", "args": [str(release)]}
    tasks = client.submit_many([body for _ in range(TASKS)])
    ids = [t.id for t in tasks]
    wait_until(lambda: sum(map(len, _runs(journal).values())) >= TASKS, 30, "every body to start")
    on_prompt = {tid for tid, runs in _runs(journal).items() if runs[0][1] in prompt}
    assert len(on_prompt) == TASKS // 2, "each pool runs 8"
    wait_until(
        lambda: _started_first(cluster) >= on_prompt, 30, "the store to see the prompt pool's bodies start"
    )
    pids = [cluster.pid("worker-pool"), *prompt, cluster.pid(HELD_POOL), *held]
    return ids, pids, on_prompt


def test_frozen_pools_reruns_are_new_attempts_and_their_late_outcomes_count(
    cluster_factory: Callable[..., Any], database_url: str, journal: Path, tmp_path: Path
) -> None:
    cluster = history.supervised_cluster(cluster_factory, database_url, journal, **POOL)
    client = cluster.client()
    release = tmp_path / "release"
    ids, pool_pids, on_prompt = _two_pools_busy(cluster, client, journal, release)
    for pid in pool_pids:
        cluster.kill_pid(pid, signal.SIGSTOP)
    release.touch()  # for the re-runs, and for the frozen bodies once thawed
    try:
        _start_pool_b(cluster)
        finals = [client.wait(tid, timeout=40) for tid in ids]
        assert all(f.state.name == "SUCCESS" and f.attempt == 2 for f in finals), finals
        assert all(f.worker_id.startswith("pool-b/") and f.result == 2 for f in finals), finals
        assert _late_completions(cluster) == 0
    finally:
        for pid in pool_pids:
            cluster.kill_pid(pid, signal.SIGCONT)
    # Thawed, the pools finish attempt 1 of each: all refused, all counted.
    wait_until(lambda: _late_completions(cluster) >= TASKS, 30, "the late outcomes to be counted")
    assert _late_completions(cluster) == TASKS
    runs = _check_executions(cluster, journal, ids)
    assert all(len(runs[tid]) == 2 for tid in ids), runs
    rows = _rows(cluster, ids)
    assert _started_first(cluster) & set(ids) == on_prompt  # the held pool's starts never went
    for tid in ids:
        r = rows[tid]
        assert r["state"] == "SUCCESS" and r["attempt"] == 2 and r["worker_id"].startswith("pool-b/"), r
        assert r["late_reports"] == 1 and r["late_attempt"] == 1, r
        # Never seen to start: the re-run spent no retry; else a charged rescue.
        assert (r["uncharged_attempts"], r["rescues"]) == ((0, 1) if tid in on_prompt else (1, 0)), r
    shown = client.get(ids[0])
    assert shown.late_reports == 1 and shown.late_attempt == 1, shown
    explained = client.explain(ids[0])
    assert "1 late outcome refused, the last of attempt 1" in explained.message, explained.message
    history.check(cluster, ids)


def test_killed_pools_reruns_are_new_attempts(
    cluster_factory: Callable[..., Any], database_url: str, journal: Path, tmp_path: Path
) -> None:
    cluster = history.supervised_cluster(cluster_factory, database_url, journal, **POOL)
    client = cluster.client()
    release = tmp_path / "release"
    ids, pool_pids, on_prompt = _two_pools_busy(cluster, client, journal, release)
    for pid in pool_pids:
        cluster.kill_pid(pid, signal.SIGKILL)
    release.touch()  # for the re-runs
    _start_pool_b(cluster)
    finals = [client.wait(tid, timeout=40) for tid in ids]
    assert all(f.state.name == "SUCCESS" and f.worker_id.startswith("pool-b/") for f in finals), finals
    runs = _check_executions(cluster, journal, ids)
    assert all(len(runs[tid]) == 2 for tid in ids), runs
    rows = _rows(cluster, ids)
    assert _started_first(cluster) & set(ids) == on_prompt  # the held pool's starts never went
    for tid in ids:
        r = rows[tid]
        # Never seen to start: re-run as attempt 2, no retry spent; else a charged rescue.
        assert r["attempt"] == 2, r
        assert (r["uncharged_attempts"], r["rescues"]) == ((0, 1) if tid in on_prompt else (1, 0)), r
    history.check(cluster, ids)
