"""grpc.health.v1 as grpc_health serves it, plus a stop for its Watch streams.

A Watch stream (a load balancer's, or a gRPC client's own health checking) never
ends by itself: at a gateway's stop it would be a call in flight for the whole
grace. Here, once the gateway stops, each Watch stream sends NOT_SERVING and ends
with OK, and its watcher moves on at once.
"""

from __future__ import annotations

import asyncio
from typing import Any

from grpc_health.v1 import health, health_pb2

NOT_SERVING = health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.NOT_SERVING)


class HealthService(health.aio.HealthServicer):  # type: ignore[name-defined,misc]
    def __init__(self) -> None:
        super().__init__()
        self._closed = False
        self._watches: set[asyncio.Future[None]] = set()

    def close(self) -> None:
        """Every Watch stream ends now, with NOT_SERVING its last answer (call it
        after ``enter_graceful_shutdown``)."""
        self._closed = True
        for watch in self._watches:
            watch.cancel()

    async def Watch(self, request: health_pb2.HealthCheckRequest, context: Any) -> None:
        if self._closed:
            await context.write(NOT_SERVING)
            return
        # The library's Watch runs as a task of its own, so the stop can cancel it and
        # this call still ends in order (a cancelled call would end CANCELLED).
        watch = asyncio.ensure_future(super().Watch(request, context))
        self._watches.add(watch)
        try:
            await watch
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not self._closed or (task is not None and task.cancelling()):
                raise  # the call itself was cancelled (its client left)
            # The library may not have written NOT_SERVING yet; a repeat is harmless
            # (a watcher acts on the latest status).
            await context.write(NOT_SERVING)
        finally:
            self._watches.discard(watch)
