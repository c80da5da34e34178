"""Cancelling a task right after submitting it, as a user does: the answer never
says "not started" about a body that runs (real store, scheduler and a pool with
worker processes).

A cancel ends at once (step NOT_STARTED) only a task no pool was handed. A
dispatched one gets the flag: its pool never starts the body if it has not yet
and reports NOT_STARTED, else the step that stopped the body. ``journal_run``
journals every execution of its body, so each "not started" is checked against
what ran, once the suite is stopped and no body can run any more.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import history

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(240)]

ROUNDS = 200
# Long enough that a started body is still running when its cancel comes.
BODY_SECONDS = 30.0
STOPPED_AFTER_START = {"FLAG", "ASYNCIO", "KILL"}


def bodies_run(journal: Path) -> set[str]:
    """Task ids whose body ran (journal_run's lines: "run <task id> <attempt> <pid>")."""
    return {line.split()[1] for line in journal.read_text().splitlines() if line.startswith("run ")}


def test_no_body_runs_after_the_answer_says_not_started(
    cluster_factory: Callable[..., Any], database_url: str, journal: Path
) -> None:
    cluster = history.supervised_cluster(
        cluster_factory,
        database_url,
        journal,
        workers=2,
        concurrency=2,
        # A started body is stopped soon (asyncio cancellation), so slots free up.
        cancel_grace=0.2,
        cancel_deadline=10.0,
    )
    client = cluster.client()
    answers = {}
    for _ in range(ROUNDS):
        t = client.submit("journal_run", BODY_SECONDS)
        answers[t.id] = client.cancel(t.id, reason="test")
    finals = {tid: client.wait(tid, timeout=60) for tid in answers}
    history.check(cluster, list(answers))
    late = cluster.query(
        "SELECT id::text AS id FROM tasks WHERE id = ANY($1::uuid[]) AND late_reports > 0", list(answers)
    )
    cluster.stop()  # every worker process has ended: the journal is complete
    ran = bodies_run(journal)

    answered_not_started = {tid for tid, a in answers.items() if a.step == "NOT_STARTED"}
    ended_not_started = {tid for tid, f in finals.items() if f.cancel_step == "NOT_STARTED"}
    flagged = {tid for tid, a in answers.items() if not a.cancelled}
    counts = (
        f"{len(answered_not_started)} answered NOT_STARTED, {len(flagged)} flagged,"
        f" {len(ended_not_started)} ended NOT_STARTED, {len(ran)} bodies ran"
    )
    for a in answers.values():
        # An answer is CANCELLED NOT_STARTED, or only the flag of a leased attempt.
        if a.cancelled:
            assert (a.step, a.task.state.name) == ("NOT_STARTED", "CANCELLED"), a
        else:
            assert a.step == "" and a.task.cancel_requested, a
            assert a.task.state.name in ("ASSIGNED", "RUNNING"), a
    assert {f.state.name for f in finals.values()} == {"CANCELLED"}, counts
    assert not answered_not_started & ran, f"bodies ran after NOT_STARTED answers; {counts}"
    assert not ended_not_started & ran, f"bodies ran of tasks that ended NOT_STARTED; {counts}"
    # A body that ran ended with the step that stopped it, and no outcome came late.
    assert all(finals[tid].cancel_step in STOPPED_AFTER_START for tid in ran), counts
    assert late == [], counts
