"""Consumers that stop reading, on the streams that test_watch_events.py and
test_gateway_admission.py do not already stall: a task's log followed over gRPC
(StreamTaskLogs) and over the dashboard's SSE (``/api/tasks/{id}/logs``).

A task's log is kept in the database, so a slow reader of it is never cut off (it loses
nothing by waiting; WatchEvents, whose ring is in memory, cuts a slow reader off instead):
the gateway reads a page from the store only when the last one was sent, so a reader that
reads nothing holds a few pages (what its pipes take), and the gateway's memory does not
follow the log. What the gateway read of the log is counted (support/log_reads), so the
bound is on what it can hold for the readers, not on its process's memory. When the reader
reads again it gets every line, in order. How many such streams one gateway holds
is bounded by ``grpc_max_concurrent_long_rpcs`` and the dashboard's stream slots
(tests/integration/test_gateway_admission.py, test_dashboard_connections.py), and a
frozen reader's connection is closed by keepalive (test_gateway_admission.py).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from support.cluster import SERVICES, TESTS_DIR
from support.ports import free_port_block
from support.waiting import wait_until

from taskyard.gateway.logs import STREAM_PAGE
from taskyard.v1 import task_service_pb2, task_service_pb2_grpc

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(180)]

LOG_READS = TESTS_DIR / "support" / "log_reads"
MIB = 1024 * 1024
WIDTH = 1000
# What the gateway may have read for the two readers and they have not, in lines of WIDTH
# bytes: per stream the page it sends, one queued in gRPC and one more (pages of
# STREAM_PAGE lines; the gRPC reader's HTTP/2 window, 64 KiB, takes less than a page),
# and for the SSE relay the window of the gateway's loopback channel to itself, which
# gRPC grows while pages flow up to 16 MiB when memory is plentiful (about 8 MiB seen).
LOOPBACK_WINDOW = 16 * MIB
HELD = 2 * 3 * STREAM_PAGE + LOOPBACK_WINDOW // WIDTH
# A gateway that read ahead for its readers would read the whole log for each (50 MB,
# 2.5 times what their pipes take); the log itself is 25 MB.
LINES = 25_000


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


def _lines_read(path: Path, task_id: str) -> list[int]:
    """How many lines of the task's log the gateway has read from its store, per stream."""
    text = path.read_text(encoding="ascii") if path.exists() else ""
    streams: dict[str, int] = {}
    for tid, _, lines, stream in (row.split() for row in text.splitlines()):
        if tid == task_id:
            streams[stream] = streams.get(stream, 0) + int(lines)
    return sorted(streams.values())


def test_log_readers_that_stop_reading_hold_the_gateway_to_a_page_and_lose_nothing(
    cluster_factory: Callable[..., Any], tmp_path: Path
) -> None:
    # Below the ephemeral range, so another test's outgoing connection cannot take it.
    http_port = free_port_block(1)
    reads = tmp_path / "log-reads"
    cluster = cluster_factory(
        start=False,
        http_port=http_port,
        workers=1,
        concurrency=2,
        task_modules=("taskyard.examples", "support.tasks"),
    )
    for service in SERVICES:
        counted = {
            "PYTHONPATH": f"{LOG_READS}:{cluster.env['PYTHONPATH']}",
            "TASKYARD_TEST_LOG_READS": str(reads),
        }
        cluster.start_service(service, env=counted if service == "gateway" else None)
    cluster.wait_ready()
    client = cluster.client()
    task = client.submit("wide_lines", LINES, WIDTH)

    # A gRPC reader that holds little (no BDP probing: the window stays at 64 KiB).
    channel = grpc.insecure_channel(cluster.target, options=[("grpc.http2.bdp_probe", 0)])
    stub = task_service_pb2_grpc.TaskServiceStub(channel)
    call = stub.StreamTaskLogs(task_service_pb2.StreamTaskLogsRequest(id=task.id), timeout=150)
    first = next(call)
    sse = _sse_reader(http_port, task.id)

    def stored(lines: int) -> bool:
        rows = cluster.query("SELECT log_seq FROM tasks WHERE id = $1::uuid", task.id)
        return bool(rows[0]["log_seq"] >= lines)

    assert client.wait(task.id, timeout=120).state.name == "SUCCESS"
    # Every line is in the store, and neither reader has read more than its first pages
    # (the SSE reader nothing of the body): all the gateway read past that, it holds.
    wait_until(lambda: stored(LINES), 30, "every line stored")
    streams = _lines_read(reads, task.id)
    held = sum(streams) - len(first.logs)
    print(
        f"\nthe gateway read {held} lines of {LINES} past what two stalled readers took"
        f" (lines read per stream: {streams})"
    )
    assert held <= HELD, f"the gateway read {held} lines ahead of readers that read nothing"

    offsets = [line.offset for line in first.logs]
    for reply in call:
        offsets.extend(line.offset for line in reply.logs)
    channel.close()
    assert offsets == list(range(LINES)), "the gRPC reader missed or repeated lines"
    sse_offsets = _read_sse_lines(sse)
    sse.close()
    assert sse_offsets == list(range(LINES)), "the SSE reader missed or repeated lines"
