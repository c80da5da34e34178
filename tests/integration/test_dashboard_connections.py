"""The dashboard's connections on a real gateway (in this process, and as its own
process on uvloop, against fake backends), on loopback: connections that never finish their headers, or idle
ones, are closed; one address, and all addresses together, hold at most their cap
while gRPC and the plaintext health port still answer; one token holds at most
its share of the live views while another client still gets one; HSTS only over TLS.

Every socket call runs in a thread: the gateway serves from this test's event loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import resource
import secrets
import select
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
from pathlib import Path

import grpc
import pytest
from aiohttp import web
from grpc_health.v1 import health_pb2, health_pb2_grpc
from integration.gateway_fakes import FakeBackend, gateway_env, make_settings
from support import certs
from support.ports import free_port_block
from support.waiting import wait_until_async

from taskyard.gateway.dashboard import doors

# Safety bound only: every wait below ends on a socket event, long before this.
SAFETY = 30.0
# How long asyncio waits for a TLS peer's close_notify unless told otherwise.
TLS_SHUTDOWN_DEFAULT = 30.0


def _connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=SAFETY, source_address=(source, 0))


def _answer(sock: socket.socket) -> bytes:
    """All the server sends until it closes the connection."""
    data = b""
    while chunk := sock.recv(4096):
        data += chunk
    return data


def _head(sock: socket.socket) -> bytes:
    """An answer's status line and headers (the connection stays open)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n\r\n", 1)[0]


CONFIG_REQUEST = b"GET /api/config HTTP/1.1\r\nHost: localhost\r\n\r\n"


def _response(sock: socket.socket) -> bytes:
    """One answer on a kept-alive connection, its body read to its Content-Length."""
    return _head_and_body(sock)[0]


