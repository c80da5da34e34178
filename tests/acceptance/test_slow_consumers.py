"""Consumers that stop reading, on the streams that test_watch_events.py and
test_gateway_admission.py do not already stall: a task's log followed over gRPC
(StreamTaskLogs) and over the dashboard's SSE (``/api/tasks/{id}/logs``).

A task's log is kept in the database, so a slow reader of it is never cut off (it loses
nothing by waiting; WatchEvents, whose ring is in memory, cuts a slow reader off instead):
the gateway reads a page from the store only when the last one was sent, so a reader that
reads nothing holds one page, and the gateway's memory does not follow the log. When the
reader reads again it gets every line, in order. How many such streams one gateway holds
is bounded by ``grpc_max_concurrent_long_rpcs`` and the dashboard's stream slots
(tests/integration/test_gateway_admission.py, test_dashboard_connections.py), and a
frozen reader's connection is closed by keepalive (test_gateway_admission.py).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from typing import Any

import grpc
import psutil
import pytest
from support.waiting import wait_until

from taskyard.cli import procs
from taskyard.v1 import task_service_pb2, task_service_pb2_grpc

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(180)]

MIB = 1024 * 1024
LINES = 30_000
WIDTH = 1200  # 36 MB of log in all, in pages of 500 lines (0.6 MB)
# What the gateway may grow by while both readers stall: once their pipes are full (a
# few pages, in the gRPC window and the SSE relay) and over the last two thirds of the
# log (24 MB, twice), nearly nothing; a gateway that read ahead for them would hold it.
GROWTH = 8 * MIB


def _sse_reader(port: int, task_id: str) -> socket.socket:
    """An HTTP client of the dashboard's log stream that reads its headers and stops,
    with a small receive buffer so the stall reaches the gateway soon."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(
        # HTTP/1.0: the body comes unchunked, to the end of the connection.
        f"GET /api/tasks/{task_id}/logs HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)
        assert chunk, "the dashboard closed the stream before its headers"
        head += chunk
    assert head.split(b" ", 2)[1] == b"200", head
    return sock


def _read_sse_lines(sock: socket.socket) -> list[int]:
    """Read the rest of the stream (HTTP/1.0: to the connection's end, after its ``end``
    message): the offsets of its log lines."""
    buffer = bytearray()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    sock.settimeout(60)
    while True:
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        buffer += chunk
    assert b"event: end\n" in buffer[-256:], "the stream ended without its end message"
    offsets: list[int] = []
    for message in bytes(buffer).split(b"\n\n"):
        fields = dict(line.split(b": ", 1) for line in message.split(b"\n") if b": " in line)
        if fields.get(b"event") == b"logs":
            offsets.extend(int(line.get("offset", 0)) for line in json.loads(fields[b"data"])["logs"])
    return offsets


def test_log_readers_that_stop_reading_hold_the_gateway_to_a_page_and_lose_nothing(
    cluster_factory: Callable[..., Any],
) -> None:
    http_port = procs.free_port()
    cluster = cluster_factory(
        http_port=http_port, workers=1, concurrency=2, task_modules=("taskyard.examples", "support.tasks")
    )
    client = cluster.client()
    task = client.submit("wide_lines", LINES, WIDTH)
    gateway = psutil.Process(cluster.pid("gateway"))

    # A gRPC reader that holds little (no BDP probing: the window stays at 64 KiB).
    channel = grpc.insecure_channel(cluster.target, options=[("grpc.http2.bdp_probe", 0)])
    stub = task_service_pb2_grpc.TaskServiceStub(channel)
    call = stub.StreamTaskLogs(task_service_pb2.StreamTaskLogsRequest(id=task.id), timeout=120)
    first = next(call)
    sse = _sse_reader(http_port, task.id)

    def stored(lines: int) -> bool:
        rows = cluster.query("SELECT log_seq FROM tasks WHERE id = $1::uuid", task.id)
        return bool(rows[0]["log_seq"] >= lines)

    wait_until(lambda: stored(LINES // 3), 60, "a third of the log stored")
    before = gateway.memory_info().rss
    assert client.wait(task.id, timeout=120).state.name == "SUCCESS"
    # Every line is in the store, and neither reader has read more than its first pages.
    wait_until(lambda: stored(LINES), 30, "every line stored")
    stalled = gateway.memory_info().rss
    print(
        f"\ngateway rss {before / MIB:.0f} MiB -> {stalled / MIB:.0f} MiB while the last"
        f" {LINES * WIDTH * 2 / 3 / MIB:.0f} MiB of the log were written, unread by two readers"
    )
    assert stalled - before < GROWTH, (
        f"the gateway grew {(stalled - before) / MIB:.0f} MiB for readers that read nothing"
    )

    offsets = [line.offset for line in first.logs]
    for reply in call:
        offsets.extend(line.offset for line in reply.logs)
    channel.close()
    assert offsets == list(range(LINES)), "the gRPC reader missed or repeated lines"
    sse_offsets = _read_sse_lines(sse)
    sse.close()
    assert sse_offsets == list(range(LINES)), "the SSE reader missed or repeated lines"
