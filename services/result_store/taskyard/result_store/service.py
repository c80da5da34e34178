"""Run the result-store: migrate, serve the query port, publish events."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from taskyard.core import gate, health, seal
from taskyard.core.background import Background, until_stopped
from taskyard.core.config import StoreSettings
from taskyard.core.rpc import Responder

from . import counters
from . import metrics as store_metrics
from .store import ResultStore

log = logging.getLogger("taskyard.result_store")

CONCURRENCY = 128


async def serve(settings: StoreSettings, stop: asyncio.Event) -> None:
    """Serve until ``stop`` is set; a loop of the service that ends first (a crash)
    raises ``LoopEnded`` once the store has closed, and the process exits with it."""
    if settings.transport == "ipc":
        await asyncio.to_thread(Path(settings.ipc_dir).mkdir, parents=True, exist_ok=True)
    store = await ResultStore.open(settings)
    responder: Responder | None = None
    background = Background("result-store")
    background.start(counters.record_bus_refusals(store.pool, seal.current().refusals), name="bus-refusals")
    if settings.metrics_served:
        background.start(store_metrics.keep_queue_depth(store.pool), name="queue-depth")
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
        background.start(responder.serve(), name="store-responder")
        health.mark_ready()
        # Not a loop of the set: it ends by itself once ``stop`` is set, maybe before the
        # set hears of the stop.
        background.spawn(store.readiness.follow(stop), name="store-readiness")
        log.info(
            "result-store ready on %s (events %s, notify %s)",
            settings.store_listen_address,
            settings.events_listen_address,
            settings.notify_channel if settings.use_notify else "off",
        )
        await until_stopped(stop, background, store.background)
        log.info("result-store stopping")
    finally:
        background.stopping()
        store.background.stopping()
        health.mark_ready(False)
        if responder is not None:
            responder.close()
        await background.close()
        await store.close()
    log.info("result-store stopped")


async def migrate_only(settings: StoreSettings) -> list[str]:
    from .migrate import migrate_dsn

    if not settings.database_url:
        raise SystemExit("TASKYARD_DATABASE_URL (or DATABASE_URL) is not set")
    return await migrate_dsn(
        settings.database_url,
        notify_channel=settings.notify_channel,
        max_payload_bytes=settings.max_payload_bytes,
    )
