"""Celery + Redis for bench/load: bench/compare's redis-server and its Celery worker (one
prefork worker, --concurrency 2, broker db 0, results db 1), started the same way."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from _compare.celery import celery_app
from _compare.child import self_argv, spawn, stop_children
from _compare.servers import Redis


@contextlib.contextmanager
def celery_worker(redis: Redis, logs: Path) -> Iterator[None]:
    """A fresh worker on empty Redis databases, ready (it ran a task) when this yields."""
    redis.flush()
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / "celery-worker.log", "ab") as log:
        worker = spawn(self_argv("celery-worker", "--redis-url", redis.url), log)
        try:
            app, noop = celery_app(redis.url)
            try:
                # The first get() waits until the worker (and both children) took a task.
                noop.delay().get(timeout=60)
            finally:
                app.close()
            yield
        finally:
            stop_children([worker])
