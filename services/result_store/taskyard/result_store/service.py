"""Run the result-store: migrate, serve the query port, publish events."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from taskyard.core import gate, health, seal
from taskyard.core.config import Settings
from taskyard.core.rpc import Responder

from . import counters
from . import metrics as store_metrics
from .store import ResultStore

log = logging.getLogger("taskyard.result_store")

CONCURRENCY = 128


async def serve(settings: Settings, stop: asyncio.Event) -> None:
    """Serve until ``stop`` is set."""
    if settings.transport == "ipc":
        await asyncio.to_thread(Path(settings.ipc_dir).mkdir, parents=True, exist_ok=True)
    store = await ResultStore.open(settings)
    responder: Responder | None = None
    depth: asyncio.Task[None] | None = None
    ready: asyncio.Task[None] | None = None
    refusals = asyncio.create_task(
        counters.record_bus_refusals(store.pool, seal.current().refusals), name="bus-refusals"
    )
    if settings.metrics_port:
        depth = asyncio.create_task(store_metrics.keep_queue_depth(store.pool), name="queue-depth")
    try:
        store.start()
        responder = Responder(
            settings.store_listen_address,
            store.routes(),
            # Writes are batches cut at half of max_message_bytes by their senders;
            # reads are bounded by the gRPC request they answer (core.gate).
            max_message_bytes=gate.store_receive_limit(settings.max_message_bytes),
            concurrency=CONCURRENCY,
            limits=gate.store_request_limits(settings.grpc_max_message_bytes),
        )
        serving = asyncio.create_task(responder.serve(), name="store-responder")
        health.mark_ready()
        ready = asyncio.create_task(store.readiness.follow(stop), name="store-readiness")
        log.info(
            "result-store ready on %s (events %s, notify %s)",
            settings.store_listen_address,
            settings.events_listen_address,
            settings.notify_channel if settings.use_notify else "off",
        )
        stopper = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait({serving, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if serving in done:
            serving.result()  # surface a crash
        log.info("result-store stopping")
        health.mark_ready(False)
        responder.close()
        serving.cancel()
        stopper.cancel()
        await asyncio.gather(serving, stopper, return_exceptions=True)
    finally:
        if responder is not None:
            responder.close()
        helpers = [t for t in (refusals, depth, ready) if t is not None]
        for t in helpers:
            t.cancel()
        await asyncio.gather(*helpers, return_exceptions=True)
        await store.close()
    log.info("result-store stopped")


async def migrate_only(settings: Settings) -> list[str]:
    from .migrate import migrate_dsn

    if not settings.database_url:
        raise SystemExit("TASKYARD_DATABASE_URL (or DATABASE_URL) is not set")
    return await migrate_dsn(
        settings.database_url,
        notify_channel=settings.notify_channel,
        max_payload_bytes=settings.max_payload_bytes,
    )
