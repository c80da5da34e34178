"""A Python task's ``ctx.progress`` on WatchEvents (a real cluster): one
``task.progress`` event with the fraction and the message, after the task's
start and before its end, and WatchEvents' filters take it as a task event of
the state the task is in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.mark.cluster(task_modules=("taskyard.examples", "support.progress_tasks"))
def test_progress_is_an_event_between_the_start_and_the_end(cluster: Any, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    with cluster.client() as client:
        task = client.submit("progress_when_let", str(gate), 2)
        watch = client.events.watch(task_ids=[task.id], start="oldest")
        seen: list[Any] = []
        try:
            for event in watch:
                seen.append(event)
                if event.type == "task.started":
                    gate.touch()  # it reports progress only now, while RUNNING
                if event.type == "task.succeeded":
                    break
        finally:
            watch.close()
        types = [e.type for e in seen]
        started, succeeded = types.index("task.started"), types.index("task.succeeded")
        progress = [i for i, t in enumerate(types) if t == "task.progress"]
        # One per batch of the task's log that set it: its two reports may share one.
        assert progress and started < progress[0] and progress[-1] < succeeded, types
        last = seen[progress[-1]]
        assert dict(last.attributes) == {"fraction": "1.0", "message": "step 2 of 2"}
        assert (last.kind, last.state, last.task_name, last.queue, last.attempt) == (
            "task",
            "RUNNING",
            "progress_when_let",
            "default",
            1,
        )
        assert last.root_id == task.id and last.worker_id and last.pool_id
        assert client.get(task.id).context["progress"]["message"] == "step 2 of 2"

        # The filters: a task event of its task, its name and the state it is in.
        running = client.events.watch(
            kinds=["task"], task_names=["progress_when_let"], states=["running"], start="oldest"
        )
        try:
            filtered: list[str] = []
            for event in running:
                filtered.append(event.type)
                if event.cursor == last.cursor:
                    break
        finally:
            running.close()
        assert filtered == ["task.started"] + ["task.progress"] * len(progress)
