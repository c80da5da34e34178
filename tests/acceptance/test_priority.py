"""Priority: one worker slot, 50 LOW queued, then 5 CRITICAL: every CRITICAL task
starts before any LOW task that was still waiting when they arrived."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.acceptance


@pytest.mark.cluster(workers=1, concurrency=1)
def test_critical_overtakes_queued_low(cluster: Any) -> None:
    client = cluster.client()
    low = client.submit_many([{"name": "sleep", "args": [0.02], "priority": "LOW"} for _ in range(50)])
    critical = client.submit_many(
        [{"name": "sleep", "args": [0.02], "priority": "CRITICAL"} for _ in range(5)]
    )
    done = {t.id: client.wait(t.id, timeout=60) for t in [*low, *critical]}
    assert all(t.state.name == "SUCCESS" for t in done.values())
    crit_started = [done[t.id].started_at for t in critical]
    # LOW tasks that started after the first CRITICAL one did were waiting when it came.
    first_critical = min(crit_started)
    waiting_low = [done[t.id].started_at for t in low if done[t.id].started_at > first_critical]
    assert len(waiting_low) >= 40, "the LOW backlog drained before CRITICAL arrived: test did not test"
    assert max(crit_started) < min(waiting_low)
