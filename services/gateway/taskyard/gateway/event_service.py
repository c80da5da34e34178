"""taskyard.v1.EventService: WatchEvents (docs/events.md).

Responses leave as bytes the streams made (``event_wire``), through a
pass-through serializer: a segment every unfiltered stream sends is encoded
once, not once per stream.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from taskyard.bus.v1 import event_log_pb2
from taskyard.core import contract, errors, rpc, tenants
from taskyard.core.clock import Clock, SystemClock
from taskyard.core.config import GatewaySettings
from taskyard.gateway import status
from taskyard.gateway.event_ring import Ring
from taskyard.gateway.event_stream import EventStream, Interrupted, LogHealth, StreamLimits, TooSlow
from taskyard.gateway.event_tail import EventTail
from taskyard.v1 import event_service_pb2 as pub

log = logging.getLogger(__name__)

EVENT_SERVICE_NAME = pub.DESCRIPTOR.services_by_name["EventService"].full_name
# Seconds the store's log may go unread before the streams end with UNAVAILABLE and
# their cursor: a client told of the outage retries, where an idle stream would look
# like a quiet suite.
LOG_OUTAGE_SECONDS = 5.0


def too_slow(cursor: str) -> errors.TaskyardError:
    return errors.TaskyardError(
        errors.Code.RESOURCE_EXHAUSTED,
        "CONSUMER_TOO_SLOW",
        "the stream fell too far behind the events; continue with after = "
        "the cursor in this error's metadata",
    )


async def abort_with_cursor(context: Any, exc: errors.TaskyardError, cursor: str) -> None:
    """Abort with ``exc``'s status, its ErrorInfo carrying ``cursor`` (metadata "cursor")."""
    st = status.to_status(exc)
    for detail in st.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            info.metadata["cursor"] = cursor
            detail.Pack(info)
    out = rpc_status.to_status(st)
    await context.abort(out.code, out.details, trailing_metadata=out.trailing_metadata)


def strip_names(event: pub.Event) -> None:
    """``event``'s queue, schedule and limit names as its tenant knows them (stored
    qualified, core/tenants.py): once, as it enters the ring or a replay, for every
    stream (an operator's reads ``tenant`` beside the bare name)."""
    tenant = event.tenant
    if not tenant:
        return
    event.queue = tenants.strip(tenant, event.queue)
    event.schedule_name = tenants.strip(tenant, event.schedule_name)
    for key, value in event.attributes.items():
        bare = tenants.strip(tenant, value)
        if bare != value:
            event.attributes[key] = bare


def _as_is(data: bytes) -> bytes:
    return data


class EventService:
    def __init__(self, *, store: rpc.Caller, settings: GatewaySettings, clock: Clock | None = None) -> None:
        self._store = store
        self._clock = clock or SystemClock()
        self.ring = Ring(settings.event_ring_size)
        self.limits = StreamLimits(
            page=settings.event_page_size,
            idle_interval=settings.event_idle_interval,
            poll_interval=settings.event_poll_interval,
            outage=LOG_OUTAGE_SECONDS,
        )
        self.health = LogHealth()
        self.tail = EventTail(
            self.ring,
            self.read_store,
            page=settings.event_page_size,
            poll_interval=settings.event_poll_interval,
            clock=self._clock,
            health=self.health,
            outage=LOG_OUTAGE_SECONDS,
        )
        self.cut_off = 0

    async def read_store(self, req: event_log_pb2.ReadEventsRequest) -> event_log_pb2.ReadEventsReply:
        reply = await self._store.call(contract.STORE_READ_EVENTS, req)
        for event in reply.events:
            strip_names(event)
        return reply

    def register(self, server: grpc.aio.Server) -> None:
        handler = grpc.unary_stream_rpc_method_handler(
            self.watch_events,
            request_deserializer=pub.WatchEventsRequest.FromString,
            response_serializer=_as_is,
        )
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(EVENT_SERVICE_NAME, {"WatchEvents": handler}),)
        )

    async def run(self) -> None:
        await self.tail.run()

    def close(self) -> None:
        """The gateway stops: every stream not blocked in a send ends now, with its
        cursor (UNAVAILABLE ``GATEWAY_STOPPING``), so its client continues elsewhere."""
        self.health.closing = True
        self.ring.interrupt()

    async def watch_events(self, request: pub.WatchEventsRequest, context: Any) -> AsyncIterator[bytes]:
        with self.tail.watching():
            stream = EventStream(
                request,
                ring=self.ring,
                read_store=self.read_store,
                clock=self._clock,
                limits=self.limits,
                health=self.health,
            )
            try:
                async for data in stream.responses():
                    yield data
            except TooSlow as slow:
                self.cut_off += 1
                await abort_with_cursor(context, too_slow(slow.cursor), slow.cursor)
            except Interrupted as ended:
                await abort_with_cursor(context, ended.error, ended.cursor)
            except errors.TaskyardError as exc:
                if exc.code is errors.Code.UNAVAILABLE and stream.cursor:
                    await abort_with_cursor(context, exc, stream.cursor)  # a replay's read failed
                await status.abort(context, exc)
