"""A history of every task row change, for the "no final state is ever overwritten" check.

``install(database_url)`` adds (to a test's own database, before its cluster
starts) a table ``test_task_history`` and an AFTER UPDATE trigger on ``tasks``
recording each change of state, attempt, result, failure or finish time. The
check does not rely on the store's guard trigger: it looks at what really
happened to the rows, including same-state rewrites (say a late completion
rewriting the result of a SUCCESS row), which a transition guard cannot see.
"""

from __future__ import annotations

from typing import Any

from taskyard.core import states

# Supervision tests import it from here, beside ``row``.
from .waiting import wait_until as wait_until

INSTALL_SQL = """
CREATE TABLE IF NOT EXISTS test_task_history (
  seq bigserial PRIMARY KEY,
  task_id uuid NOT NULL,
  old_state text NOT NULL,
  new_state text NOT NULL,
  old_attempt int NOT NULL,
  new_attempt int NOT NULL,
  rewrote_outcome boolean NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE OR REPLACE FUNCTION test_record_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (OLD.state, OLD.attempt, OLD.result, OLD.failure_type, OLD.failure_message, OLD.finished_at)
     IS DISTINCT FROM
     (NEW.state, NEW.attempt, NEW.result, NEW.failure_type, NEW.failure_message, NEW.finished_at) THEN
    INSERT INTO test_task_history (task_id, old_state, new_state, old_attempt, new_attempt, rewrote_outcome)
    VALUES (NEW.id, OLD.state::text, NEW.state::text, OLD.attempt, NEW.attempt,
            (OLD.result, OLD.failure_type, OLD.failure_message)
              IS DISTINCT FROM (NEW.result, NEW.failure_type, NEW.failure_message));
  END IF;
  RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS test_task_history ON tasks;
CREATE TRIGGER test_task_history AFTER UPDATE ON tasks
  FOR EACH ROW EXECUTE FUNCTION test_record_history();
"""

FINAL = {s.name for s in states.FINAL_STATES}


def install(database_url: str) -> None:
    import asyncio

    import asyncpg

    async def run() -> None:
        conn = await asyncpg.connect(database_url)
        try:
            await conn.execute(INSTALL_SQL)
        finally:
            await conn.close()

    asyncio.run(run())


def check(cluster: Any, acknowledged: list[str]) -> list[dict[str, Any]]:
    """Every acknowledged task is final, every change followed the transition table,
    and no final row changed afterwards (bar a manual retry FAILURE -> QUEUED).
    Returns the history rows (for further assertions)."""
    rows = cluster.query(
        "SELECT t.id::text AS id, t.state::text AS state FROM tasks t WHERE t.id = ANY($1::uuid[])",
        acknowledged,
    )
    found = {r["id"]: r["state"] for r in rows}
    missing = sorted(set(acknowledged) - set(found))
    assert not missing, f"acknowledged tasks lost: {missing[:5]}"
    unfinished = {k: v for k, v in found.items() if v not in FINAL}
    assert not unfinished, f"acknowledged tasks not final: {list(unfinished.items())[:5]}"
    history = cluster.query("SELECT * FROM test_task_history ORDER BY seq")
    for h in history:
        old, new = states.TaskState[h["old_state"]], states.TaskState[h["new_state"]]
        if old is not new:
            assert states.can_transition(old, new), f"illegal transition in history: {h}"
        if h["old_state"] in FINAL:
            manual_retry = old is states.TaskState.FAILURE and new is states.TaskState.QUEUED
            assert manual_retry, f"a final state was overwritten: {h}"
    return history


SUPERVISION_MODULES = ("taskyard.examples", "support.tasks", "support.supervision_tasks")
# Short supervision periods so every rule shows within seconds.
SUPERVISION_DEFAULTS: dict[str, Any] = {
    "worker_heartbeat_interval": 0.3,
    "worker_idle_silence": 30.0,
    "worker_start_silence": 60.0,
    "retry_base_seconds": 0.1,
    "retry_cap_seconds": 0.5,
}


def supervised_cluster(
    cluster_factory: Any,
    database_url: str,
    journal: Any,
    *,
    env: dict[str, str] | None = None,
    **overrides: Any,
) -> Any:
    """A started cluster whose database records its history (see ``install``),
    loading the supervision test tasks, with short supervision periods."""
    install(database_url)
    values = {**SUPERVISION_DEFAULTS, "task_modules": SUPERVISION_MODULES, **overrides}
    return cluster_factory(env={"TASKYARD_TEST_JOURNAL": str(journal), **(env or {})}, **values)


def row(cluster: Any, task_id: str) -> dict[str, Any]:
    """The task's row as the store wrote it (columns the client does not show too)."""
    rows = cluster.query(
        "SELECT state::text AS state, attempt, rescues, cancel_step, resume_requested, failure_type,"
        " failure_message, worker_id FROM tasks WHERE id = $1::uuid",
        task_id,
    )
    assert rows, f"no task {task_id}"
    return rows[0]
