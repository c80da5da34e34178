"""A task that declares its limits in code (loaded into real worker pools by the flow-control
tests: the pool declares them to the store when it starts)."""

from __future__ import annotations

import asyncio

from taskyard.worker_pool import task


@task(rate_limit="100/s", rate_burst=20, concurrency=3, limit_key="customer_id")
def send_invoice(invoice: int, *, customer_id: str = "") -> int:
    return invoice


@task(concurrency=1, limit_key="account")
async def settle(seconds: float, *, account: str = "") -> float:
    await asyncio.sleep(seconds)
    return seconds
