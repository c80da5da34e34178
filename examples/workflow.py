"""When and whether tasks run: a delay, a dependency chain, children, a task's log,
a cancel, a periodic schedule and an explanation (the blocking client).

    python examples/workflow.py [TARGET]     # TARGET: argv, else $TASKYARD_TARGET, else localhost:50051

Needs a running suite with the example tasks loaded (``make dev``). Exits 1 when a
call fails or a step does not end as expected.
"""

from __future__ import annotations

import os
import sys
import uuid

from taskyard.client import Client, TaskState, TaskyardError


def target_from(argv: list[str]) -> str:
    return argv[1] if len(argv) > 1 else os.environ.get("TASKYARD_TARGET", "localhost:50051")


def check(ok: bool, what: str) -> None:
    if not ok:
        raise SystemExit(f"error: {what}")


def main(argv: list[str]) -> int:
    target = target_from(argv)
    print(f"connecting to {target}")
    try:
        with Client(target, timeout=10.0) as client:
            # A delay: SCHEDULED until due, then it runs like any task.
            later = client.submit("add", 1, 1, countdown=1.0)
            why = client.explain(later.id)
            print(f"countdown: {later.state.name}, explain: {why.reason} ({why.message})")
            check(client.wait(later.id, timeout=30).result == 2, "the delayed task did not run")

            # A chain: b waits for a, c for b; c is queued only once b succeeded.
            a = client.submit("add", 2, 3)
            b = client.submit("add", 10, 5, depends_on=[a.id])
            c = client.submit("add", 100, 1, depends_on=[b.id])
            done = client.wait(c.id, timeout=30)
            print(f"chain a -> b -> c: c is {done.state.name} with {done.result}")
            check(done.state is TaskState.SUCCESS, "the chain did not succeed")

            # A failed dependency cancels what waits on it, with the reason.
            bad = client.submit("fail", "no input", max_retries=0)
            after = client.submit("add", 0, 0, depends_on=[bad.id])
            cancelled = client.wait(after.id, timeout=30)
            print(f"after a failure: {cancelled.state.name} ({cancelled.cancel_reason})")
            check(cancelled.state is TaskState.CANCELLED, "the dependent was not cancelled")

            # Children: a task submits others; the tree shows the hierarchy.
            parent = client.submit("fan_out", 2)
            children = client.wait(parent.id, timeout=30).result  # fan_out returns their ids
            for child in children if isinstance(children, list) else []:
                client.wait(str(child), timeout=30)
            tree = client.tree(parent.id)
            for node in tree.nodes:
                print(f"tree: {'  ' * node.depth}{node.task.name} {node.task.state.name}")
            check(len(tree.nodes) == 3, "fan_out(2) should have two children")

            # A task's log, followed to its end.
            chatty = client.submit("chatty", 5, 2)
            lines = [line.message for line in client.logs.follow(chatty.id, timeout=30)]
            print(f"log of chatty: {len(lines)} lines, last {lines[-1]!r}")
            check(lines[-1] == "line 4", "the log stream missed lines")

            # Cancel a running task and learn which step stopped it.
            sleeper = client.submit("sleep", 60)
            client.wait(sleeper.id, timeout=1)  # give it a moment to start
            stop = client.cancel(sleeper.id, "not needed", wait=15)
            print(f"cancel: {stop.task.state.name} by step {stop.step}")
            check(stop.task.state is TaskState.CANCELLED, "the sleeper was not cancelled")

            # A periodic schedule, fired once by hand, then removed.
            name = f"example-{uuid.uuid4().hex[:8]}"
            schedule = client.schedules.create(name, "add", 20, 22, cron="0 3 * * *", time_zone="UTC")
            fired = client.schedules.trigger(schedule.id)
            result = client.wait(fired.task.id, timeout=30).result
            print(f"schedule {name}: next run {schedule.next_run_at:%Y-%m-%d %H:%M} UTC, trigger -> {result}")
            client.schedules.delete(schedule.id)
            check(result == 42, "the triggered run did not succeed")
    except TaskyardError as exc:
        print(f"error: {exc}", file=sys.stderr)
        for violation in exc.violations:
            print(f"  {violation.field}: {violation.description}", file=sys.stderr)
        return 1
    print("workflow done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
