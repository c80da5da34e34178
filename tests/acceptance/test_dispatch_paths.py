"""A task leased at insert time reaches its pool twice (the store's post-commit
stream and the scheduler's PAIR): it must run exactly once."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.acceptance


def test_fast_path_tasks_run_exactly_once(cluster: Any, journal: Path) -> None:
    client = cluster.client()
    for i in range(40):
        # One at a time: the system is idle at each submit, so each takes the fast path.
        task = client.submit("journal", f"k{i}")
        assert task.state.name in ("ASSIGNED", "RUNNING", "SUCCESS"), f"task {i} not leased at insert"
        assert client.wait(task.id, timeout=30).state.name == "SUCCESS"
    # Late duplicate copies would arrive within milliseconds; give them a beat to show.
    second = client.submit("journal", "last")
    client.wait(second.id, timeout=30)
    runs = collections.Counter(
        line.split()[1] for line in journal.read_text().splitlines() if line.startswith("start ")
    )
    assert len(runs) == 41
    assert set(runs.values()) == {1}, [k for k, n in runs.items() if n > 1]
