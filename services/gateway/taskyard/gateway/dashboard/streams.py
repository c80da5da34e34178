"""Server-sent events: ``/api/pulse`` (the whole suite, one stream per gateway:
hub.py), ``/api/limits`` (the limits and their usage, one poll per gateway:
usage.py) and, one gRPC stream per connection, a few tasks' events and one task's
log, relayed as SSE.

Each message carries an ``id:`` a reconnect sends back as ``Last-Event-ID``:
an event's cursor (``WatchEvents`` resumes after it), or a log line's offset
(``StreamTaskLogs`` resumes at the next one). A gRPC error ends the stream with
an ``error`` message holding the same JSON as the API's error answers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import grpc
from aiohttp import web
from google.protobuf import json_format, message

from taskyard.gateway import auth
from taskyard.gateway.dashboard import calls
from taskyard.gateway.dashboard.scopes import Shared
from taskyard.v1 import event_service_pb2, task_service_pb2

# The filters that make /api/events follow given tasks: one of them is required.
TASK_FILTERS = ("task_ids", "root_ids")
WATCH = calls.method("taskyard.v1.EventService", "WatchEvents")
LOGS = calls.method("taskyard.v1.TaskService", "StreamTaskLogs")
# One SSE message: (event type, id or None, data).
Message = tuple[str, str | None, Mapping[str, Any]]


class TooManyStreams(Exception):
    pass


class Slots:
    """The live views open: at most ``limit`` per gateway, and at most ``per_client`` for
    one token and for one client address, so that one reader cannot hold every slot."""

    def __init__(self, *, limit: int, per_client: int) -> None:
        self.limit = limit
        self.per_client = per_client
        self.open = 0
        self._held: dict[str, int] = {}

    @staticmethod
    def clients(request: web.Request) -> tuple[str, ...]:
        keys = [f"address {request.remote or ''}"]
        # The token as the gateway reads it (any case of "Bearer", any spaces), so one
        # token is one client however its header is spelt.
        token = auth.bearer(calls.metadata(request.headers.get("Authorization")))
        if token:
            # A digest: the table of who holds what never keeps a token.
            keys.append("token " + hashlib.sha256(token.encode()).hexdigest())
        return tuple(keys)

    def refusal(self, clients: tuple[str, ...]) -> web.Response | None:
        if self.open >= self.limit:
            return web.json_response(
                {"code": "RESOURCE_EXHAUSTED", "message": f"at most {self.limit} live views per gateway"},
                status=503,
            )
        if any(self._held.get(c, 0) >= self.per_client for c in clients):
            return web.json_response(
                {
                    "code": "RESOURCE_EXHAUSTED",
                    "message": f"at most {self.per_client} live views per token and per address",
                },
                status=429,
            )
        return None

    @contextlib.contextmanager
    def held(self, clients: tuple[str, ...]) -> Iterator[None]:
        self.open += 1
        for c in clients:
            self._held[c] = self._held.get(c, 0) + 1
        try:
            yield
        finally:
            self.open -= 1
            for c in clients:
                left = self._held[c] - 1
                if left:
                    self._held[c] = left
                else:
                    del self._held[c]


def query_request(method: calls.Method, query: Mapping[str, str], getall: Any) -> dict[str, Any]:
    """A request's JSON from query parameters named like its fields (proto or JSON
    names); a repeated field takes the parameter as often as it is given."""
    body: dict[str, Any] = {}
    fields = method.request_type.DESCRIPTOR.fields
    for field in fields:
        for key in (field.name, field.json_name):
            if key not in query:
                continue
            if field.is_repeated:
                body[field.name] = [v for v in getall(key) if v]
            else:
                body[field.name] = query[key]
    return body


def watch_messages(response: event_service_pb2.WatchEventsResponse) -> Iterable[Message]:
    last = ""
    for event in response.events:
        last = event.cursor
        yield "event", event.cursor, calls.to_json(event)
    if response.cursor and response.cursor != last:
        # Read past filtered-out events (or idle): a reconnect skips them too.
        yield "cursor", response.cursor, {}


def log_messages(response: task_service_pb2.StreamTaskLogsResponse) -> Iterable[Message]:
    if response.logs:
        yield "logs", str(response.logs[-1].offset), calls.to_json(response)


def encode(kind: str, ident: str | None, data: Mapping[str, Any]) -> bytes:
    lines = [f"event: {kind}"]
    if ident is not None:
        lines.append(f"id: {ident}")
    lines.append("data: " + json.dumps(data, separators=(",", ":")))
    return ("\n".join(lines) + "\n\n").encode()


class Streams:
    """The SSE endpoints and the count of open ones."""

    def __init__(self, loopback: calls.Loopback, hub: Shared, *, limit: int, per_client: int) -> None:
        self._loopback = loopback
        self._hub = hub
        self.slots = Slots(limit=limit, per_client=per_client)

    async def pulse(self, request: web.Request) -> web.StreamResponse:
        """``GET /api/pulse``: the suite's summary every half second (hub.py)."""
        return await self.feed(self._hub, request)

    async def feed(self, feed: Shared, request: web.Request) -> web.StreamResponse:
        """A view shared by every page (hub.Feed), in a live view's slot."""
        clients = Slots.clients(request)
        refused = self.slots.refusal(clients)
        if refused is not None:
            return refused
        with self.slots.held(clients):
            return await feed.serve(request)

    async def events(self, request: web.Request) -> web.StreamResponse:
        """``GET /api/events?task_ids=...`` (or ``root_ids``): those tasks' events as SSE.

        The suite's events as a whole are /api/pulse's summaries (or WatchEvents
        itself): a stream per page of every event would cost the suite."""
        body = query_request(WATCH, request.query, request.query.getall)
        if not any(body.get(f) for f in TASK_FILTERS):
            return web.json_response(
                {
                    "code": "INVALID_ARGUMENT",
                    "message": "give task_ids or root_ids; the whole suite is /api/pulse",
                },
                status=400,
            )
        resume = request.headers.get("Last-Event-ID")
        if resume:
            body["after"] = resume
        return await self._relay(request, WATCH, body, watch_messages)

    async def logs(self, request: web.Request) -> web.StreamResponse:
        """``GET /api/tasks/{id}/logs``: StreamTaskLogs as SSE, then an ``end`` message."""
        body: dict[str, Any] = {"id": request.match_info["id"]}
        resume = request.headers.get("Last-Event-ID", "")
        if resume.isdigit():
            body["from_offset"] = int(resume) + 1
        return await self._relay(request, LOGS, body, log_messages, end=True)

    async def _relay(
        self,
        request: web.Request,
        method: calls.Method,
        body: dict[str, Any],
        messages: Any,
        *,
        end: bool = False,
    ) -> web.StreamResponse:
        try:
            rpc_request = calls.parse(method, body)
        except json_format.ParseError as exc:
            return web.json_response({"code": "INVALID_ARGUMENT", "message": str(exc)}, status=400)
        clients = Slots.clients(request)
        refused = self.slots.refusal(clients)
        if refused is not None:
            return refused
        with self.slots.held(clients):
            return await self._pump(request, method, rpc_request, messages, end=end)

    async def _pump(
        self,
        request: web.Request,
        method: calls.Method,
        rpc_request: message.Message,
        messages: Any,
        *,
        end: bool,
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            }
        )
        await response.prepare(request)
        await response.write(b": open\n\n")
        call = self._loopback.stream(method)(
            rpc_request,
            metadata=calls.metadata(request.headers.get("Authorization"), calls.page_tenant(request.query)),
        )
        try:
            async for reply in call:
                for kind, ident, data in messages(reply):
                    await response.write(encode(kind, ident, data))
            if end:
                await response.write(encode("end", None, {}))
        except grpc.aio.AioRpcError as exc:
            await response.write(encode("error", None, calls.error_body(exc)[1]))
        finally:
            call.cancel()
        return response