def _head_and_body(sock: socket.socket) -> tuple[bytes, bytes]:
    """One answer's head and its body, read to its Content-Length."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        assert chunk, data
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        chunk = sock.recv(4096)
        assert chunk, body
        body += chunk
    return head, body


def _closed_while_dripping(sock: socket.socket) -> bool:
    """A header sent a byte at a time until the server closes the connection."""
    sock.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
    for _ in range(4000):  # under aiohttp's 8,190-byte line limit: only the deadline ends it
        readable, _, _ = select.select([sock], [], [], 0.05)
        try:
            if readable:
                return _answer(sock) == b""
            sock.sendall(b"a")
        except (ConnectionResetError, BrokenPipeError):
            # A byte sent as the server closed is answered with a reset: closed all the same.
            return True
    return False


def _stream(
    port: int, source: str, token: str | None, scheme: str = "Bearer "
) -> tuple[socket.socket, bytes]:
    sock = _connect(port, source)
    bearer = f"Authorization: {scheme}{token}\r\n" if token else ""
    sock.sendall(f"GET /api/pulse HTTP/1.1\r\nHost: localhost\r\n{bearer}\r\n".encode())
    return sock, _head(sock)


async def _health(port: int) -> int:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
    return reply.status


async def test_connections_that_never_finish_their_headers_are_closed() -> None:
    # The idle timeout far off: only the header deadline can close these.
    async with gateway_env(
        http_port=free_port_block(1), http_header_timeout=0.3, http_idle_timeout=SAFETY * 4
    ) as env:
        port = env.settings.http_port
        silent = [await asyncio.to_thread(_connect, port) for _ in range(20)]
        partial = [await asyncio.to_thread(_connect, port) for _ in range(5)]
        dripping = [await asyncio.to_thread(_connect, port) for _ in range(3)]
        kept: socket.socket | None = None
        try:
            for sock in partial:
                await asyncio.to_thread(sock.sendall, b"GET / HTTP/1.1\r\nHost: localhost\r\n")
            for sock in silent + partial:
                assert await asyncio.to_thread(_answer, sock) == b""
            for sock in dripping:
                assert await asyncio.to_thread(_closed_while_dripping, sock)
            # Kept alive after an answer, a next request's headers have the same deadline.
            kept = await asyncio.to_thread(_connect, port)
            await asyncio.to_thread(kept.sendall, CONFIG_REQUEST)
            assert (await asyncio.to_thread(_response, kept)).startswith(b"HTTP/1.1 200 ")
            assert await asyncio.to_thread(_closed_while_dripping, kept)
        finally:
            for sock in [*silent, *partial, *dripping, *([kept] if kept else [])]:
                sock.close()
        assert env.gateway.dashboard is not None and env.gateway.dashboard.doors is not None
        assert env.gateway.dashboard.doors.open == 0


async def test_an_idle_kept_alive_connection_is_closed() -> None:
    async with gateway_env(
        http_port=free_port_block(1), http_header_timeout=SAFETY * 4, http_idle_timeout=0.3
    ) as env:
        kept = await asyncio.to_thread(_connect, env.settings.http_port)
        with kept:
            await asyncio.to_thread(kept.sendall, CONFIG_REQUEST)
            assert (await asyncio.to_thread(_response, kept)).startswith(b"HTTP/1.1 200 ")
            assert await asyncio.to_thread(_answer, kept) == b""


async def test_a_next_requests_headers_have_their_own_deadline() -> None:
    """A deadline still pending from the connect is not the next request's: the next
    request's first bytes, sent before it passes and followed by nothing, are closed at
    their own deadline (the idle timeout far off: only the header deadline can)."""
    async with gateway_env(
        http_port=free_port_block(1), http_header_timeout=1.0, http_idle_timeout=SAFETY * 4
    ) as env:
        kept = await asyncio.to_thread(_connect, env.settings.http_port)
        with kept:
            await asyncio.to_thread(kept.sendall, CONFIG_REQUEST)
            assert (await asyncio.to_thread(_response, kept)).startswith(b"HTTP/1.1 200 ")
            await asyncio.to_thread(kept.sendall, b"GET / HTTP/1.1\r\nHost: localhost\r\n")
            assert await asyncio.to_thread(_answer, kept) == b""


POST_HEAD = (
    "POST /api/taskyard.v1.TaskService/GetTask HTTP/1.1\r\nHost: localhost\r\n"
    "Content-Type: application/json\r\nContent-Length: 1000\r\n{bearer}\r\n"
)


async def test_a_body_that_never_comes_is_closed_at_the_header_deadline() -> None:
    async with gateway_env(
        http_port=free_port_block(1), http_header_timeout=0.3, http_idle_timeout=SAFETY * 4
    ) as env:
        sock = await asyncio.to_thread(_connect, env.settings.http_port)
        with sock:
            # Its headers, then nothing of the 1,000 bytes they declare.
            await asyncio.to_thread(sock.sendall, POST_HEAD.format(bearer="").encode())
            answer = await asyncio.to_thread(_answer, sock)
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert env.gateway.dashboard is not None and env.gateway.dashboard.doors is not None
        doors_ = env.gateway.dashboard.doors
        await wait_until_async(lambda: doors_.open == 0, SAFETY, lambda: f"{doors_.open} still open", 0.02)


async def test_a_write_without_a_valid_token_is_refused_before_its_body(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{secrets.token_urlsafe(24)}  admin  ops\n")
    async with gateway_env(
        http_port=free_port_block(1), grpc_tokens_file=str(tokens), http_header_timeout=SAFETY * 4
    ) as env:
        for bearer, reason in (("", b"TOKEN_MISSING"), ("Authorization: Bearer wrong\r\n", b"TOKEN_INVALID")):
            sock = await asyncio.to_thread(_connect, env.settings.http_port)
            with sock:
                # The body is never sent: the answer cannot have waited for it.
                await asyncio.to_thread(sock.sendall, POST_HEAD.format(bearer=bearer).encode())
                answer = await asyncio.to_thread(_head_and_body, sock)
            assert answer[0].startswith(b"HTTP/1.1 401 "), answer
            assert reason in answer[1]


async def test_the_caps_refuse_extra_connections_while_grpc_and_the_health_port_answer() -> None:
    async with gateway_env(
        http_port=free_port_block(1),
        grpc_health_port=free_port_block(1),
        http_header_timeout=SAFETY * 4,
        http_max_connections=6,
        http_max_connections_per_address=4,
    ) as env:
        port = env.settings.http_port
        held = [await asyncio.to_thread(_connect, port) for _ in range(4)]
        try:
            # Over one address's share: refused, and told so.
            extra = await asyncio.to_thread(_connect, port)
            with extra:
                assert await asyncio.to_thread(_answer, extra) == doors.REFUSAL
            # Another address gets its own share, up to the total cap.
            held += [await asyncio.to_thread(_connect, port, "127.0.0.2") for _ in range(2)]
            over = await asyncio.to_thread(_connect, port, "127.0.0.3")
            with over:
                assert await asyncio.to_thread(_answer, over) == doors.REFUSAL
            serving = health_pb2.HealthCheckResponse.SERVING
            assert await _health(env.gateway.port) == serving
            assert await _health(env.gateway.health_port) == serving
            assert env.gateway.dashboard is not None and env.gateway.dashboard.doors is not None
            assert env.gateway.dashboard.doors.refused == 2
            # A held connection that sends its request is served.
            await asyncio.to_thread(
                held[0].sendall, b"GET /api/config HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
            )
            assert (await asyncio.to_thread(_answer, held[0])).startswith(b"HTTP/1.1 200 ")
        finally:
            for sock in held:
                sock.close()


async def test_one_token_holds_at_most_its_share_of_the_live_views(tmp_path: Path) -> None:
    greedy, other = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{greedy}  read  greedy\n{other}  read  other\n")
    async with gateway_env(
        http_port=free_port_block(1),
        grpc_tokens_file=str(tokens),
        dashboard_max_streams=8,
        dashboard_max_streams_per_client=2,
    ) as env:
        port = env.settings.http_port
        opened: list[socket.socket] = []
        try:
            # From two addresses, so the token's share is what refuses the third; the
            # token spelt otherwise (as the gateway still reads it) is the same client.
            for source, scheme in (("127.0.0.2", "Bearer "), ("127.0.0.3", "bearer   ")):
                sock, head = await asyncio.to_thread(_stream, port, source, greedy, scheme)
                opened.append(sock)
                assert head.startswith(b"HTTP/1.1 200 ")
            for source, scheme in (
                ("127.0.0.4", "Bearer "),
                ("127.0.0.5", "BEARER "),
                ("127.0.0.6", "Bearer  "),
            ):
                sock, head = await asyncio.to_thread(_stream, port, source, greedy, scheme)
                opened.append(sock)
                assert head.startswith(b"HTTP/1.1 429 "), (scheme, head)
            # Another reader still gets a live view, as does one more address of it.
            sock, head = await asyncio.to_thread(_stream, port, "127.0.0.4", other)
            opened.append(sock)
            assert head.startswith(b"HTTP/1.1 200 ")
        finally:
            for sock in opened:
                sock.close()


def _https_head(port: int, ca: Path) -> bytes:
    context = ssl.create_default_context(cafile=str(ca))
    with (
        socket.create_connection(("127.0.0.1", port), timeout=SAFETY) as raw,
        context.wrap_socket(raw, server_hostname="localhost") as conn,
    ):
        conn.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        return _head(conn)


async def test_hsts_over_tls_only_and_a_silent_handshake_is_closed(tmp_path: Path) -> None:
    material = certs.make(tmp_path / "certs")
    async with gateway_env(
        grpc_tls_cert=str(material.server_cert),
        grpc_tls_key=str(material.server_key),
        http_port=free_port_block(1),
        http_header_timeout=0.3,
    ) as env:
        port = env.settings.http_port
        head = await asyncio.to_thread(_https_head, port, material.ca)
        assert head.startswith(b"HTTP/1.1 200 ")
        assert b"\r\nstrict-transport-security: max-age=" in head.lower()
        # A connection that never starts its handshake is closed at the header deadline.
        silent = await asyncio.to_thread(_connect, port)
        with silent:
            assert await asyncio.to_thread(_answer, silent) == b""
    async with gateway_env(http_port=free_port_block(1)) as env:
        plain = await asyncio.to_thread(_connect, env.settings.http_port)
        with plain:
            await asyncio.to_thread(
                plain.sendall, b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
            )
            head = _head_of(await asyncio.to_thread(_answer, plain))
        assert head.startswith(b"HTTP/1.1 200 ")
        assert b"strict-transport-security" not in head.lower()


def _tls_then_silent(port: int, ca: Path) -> socket.socket:
    """A TLS handshake over a plain socket, then nothing: the socket is read as TCP,
    so the test sees when the server ends the connection, not when TLS says it ends."""
    raw = _connect(port)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    conn = ssl.create_default_context(cafile=str(ca)).wrap_bio(
        incoming, outgoing, server_hostname="localhost"
    )
    while True:
        try:
            conn.do_handshake()
            break
        except ssl.SSLWantReadError:
            raw.sendall(outgoing.read())
            chunk = raw.recv(65536)
            assert chunk, "closed during the handshake"
            incoming.write(chunk)
    raw.sendall(outgoing.read())  # the client's Finished
    return raw


def _ended(raw: socket.socket) -> bool:
    """Reads (and drops: tickets, close_notify) until the server ends the TCP connection.
    The client never sends its close_notify, as a client holding connections would not."""
    try:
        while raw.recv(65536):
            pass
    except ConnectionResetError:
        pass
    return True


async def test_a_tls_connection_past_its_deadline_is_closed_without_waiting_for_the_client(
    tmp_path: Path,
) -> None:
    material = certs.make(tmp_path / "certs")
    async with gateway_env(
        grpc_tls_cert=str(material.server_cert),
        grpc_tls_key=str(material.server_key),
        http_port=free_port_block(1),
        http_header_timeout=0.3,
        http_idle_timeout=SAFETY * 4,
    ) as env:
        raw = await asyncio.to_thread(_tls_then_silent, env.settings.http_port, material.ca)
        with raw:
            # A polite TLS close waits for the client's close_notify up to asyncio's
            # default of 30 s, a read apart from the close_notify it sent: a third of
            # that per read tells the two apart on any machine (the deadline is 0.3 s).
            raw.settimeout(TLS_SHUTDOWN_DEFAULT / 3)
            assert await asyncio.to_thread(_ended, raw)


async def test_the_aiohttp_state_the_header_deadline_reads_is_there() -> None:
    """GuardedHandler reads aiohttp's connection state by private names (aiohttp is
    allowed up to <4): if a release renames them, this fails, not the deadline silently."""

    async def nothing(_request: web.BaseRequest) -> web.StreamResponse:
        return web.Response()

    limits = doors.Limits(header_timeout=10, idle_timeout=60, max_connections=2, per_address=2)
    door = doors.Doors(limits, lambda _ticket: pytest.fail("never called"), None)
    ticket = door.admit("127.0.0.1")
    assert ticket is not None
    handler = doors.GuardedHandler(
        web.Server(nothing), ticket, 10.0, loop=asyncio.get_running_loop(), lingering_time=10.0
    )
    assert len(handler._messages) == 0
    assert handler._request_in_progress is False
    assert handler._request_count == 0
    assert handler._loop is asyncio.get_running_loop()
    assert handler.transport is None
    assert handler._busy() is False


def test_failed_accepts_are_logged_at_most_once_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    limits = doors.Limits(header_timeout=10, idle_timeout=60, max_connections=2, per_address=2)
    door = doors.Doors(limits, lambda _ticket: pytest.fail("never called"), None)
    full = OSError(24, "Too many open files")
    with caplog.at_level("WARNING", logger=doors.__name__):
        for i in range(50):  # five seconds of retries, every ACCEPT_RETRY
            door._count_accept_failure(i * doors.ACCEPT_RETRY, full)
        door._count_accept_failure(doors.REFUSAL_LOG_INTERVAL, full)
    assert [r.getMessage() for r in caplog.records] == [
        "dashboard: 1 accept(s) failed (Too many open files)",
        "dashboard: 50 accept(s) failed (Too many open files)",
    ]
    assert door.accept_failures == 51


def _head_of(answer: bytes) -> bytes:
    return answer.split(b"\r\n\r\n", 1)[0]


async def _started(proc: subprocess.Popen[bytes], log: Path) -> None:
    def ready() -> bool:
        assert proc.poll() is None, log.read_text()
        return "dashboard on " in log.read_text() and "gateway ready on " in log.read_text()

    await wait_until_async(ready, 20, lambda: "the gateway's ready lines:\n" + log.read_text(), 0.05)


def _page(port: int, ca: Path | None) -> bytes:
    """GET / on a new connection: the answer's head."""
    if ca is not None:
        return _https_head(port, ca)
    with _connect(port) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        return _head_of(_answer(sock))


