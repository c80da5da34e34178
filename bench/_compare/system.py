"""One system under test: what every one of them offers the round."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Protocol

from .accounting import ProcessMap
from .run import Plan
from .servers import Servers


class System(Protocol):
    name: str
    # Celery's numbers must not carry the idle PostgreSQL that only the others use.
    uses_postgres: bool

    def processes(self) -> ProcessMap: ...
    def throughput(self) -> float: ...
    def latencies(self) -> list[float]: ...


SystemFactory = Callable[[Servers, Plan, Path, str], contextlib.AbstractContextManager[System]]


def batch_queue(total: int, size: int) -> asyncio.Queue[int]:
    """The sizes of the submit calls that make up ``total``, for concurrent clients to share."""
    work: asyncio.Queue[int] = asyncio.Queue()
    for i in range(0, total, size):
        work.put_nowait(min(size, total - i))
    return work


async def time_until_done(
    dsn: str,
    submit: Callable[[], Coroutine[Any, Any, None]],
    count_sql: str,
    done: Callable[[int], bool],
    give_up_after: float,
    stuck: Callable[[int], str],
) -> float:
    """Seconds from the first submit until ``submit`` returned and ``done`` holds for what
    ``count_sql`` counts (every 50 ms); past ``give_up_after`` s, exits with ``stuck(count)``."""
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        t0 = time.perf_counter()
        submitting = asyncio.create_task(submit())
        deadline = t0 + give_up_after
        while True:
            await asyncio.sleep(0.05)
            count = await conn.fetchval(count_sql)
            if submitting.done() and done(count):
                submitting.result()
                return time.perf_counter() - t0
            if time.perf_counter() > deadline:
                raise SystemExit(stuck(count))
    finally:
        await conn.close()


def measure(one: Callable[[], float], plan: Plan) -> list[float]:
    for _ in range(plan.warmup):
        one()
    return [one() for _ in range(plan.samples)]
