"""The dashboard's HTTP side: static pages, the JSON API, the SSE endpoints, and
the rules every request passes (headers, Host, JSON-only writes)."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
from aiohttp import web
from google.protobuf import json_format

from taskyard.core import addresses, errors
from taskyard.core.config import GatewaySettings
from taskyard.gateway import tls
from taskyard.gateway.auth import Authenticator
from taskyard.gateway.dashboard import calls, doors, history, hub, scopes, usage
from taskyard.gateway.dashboard.streams import Streams

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static"
# A write's JSON body (a cancel reason, a list of ids to retry).
MAX_BODY_BYTES = 64 * 1024
# Seconds SSE connections get to end when the gateway stops.
SHUTDOWN_TIMEOUT = 2.0
SECURITY_HEADERS = {
    # form-action 'none': the token form is never submitted natively (a press of Enter
    # before the script runs would otherwise put the token in a URL).
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
# Served over TLS: browsers keep to https for this host for a year (the certificate is
# the gRPC edge's, so the host has one for as long as it serves TLS at all).
HSTS = {"Strict-Transport-Security": "max-age=31536000"}
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _host_name(host_header: str) -> str:
    if host_header.startswith("["):
        return host_header.split("]", 1)[0] + "]"
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


def _refuse(status: int, code: str, text: str) -> web.Response:
    return web.json_response({"code": code, "message": text}, status=status)


def guard(loopback_only: bool, *, hsts: bool = False) -> Any:
    """Security headers on every answer (HSTS too when served over TLS); on loopback,
    only loopback Host names (a page of another site cannot reach it by DNS
    rebinding); writes only as JSON from this origin (a form of another site cannot
    post one)."""
    headers = {**SECURITY_HEADERS, **(HSTS if hsts else {})}

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if loopback_only and not addresses.is_loopback(_host_name(request.host)):
            return _refuse(421, "MISDIRECTED", "this dashboard answers to localhost only")
        if request.method == "POST":
            origin = request.headers.get("Origin")
            if request.content_type != "application/json":
                return _refuse(415, "INVALID_ARGUMENT", "send JSON (Content-Type: application/json)")
            if origin is not None and origin.split("://", 1)[-1] != request.host:
                return _refuse(403, "PERMISSION_DENIED", "cross-origin writes are refused")
        response = await handler(request)
        response.headers.update(headers)
        return response

    return middleware


class Api:
    """``POST /api/{service}/{method}``: one unary call of the public API, its
    request and answer in the API's JSON mapping.

    The token is judged before the body is read, and the body must be in within the
    header timeout: a client without a token, or one that declares a body and never
    sends it, holds its connection no longer than a slow header would."""

    def __init__(
        self, loopback: calls.Loopback, *, authenticator: Authenticator | None, body_timeout: float
    ) -> None:
        self._loopback = loopback
        self._authenticator = authenticator
        self._body_timeout = body_timeout

    async def call(self, request: web.Request) -> web.Response:
        try:
            method = calls.method(request.match_info["service"], request.match_info["method"])
        except calls.UnknownMethod as exc:
            return _refuse(404, "NOT_FOUND", f"no unary method {exc}")
        if method.streaming:
            return _refuse(404, "NOT_FOUND", f"{method.path} streams: see docs/dashboard.md")
        authorization = request.headers.get("Authorization")
        tenant = calls.page_tenant(request.query)
        if self._authenticator is not None:
            refusal = self._authenticator.check(method.path, calls.metadata(authorization))
            if refusal is not None:
                # Counted and logged as the gRPC edge does its own refusals.
                self._authenticator.refused += 1
                log.info("refused %s from the dashboard: %s", method.path, refusal.reason)
                return hub.refusal_answer(refusal)
        try:
            async with asyncio.timeout(self._body_timeout):
                body = await request.json() if request.can_read_body else {}
        except TimeoutError:
            late = _refuse(408, "DEADLINE_EXCEEDED", f"the body must be in within {self._body_timeout:g} s")
            late.force_close()
            return late
        try:
            rpc_request = calls.parse(method, body if isinstance(body, dict) else {})
        except (json.JSONDecodeError, json_format.ParseError) as exc:
            return _refuse(400, "INVALID_ARGUMENT", f"not a {method.request_type.__name__}: {exc}")
        try:
            reply = await self._loopback.unary(method)(
                rpc_request,
                # The gateway's own interceptors judge the tenant (tenancy.py).
                metadata=calls.metadata(authorization, tenant),
                timeout=calls.CALL_TIMEOUT,
            )
        except grpc.aio.AioRpcError as exc:
            status, error = calls.error_body(exc)
            return web.json_response(error, status=status)
        return web.json_response(calls.to_json(reply))


def _watch_authorizer(authenticator: Authenticator | None) -> hub.Authorize | None:
    """A page's token judged in-process as the gRPC edge judges a WatchEvents call:
    its pulses come from the gateway's own summaries of the log, not from a call of its own."""
    return _authorizer(authenticator, hub.WATCH_PATH)


def _authorizer(authenticator: Authenticator | None, path: str) -> hub.Authorize | None:
    """A page's token judged in-process as the gRPC edge judges a call of ``path``."""
    if authenticator is None:
        return None

    def authorize(authorization: str | None) -> errors.TaskyardError | None:
        return authenticator.check(path, calls.metadata(authorization))

    return authorize


