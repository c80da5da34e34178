"""Readiness follows the ability to commit: with the suite's PostgreSQL frozen
(SIGSTOP), the result-store's /readyz and the gateway's gRPC health and /readyz (both
on their ops ports) turn NOT_SERVING, and SERVING again once it runs (SIGCONT)."""

from __future__ import annotations

import contextlib
import queue
import threading
from typing import Any

import grpc
import psutil
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from support.cluster import SERVICES
from support.ports import free_port_block, http_status
from support.postgres import PostgresCluster
from support.waiting import wait_until

pytestmark = pytest.mark.acceptance

# Seconds a frozen database may take to show: "within a few seconds", with room for
# a busy machine (a gateway that waits out two 10 s store requests takes 20 s or more).
UNREADY_WITHIN = 15.0
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


class HealthWatch:
    """The gateway's grpc.health.v1 Watch stream, its statuses queued as they come."""

    def __init__(self, target: str) -> None:
        self._channel = grpc.insecure_channel(target)
        self._stream = health_pb2_grpc.HealthStub(self._channel).Watch(
            health_pb2.HealthCheckRequest(service="")
        )
        self.statuses: queue.Queue[int] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        with contextlib.suppress(grpc.RpcError):
            for reply in self._stream:
                self.statuses.put(reply.status)

    def until(self, status: int, within: float) -> None:
        """Wait for ``status`` to be announced (earlier ones are passed over)."""
        while True:
            try:
                got = self.statuses.get(timeout=within)
            except queue.Empty:
                raise AssertionError(f"the gateway's health never became {status} within {within}s") from None
            if got == status:
                return

    def close(self) -> None:
        self._stream.cancel()
        self._channel.close()


def _signal_all(server: list[psutil.Process], resume: bool) -> None:
    for proc in server:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.resume() if resume else proc.suspend()


def test_a_frozen_database_makes_the_store_and_the_gateway_unready_until_it_runs(
    cluster_factory: Any, pg_cluster: PostgresCluster
) -> None:
    # Below the ephemeral range, so another test's outgoing connection cannot take them:
    # the store's and the gateway's ops ports, whose /readyz the probes ask.
    store_port = free_port_block(2)
    gateway_port = store_port + 1
    ops_ports = {"result-store": store_port, "gateway": gateway_port}
    # The default request limit (the tests' is 5 s): what a gateway waiting on its
    # store requests would take to notice.
    cluster = cluster_factory(start=False, request_timeout=10.0)
    for service in SERVICES:
        own = {"TASKYARD_METRICS_PORT": str(ops_ports[service])} if service in ops_ports else None
        cluster.start_service(service, env=own)
    cluster.wait_ready()
    wait_until(lambda: http_status(store_port, "/readyz") == 200, 15, "the store ready")
    wait_until(lambda: http_status(gateway_port, "/readyz") == 200, 15, "the gateway ready")
    watch = HealthWatch(cluster.target)
    try:
        watch.until(SERVING, 15)
        server = pg_cluster.processes()  # the postmaster and every process it started
        assert server, "the test's PostgreSQL is not running"
        try:
            _signal_all(server, resume=False)
            watch.until(NOT_SERVING, UNREADY_WITHIN)
            wait_until(
                lambda: http_status(store_port, "/readyz") == 503,
                UNREADY_WITHIN,
                "the store's /readyz to say 503",
            )
            # The gateway's ops port says what its gRPC health says.
            wait_until(
                lambda: http_status(gateway_port, "/readyz") == 503,
                UNREADY_WITHIN,
                "the gateway's /readyz to say 503",
            )
            assert http_status(gateway_port, "/livez") == 200
        finally:
            _signal_all(server, resume=True)
        watch.until(SERVING, 60)
        wait_until(lambda: http_status(store_port, "/readyz") == 200, 60, "the store ready again")
        wait_until(lambda: http_status(gateway_port, "/readyz") == 200, 60, "the gateway ready again")
        client = cluster.client()
        task = client.submit("add", 2, 3)
        assert client.wait(task.id, timeout=30).result == 5
        assert "not ready: the database does not answer" in cluster.log_text("result-store")
    finally:
        watch.close()
