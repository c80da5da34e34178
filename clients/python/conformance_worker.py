"""The worker conformance task set (clients/conformance/workers.md) on the Python worker
over the public protocol (taskyard.client.worker):

    TASKYARD_TARGET=127.0.0.1:50051 TASKYARD_TOKEN=... TASKYARD_TASK_PREFIX=conformance.python. \\
    python clients/python/conformance_worker.py

Prints ``ready <worker_id>`` once the gateway welcomed it; drains on SIGTERM and exits 0;
a refusal (a wrong token, no ``work`` scope) is printed on stderr with its status name and
exits 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from typing import Any

from taskyard.client import TaskyardError
from taskyard.client.worker import AttemptContext, Fatal, Worker


class Flaky(Exception):
    """flaky's failure before the attempt it succeeds on."""


def build(env: dict[str, str]) -> Worker:
    prefix = env.get("TASKYARD_TASK_PREFIX", "")
    worker = Worker(
        env["TASKYARD_TARGET"],
        token=env["TASKYARD_TOKEN"],
        slots=int(env.get("TASKYARD_WORKER_SLOTS", "4")),
    )

    @worker.task(name=prefix + "echo")
    async def echo(ctx: AttemptContext, value: Any) -> Any:
        return value

    @worker.task(name=prefix + "flaky")
    async def flaky(ctx: AttemptContext, succeed_on: int) -> int:
        if ctx.attempt < succeed_on:
            raise Flaky(f"attempt {ctx.attempt}")
        return ctx.attempt

    @worker.task(name=prefix + "fatal")
    async def fatal(ctx: AttemptContext, message: str) -> None:
        raise Fatal(message)

    @worker.task(name=prefix + "sleep")
    async def sleep(ctx: AttemptContext, seconds: float) -> float:
        # A cancel ends the wait early; the worker then reports the attempt cancelled.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ctx.cancelled.wait(), seconds)
        return seconds

    @worker.task(name=prefix + "stubborn")
    def stubborn(ctx: AttemptContext, seconds: float) -> str:
        time.sleep(seconds)  # a thread no cancel reaches
        return "done"

    @worker.task(name=prefix + "chatty")
    async def chatty(ctx: AttemptContext) -> str:
        for word in ("one", "two", "three"):
            ctx.log(word)
        ctx.progress(0.5, "half")
        return "ok"

    @worker.task(name=prefix + "parent")
    async def parent(ctx: AttemptContext, value: Any) -> str:
        return await ctx.submit_child(prefix + "echo", value)

    return worker


def ready(worker_id: str) -> None:
    print(f"ready {worker_id}", flush=True)


async def main() -> int:
    worker = build(dict(os.environ))
    worker.handle_signals()
    try:
        await worker.run(ready=ready)
    except TaskyardError as err:
        print(f"conformance worker refused: {err.code.name}: {err.message}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
