"""A peer without the bus key that holds a pool's PAIR port across a scheduler
restart neither keeps the scheduler out nor stays: its pipe is closed, and the
pool's tasks are dispatched while it is still there (core/pair_peers.py)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from typing import Any

import pytest
from support.cluster import TESTS_DIR
from support.waiting import wait_until

pytestmark = pytest.mark.acceptance

TASKS = 5


class Squatter:
    """``support.squatter`` in a process of its own, without the cluster's key."""

    def __init__(self, address: str, *, junk: bool) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TASKYARD_")}
        env["PYTHONPATH"] = str(TESTS_DIR)
        args = [sys.executable, "-m", "support.squatter", address, *(["--junk"] if junk else [])]
        self.proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.strip())

    def said(self, prefix: str) -> bool:
        return any(line.startswith(prefix) for line in self.lines)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        self._reader.join(timeout=10)


def _pair_address(cluster: Any) -> str:
    found = re.search(r"pool \S+ starting: .*?, pair (\S+),", cluster.log_text("worker-pool"))
    assert found, cluster.logs_tail()
    return found.group(1)


@pytest.mark.parametrize("junk", [False, True], ids=["silent", "unsealed-message"])
def test_a_keyless_peer_on_the_pair_port_is_dropped_and_dispatch_goes_on(cluster: Any, junk: bool) -> None:
    address = _pair_address(cluster)
    cluster.kill("scheduler", signal.SIGKILL)
    wait_until(
        lambda: "scheduler PAIR peer went away" in cluster.log_text("worker-pool"),
        15,
        "the pool to see its scheduler go",
    )
    squatter = Squatter(address, junk=junk)
    try:
        # It holds the port first: the scheduler is not there yet.
        wait_until(
            lambda: squatter.said("connected"), 15, lambda: f"the squatter to connect: {squatter.lines}"
        )
        cluster.start_service("scheduler")
        client = cluster.client()
        submitted = [client.submit("add", i, 1) for i in range(TASKS)]
        finals = [client.wait(t.id, timeout=30) for t in submitted]
        assert [f.state.name for f in finals] == ["SUCCESS"] * TASKS, finals
        assert [f.result for f in finals] == [i + 1 for i in range(TASKS)]
        # Dispatched while the squatter was still there, and its pipe closed by the pool.
        assert squatter.proc.poll() is None
        wait_until(
            lambda: squatter.said("closed pair1"),
            15,
            lambda: f"the squatter's pipe to close: {squatter.lines}",
        )
        reason = "a message that fails the seal (unsigned)" if junk else "no sealed hello within"
        wait_until(lambda: reason in cluster.log_text("worker-pool"), 15, f"the pool to log why ({reason})")
    finally:
        squatter.stop()
