"""Log pages of long lines stay under the message caps (500 lines of
16 KiB were over gRPC's 4 MiB, so GetTaskLogs / StreamTaskLogs failed
RESOURCE_EXHAUSTED at that offset forever, and the pool's log batches of 5000 such
lines were over the bus cap and retried forever). Real services and processes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from taskyard.v1 import task_service_pb2, task_service_pb2_grpc

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(90)]

LINES, WIDTH = 600, 16_000  # ~9.6 MB of log


def test_pages_of_long_lines_fit_the_message_caps(cluster_factory: Callable[..., Any]) -> None:
    cluster = cluster_factory(
        task_modules=("taskyard.examples", "support.tasks"),
        workers=1,
        # Under 5000 (the shipper's line cap) x 16 KB: the byte cap must split batches.
        env={"TASKYARD_MAX_MESSAGE_BYTES": str(8 * 1024 * 1024)},
    )
    client = cluster.client()
    task = client.submit("wide_lines", LINES, WIDTH)
    assert client.wait(task.id, timeout=45).result == LINES
    stub = task_service_pb2_grpc.TaskServiceStub(cluster.channel())

    got: list[str] = []
    offset = 0
    while True:
        page = stub.GetTaskLogs(
            task_service_pb2.GetTaskLogsRequest(id=task.id, from_offset=offset, page_size=1000), timeout=10
        )
        assert page.ByteSize() <= 4 * 1024 * 1024
        got += [x.message for x in page.logs]
        offset = page.next_offset
        if page.complete:
            break
        assert page.logs
    assert [int(m[:6]) for m in got] == list(range(LINES))
    assert all(len(m) == WIDTH for m in got)

    streamed = [
        x.message
        for item in stub.StreamTaskLogs(task_service_pb2.StreamTaskLogsRequest(id=task.id), timeout=30)
        for x in item.logs
    ]
    assert streamed == got
