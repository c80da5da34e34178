"""Submit tasks to Taskyard and wait for their results (the blocking client).

    python examples/quickstart.py [TARGET]      # TARGET: argv, else $TASKYARD_TARGET, else localhost:50051

Needs a running suite with the example tasks loaded (``make dev``). Exits 1 when a
call fails or a task does not end SUCCESS.
"""

from __future__ import annotations

import json
import os
import sys

from taskyard.client import Client, TaskRequest, TaskState, TaskyardError


def target_from(argv: list[str]) -> str:
    return argv[1] if len(argv) > 1 else os.environ.get("TASKYARD_TARGET", "localhost:50051")


def main(argv: list[str]) -> int:
    target = target_from(argv)
    print(f"connecting to {target}")
    try:
        with Client(target, timeout=10.0) as client:
            task = client.submit("add", 2, 3)
            print(f"submitted add(2, 3): {task.id} ({task.state.name})")
            done = client.wait(task.id, timeout=30)
            print(f"add(2, 3) -> {done.result} ({done.state.name})")
            ok = done.state is TaskState.SUCCESS and done.result == 5

            # One BatchSubmitTasks call: all accepted or none; outcomes in order.
            batch = [
                TaskRequest(name="echo", args=[f"message {i}"], kwargs={"n": i}, priority=priority)
                for i, priority in enumerate(["low", "normal", "high", "critical"])
            ]
            submitted = client.submit_many(batch)
            print(f"submitted a batch of {len(submitted)} echo tasks")
            for request, outcome in zip(batch, submitted, strict=True):
                final = client.wait(outcome.id, timeout=30)
                result = json.dumps(final.result, sort_keys=True)
                print(f"echo [{request.priority}] -> {result} ({final.state.name})")
                ok = ok and final.state is TaskState.SUCCESS
    except TaskyardError as exc:
        print(f"error: {exc}", file=sys.stderr)
        for violation in exc.violations:
            print(f"  {violation.field}: {violation.description}", file=sys.stderr)
        return 1
    if not ok:
        print("error: a task did not succeed", file=sys.stderr)
        return 1
    print("all tasks succeeded")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
