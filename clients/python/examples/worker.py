"""A worker over the public protocol: runs `greet(name)` for a gateway until SIGTERM.
TASKYARD_TARGET (default localhost:50051) and TASKYARD_TOKEN (a token with the `work`
scope) come from the environment; it prints `ready <worker_id>` once connected."""

import asyncio
import os

from taskyard.client.worker import AttemptContext, Worker

worker = Worker(os.environ.get("TASKYARD_TARGET", "localhost:50051"), slots=4)


@worker.task(timeout=30, max_retries=2)
async def greet(ctx: AttemptContext, name: str) -> str:
    ctx.log(f"greeting {name} (attempt {ctx.attempt})")
    return f"hello, {name}"


async def main() -> None:
    worker.handle_signals()  # SIGTERM, SIGINT: finish what runs, then exit
    await worker.run(ready=lambda worker_id: print("ready", worker_id, flush=True))


asyncio.run(main())