@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_a_gateway_process_closes_silent_connections_and_keeps_grpc_and_health(
    scheme: str, tmp_path: Path
) -> None:
    """The gateway as it runs (its own process, on uvloop): connections that never send
    their headers (or their TLS handshake) are closed at the deadline, those over one
    address's cap at once, while gRPC health on both ports answers SERVING."""
    material = certs.make(tmp_path / "certs") if scheme == "https" else None
    tls = (
        {"grpc_tls_cert": str(material.server_cert), "grpc_tls_key": str(material.server_key)}
        if material
        else {}
    )
    ipc_dir = Path(tempfile.mkdtemp(prefix="tygwd-", dir="/tmp"))
    settings = make_settings(
        ipc_dir,
        grpc_port=free_port_block(1),
        grpc_health_port=free_port_block(1),
        http_port=free_port_block(1),
        http_header_timeout=5.0,
        http_max_connections_per_address=4,
        **tls,
    )
    backend = FakeBackend(settings)
    await backend.start()
    log = ipc_dir / "gateway.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(  # noqa: ASYNC220 - the gateway as its own process
            [sys.executable, "-m", "taskyard.gateway"],
            env={**os.environ, **settings.to_env()},
            stdout=out,
            stderr=out,
        )
    held: list[socket.socket] = []
    try:
        await _started(proc, log)
        port = settings.http_port
        held = [await asyncio.to_thread(_connect, port) for _ in range(4)]
        extra = await asyncio.to_thread(_connect, port)
        with extra:
            refusal = await asyncio.to_thread(_answer, extra)
        assert refusal == (doors.REFUSAL if material is None else b"")
        serving = health_pb2.HealthCheckResponse.SERVING

        async def both_serving() -> bool:
            return (await _health(settings.grpc_health_port)) == serving

        await wait_until_async(both_serving, 10, lambda: "health SERVING:\n" + log.read_text(), 0.1)
        if material is None:
            assert await _health(settings.grpc_port) == serving
        for sock in held:
            assert await asyncio.to_thread(_answer, sock) == b""
        ca = material.ca if material else None

        async def page_served() -> bytes | None:
            # The held connections' places come back as the gateway sees them end, a
            # moment after this side saw them closed: until then this address is refused.
            try:
                head = await asyncio.to_thread(_page, port, ca)
            except (ssl.SSLError, ConnectionError):
                return None
            return None if head == _head_of(doors.REFUSAL) else head

        head = await wait_until_async(page_served, 10, lambda: "a page served:\n" + log.read_text(), 0.05)
        assert head.startswith(b"HTTP/1.1 200 ")
        assert (b"strict-transport-security: max-age=" in head.lower()) == (material is not None)
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(proc.wait, 15) == 0, log.read_text()
        assert "Traceback" not in log.read_text()
    finally:
        for sock in held:
            sock.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        await backend.close()
        shutil.rmtree(ipc_dir, ignore_errors=True)


def test_a_connection_cap_over_half_the_descriptor_limit_is_refused_at_start() -> None:
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        pytest.skip("no descriptor limit to stay under")
    limits = doors.Limits(header_timeout=10, idle_timeout=60, max_connections=soft // 2, per_address=32)
    limits.check_descriptors()  # half is allowed
    over = dataclasses.replace(limits, max_connections=soft // 2 + 1)
    with pytest.raises(doors.TooManyForDescriptors, match="TASKYARD_HTTP_MAX_CONNECTIONS"):
        over.check_descriptors()
