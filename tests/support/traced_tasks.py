"""Task functions of the tracing tests: retries, children, a dying worker, own spans."""

from __future__ import annotations

import os
import signal

from opentelemetry import trace

from taskyard.worker_pool import TaskContext, task

tracer = trace.get_tracer("support.traced_tasks")


@task(max_retries=3, retry_backoff=0.01, retry_backoff_max=0.01, retry_jitter=0.0)
def fails_twice_then_succeeds(ctx: TaskContext) -> int:
    """Attempts 1 and 2 raise; attempt 3 opens a span of its own and returns."""
    if ctx.attempt < 3:
        raise RuntimeError(f"attempt {ctx.attempt} fails on purpose")
    with tracer.start_as_current_span("own work") as span:
        span.set_attribute("work.items", 3)
    ctx.log("done on the third attempt")
    return ctx.attempt


@task
def leaf(n: int) -> int:
    return n * 2


@task
def submits_two_children(ctx: TaskContext) -> list[str]:
    return [ctx.submit("leaf", 1), ctx.submit("leaf", 2)]


@task(max_retries=2, retry_backoff=0.01, retry_backoff_max=0.01, retry_jitter=0.0)
def dies_on_first_attempt(ctx: TaskContext) -> int:
    """Its worker process is SIGKILLed on attempt 1 (by itself); attempt 2 returns."""
    if ctx.attempt == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return ctx.attempt
