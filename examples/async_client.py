"""The quickstart with the asyncio client: submit, then wait for everything at once.

    python examples/async_client.py [TARGET]    # TARGET: argv, else $TASKYARD_TARGET, else localhost:50051

Needs a running suite with the example tasks loaded (``make dev``). Exits 1 when a
call fails or a task does not end SUCCESS.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from taskyard.client import AsyncClient, TaskInfo, TaskRequest, TaskState, TaskyardError


async def run(target: str) -> bool:
    async with AsyncClient(target, timeout=10.0) as client:
        task = await client.submit("add", 2, 3)
        print(f"submitted add(2, 3): {task.id} ({task.state.name})")

        batch = [
            TaskRequest(name="echo", args=[f"message {i}"], kwargs={"n": i}, priority=priority)
            for i, priority in enumerate(["low", "normal", "high", "critical"])
        ]
        submitted = await client.submit_many(batch)
        print(f"submitted a batch of {len(submitted)} echo tasks")

        # Every WaitTask runs concurrently on one channel.
        ids = [task.id, *(s.id for s in submitted)]
        finals: list[TaskInfo] = await asyncio.gather(*(client.wait(i, timeout=30) for i in ids))

    add, *echoes = finals
    print(f"add(2, 3) -> {add.result} ({add.state.name})")
    for request, final in zip(batch, echoes, strict=True):
        print(f"echo [{request.priority}] -> {json.dumps(final.result, sort_keys=True)} ({final.state.name})")
    return add.result == 5 and all(f.state is TaskState.SUCCESS for f in finals)


def main(argv: list[str]) -> int:
    target = argv[1] if len(argv) > 1 else os.environ.get("TASKYARD_TARGET", "localhost:50051")
    print(f"connecting to {target}")
    try:
        ok = asyncio.run(run(target))
    except TaskyardError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if not ok:
        print("error: a task did not succeed", file=sys.stderr)
        return 1
    print("all tasks succeeded")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
