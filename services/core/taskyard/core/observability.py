"""What every service turns on at start: span export (OTEL_*) and its ops port
(ops.py: ``/metrics``, ``/livez`` and ``/readyz`` on TASKYARD_METRICS_PORT)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

from taskyard.core import thread_server, tracing

if TYPE_CHECKING:
    from taskyard.core.config import TelemetrySettings
    from taskyard.core.ops import OpsServer

log = logging.getLogger(__name__)


@contextlib.contextmanager
def observed(service: str, settings: TelemetrySettings) -> Iterator[OpsServer | None]:
    """Tracing and the ops port for the block; spans still queued are flushed at its end."""
    tracing.configure(service)
    server = None
    if settings.metrics_port:
        # http.server and wsgiref only in a process that serves the port.
        from taskyard.core import ops

        server = ops.OpsServer(
            settings.metrics_host,
            settings.metrics_port,
            token=settings.metrics_token or None,
            limits=thread_server.Limits.from_settings(settings),
        )
    try:
        yield server
    finally:
        if server is not None:
            server.close()
        tracing.shutdown()
