"""One ops port per process (core/ops.py): ``/metrics``, ``/livez`` and ``/readyz`` on
one real server, with their own rules: the token guards ``/metrics`` alone, the probes
never ask for it; off loopback without a token the port serves the probes only. And
the probes' old variable, TASKYARD_HEALTH_PORT, stops the start naming its replacement."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from taskyard.core import health, ops
from taskyard.core.config import Settings

TOKEN = "s3cret"


def _get(port: int, path: str, token: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return int(reply.status), bytes(reply.read())
    except urllib.error.HTTPError as err:
        return err.code, bytes(err.read())


@pytest.fixture
def running_loop() -> Iterator[None]:
    """A live event loop attached for the probes, marked ready."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    health.attach_loop(loop)
    health.mark_ready()
    yield
    health.attach_loop(None)
    health.mark_ready(False)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=5)
    loop.close()


def test_one_port_answers_metrics_with_the_token_and_the_probes_without(running_loop: None) -> None:
    server = ops.OpsServer("127.0.0.1", 0, token=TOKEN)
    try:
        assert server.metrics_served
        assert _get(server.port, "/livez") == (200, b"ok\n")
        assert _get(server.port, "/readyz") == (200, b"ok\n")
        # A wrong token on a probe changes nothing: the probes never read it.
        assert _get(server.port, "/readyz", token="wrong")[0] == 200

        status, body = _get(server.port, "/metrics")
        assert (status, body) == (401, b"a bearer token is required\n")
        assert _get(server.port, "/metrics", token="wrong")[0] == 401
        status, body = _get(server.port, "/metrics", token=TOKEN)
        assert status == 200 and b"process_resident_memory_bytes" in body

        assert _get(server.port, "/", token=TOKEN)[0] == 404
        health.mark_ready(False)
        assert _get(server.port, "/readyz") == (503, b"not ok\n")
        assert _get(server.port, "/livez")[0] == 200
    finally:
        server.close()


def test_without_a_token_loopback_serves_metrics_to_anyone(running_loop: None) -> None:
    server = ops.OpsServer("127.0.0.1", 0)
    try:
        assert _get(server.port, "/metrics")[0] == 200
        assert _get(server.port, "/livez")[0] == 200
    finally:
        server.close()


def test_off_loopback_without_a_token_the_port_serves_the_probes_only(running_loop: None) -> None:
    server = ops.OpsServer("0.0.0.0", 0)
    try:
        assert not server.metrics_served
        status, body = _get(server.port, "/metrics")
        assert status == 403 and b"TASKYARD_METRICS_TOKEN" in body
        assert _get(server.port, "/livez") == (200, b"ok\n")
        assert _get(server.port, "/readyz") == (200, b"ok\n")
    finally:
        server.close()


def test_the_settings_say_when_metrics_are_served() -> None:
    assert not Settings().metrics_served  # no port
    assert Settings(metrics_port=9464).metrics_served  # loopback
    assert not Settings(metrics_port=9464, metrics_host="0.0.0.0").metrics_served
    assert Settings(metrics_port=9464, metrics_host="0.0.0.0", metrics_token=TOKEN).metrics_served


def test_the_removed_health_port_variable_is_refused_naming_its_replacement() -> None:
    with pytest.raises(ValueError) as refused:
        Settings.from_env({"TASKYARD_HEALTH_PORT": "8081", "TASKYARD_METRICS_PORT": "9464"})
    message = str(refused.value)
    assert message.startswith("TASKYARD_HEALTH_PORT is no longer read")
    assert "TASKYARD_METRICS_PORT" in message and "/livez" in message
    # Set but empty is unset, as for every variable.
    assert Settings.from_env({"TASKYARD_HEALTH_PORT": ""}).metrics_port == 0


def test_a_service_started_with_the_removed_variable_stops_saying_what_to_set() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKYARD_")}
    started = subprocess.run(
        [sys.executable, "-m", "taskyard.worker_pool"],
        env={**env, "TASKYARD_HEALTH_PORT": "8081"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode != 0
    assert "TASKYARD_HEALTH_PORT is no longer read" in started.stderr
    assert "set TASKYARD_METRICS_PORT instead" in started.stderr
