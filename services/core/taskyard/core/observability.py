"""What every service turns on at start: span export (OTEL_*), ``/metrics`` and the
probes' ``/livez`` and ``/readyz``."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

from taskyard.core import health, thread_server, tracing

if TYPE_CHECKING:
    from taskyard.core.config import Settings
    from taskyard.core.metrics import MetricsServer

log = logging.getLogger(__name__)


@contextlib.contextmanager
def observed(service: str, settings: Settings) -> Iterator[MetricsServer | None]:
    """Tracing and metrics for the block; spans still queued are flushed at its end."""
    tracing.configure(service)
    server = None
    if settings.metrics_port:
        # Imported only when served: prometheus_client costs every process ~2 MiB.
        from taskyard.core import metrics

        server = metrics.serve(
            settings.metrics_host,
            settings.metrics_port,
            token=settings.metrics_token or None,
            limits=thread_server.Limits.from_settings(settings),
        )
    probes = None
    if settings.health_port:
        probes = health.HealthServer(
            settings.effective_bind_host,
            settings.health_port,
            limits=thread_server.Limits.from_settings(settings),
        )
    try:
        yield server
    finally:
        if probes is not None:
            probes.close()
        if server is not None:
            server.close()
        tracing.shutdown()
