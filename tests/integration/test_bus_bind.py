"""A service that would listen for NNG beyond loopback without bus keys refuses to
start, with a reason that names the settings to fix; a bad key is refused without
echoing the secret. Real processes, as ``taskyard serve`` runs them."""

from __future__ import annotations

import os
import subprocess

import pytest
from support import ports

from taskyard.cli import procs

pytestmark = pytest.mark.integration


def start(service: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("TASKYARD_", "QUEUE_", "QUEUED_TASK_"))}
    return subprocess.run(
        procs.service_argv(service),
        env={**base, "TASKYARD_TRANSPORT": "tcp", "TASKYARD_BASE_PORT": str(ports.free_port()), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("service", procs.START_ORDER)
def test_a_non_loopback_bind_without_bus_keys_refuses_to_start(service: str) -> None:
    done = start(service, TASKYARD_BIND_HOST="0.0.0.0", TASKYARD_DATABASE_URL="postgresql://nowhere/none")
    assert done.returncode != 0
    assert "without bus keys" in done.stderr and "TASKYARD_BUS_KEYS" in done.stderr, done.stderr[-2000:]


def test_a_malformed_key_is_refused_without_showing_it() -> None:
    secret = "c2VjcmV0LXNob3J0"  # 12 bytes: too short to be a key
    done = start("scheduler", TASKYARD_BUS_KEYS=f"k1:{secret}")
    assert done.returncode != 0
    assert "at least 16 bytes" in done.stderr, done.stderr[-2000:]
    assert secret not in done.stderr
