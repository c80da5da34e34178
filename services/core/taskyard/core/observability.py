"""What every service turns on at start: span export (OTEL_*) and ``/metrics``."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

from taskyard.core import metrics, tracing

if TYPE_CHECKING:
    from taskyard.core.config import Settings

log = logging.getLogger(__name__)


@contextlib.contextmanager
def observed(service: str, settings: Settings) -> Iterator[metrics.MetricsServer | None]:
    """Tracing and metrics for the block; spans still queued are flushed at its end."""
    tracing.configure(service)
    server = metrics.serve(settings.metrics_host, settings.metrics_port, token=settings.metrics_token or None)
    try:
        yield server
    finally:
        if server is not None:
            server.close()
        tracing.shutdown()