class Dashboard:
    """Built before the gRPC server starts (it adds the loopback socket to it)."""

    def __init__(
        self,
        settings: GatewaySettings,
        server: grpc.aio.Server,
        *,
        authenticator: Authenticator | None,
        summarize: hub.Summarize,
        read: history.Read | None = None,
        read_limits: usage.ReadLimits | None = None,
        flow_gates: usage.FlowGates | None = None,
        known_tenant: scopes.Known | None = None,
    ) -> None:
        self.settings = settings
        self.loopback = calls.Loopback(server, max_message_bytes=settings.grpc_max_message_bytes)
        # The pulse of every tenant (an operator's page), and of each tenant a page is confined to.
        self.hub = hub.PulseHub(
            scopes.scoped_summarize(summarize, None), read=read, authorize=_watch_authorizer(authenticator)
        )

        def pulse_of(within: str | None) -> hub.PulseHub:
            if within is None:
                return self.hub
            return hub.PulseHub(
                scopes.scoped_summarize(summarize, within),
                read=read,
                authorize=_watch_authorizer(authenticator),
            )

        self.pulses = scopes.ScopedFeeds(
            pulse_of, authenticator=authenticator, path=hub.WATCH_PATH, known=known_tenant
        )
        # The Limits page's feed: the store's limits and the leading scheduler's usage of them.
        self.usage: scopes.ScopedFeeds[usage.UsageFeed] | None = None
        if read_limits is not None and flow_gates is not None:
            reads, gates = read_limits, flow_gates

            def usage_of(within: str | None) -> usage.UsageFeed:
                return usage.UsageFeed(
                    scopes.scoped_limits(reads, within),
                    scopes.scoped_gates(gates, within),
                    authorize=_authorizer(authenticator, usage.LIMITS_PATH),
                )

            self.usage = scopes.ScopedFeeds(
                usage_of, authenticator=authenticator, path=usage.LIMITS_PATH, known=known_tenant
            )
        self.streams = Streams(
            self.loopback,
            self.pulses,
            limit=settings.dashboard_max_streams,
            per_client=settings.dashboard_max_streams_per_client,
        )
        # The gRPC edge's certificate files, read again when they change (tls.http_context).
        self.ssl = tls.http_context(settings)
        self.limits = doors.Limits.from_settings(settings)
        config = {"auth": authenticator is not None, "traceUrl": settings.dashboard_trace_url}
        self.app = web.Application(
            middlewares=[guard(addresses.is_loopback(settings.grpc_host), hsts=self.ssl is not None)],
            client_max_size=MAX_BODY_BYTES,
        )
        index = (STATIC_DIR / "index.html").read_bytes()

        async def page(_request: web.Request) -> web.Response:
            return web.Response(body=index, content_type="text/html", charset="utf-8")

        async def settings_json(_request: web.Request) -> web.Response:
            return web.json_response(config)

        self.app.router.add_get("/", page)
        self.app.router.add_static("/static", STATIC_DIR)
        self.app.router.add_get("/api/config", settings_json)
        self.app.router.add_get("/api/pulse", self.streams.pulse)
        self.app.router.add_get("/api/events", self.streams.events)
        if self.usage is not None:
            self.app.router.add_get("/api/limits", functools.partial(self.streams.feed, self.usage))
        self.app.router.add_get("/api/tasks/{id}/logs", self.streams.logs)
        self.app.router.add_post(
            "/api/{service}/{method}",
            Api(self.loopback, authenticator=authenticator, body_timeout=self.limits.header_timeout).call,
        )
        # Handlers are cancelled when the browser goes: that ends their gRPC stream.
        self.runner = web.AppRunner(
            self.app, handler_cancellation=True, access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT
        )
        self.doors: doors.Doors | None = None
        self.url = ""

    async def start(self) -> str:
        s = self.settings
        self.limits.check_descriptors()
        await self.runner.setup()
        manager = self.runner.server
        assert manager is not None
        loop = asyncio.get_running_loop()
        limits = self.limits

        def handler(ticket: doors.Ticket) -> doors.GuardedHandler:
            return doors.GuardedHandler(
                manager,
                ticket,
                limits.header_timeout,
                loop=loop,
                access_log=None,
                keepalive_timeout=limits.idle_timeout,
                # A body left unread (a refusal, a late body) is drained no longer than a header.
                lingering_time=limits.header_timeout,
            )

        self.doors = doors.Doors(limits, handler, self.ssl)
        try:
            await self.doors.listen(s.grpc_host, s.http_port)
        except OSError as exc:
            await self.runner.cleanup()
            raise tls.ListenRefused(
                f"cannot serve the dashboard on {s.grpc_host}:{s.http_port} ({exc.strerror}); "
                "set TASKYARD_HTTP_PORT (0 = off)"
            ) from None
        scheme = "https" if self.ssl is not None else "http"
        host = f"[{s.grpc_host}]" if ":" in s.grpc_host else s.grpc_host
        self.url = f"{scheme}://{host}:{s.http_port}/"
        log.info("dashboard on %s", self.url)
        return self.url

    async def stop(self) -> None:
        if self.doors is not None:
            await self.doors.close()
        await self.hub.close()
        await self.pulses.close()
        if self.usage is not None:
            await self.usage.close()
        await self.runner.cleanup()
        await self.loopback.close()
