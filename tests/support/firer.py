"""A scheduler's firing loop in its own process, on a clock the test drives.

Reads one Unix-microsecond time per line on stdin, fires every schedule due by
then (``Periodic.fire_due`` against the store at argv[1]) and answers with the
number of runs this process fired. Used to race two "schedulers" for the same
runs (tests/integration/test_periodic.py).
"""

from __future__ import annotations

import asyncio
import sys

from taskyard.core import rpc
from taskyard.scheduler.lanes import Lanes
from taskyard.scheduler.periodic import Periodic


class StepClock:
    def __init__(self) -> None:
        self.now_s = 0.0

    def now(self) -> float:
        return self.now_s

    def monotonic(self) -> float:
        return self.now_s

    async def sleep(self, seconds: float) -> None:  # pragma: no cover - not used here
        await asyncio.sleep(0)


async def main(address: str) -> None:
    store = rpc.Requester(address, max_message_bytes=16 << 20, timeout=10)
    clock = StepClock()
    periodic = Periodic(store, lanes=Lanes(), wake=lambda: None, clock=clock)
    loop = asyncio.get_running_loop()
    print("ready", flush=True)
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line.strip():
            break
        clock.now_s = int(line) / 1_000_000
        fired = await periodic.fire_due()
        print(fired, flush=True)
    store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
