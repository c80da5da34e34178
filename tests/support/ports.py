"""TCP ports for clusters over tcp: a block of consecutive free ports (a cluster's
base port and its offsets, the same on every loopback address its instances
listen on), what a process listens on, and what an HTTP port answers."""

from __future__ import annotations

import os
import random
import socket
import urllib.error
import urllib.request

import psutil

# Lanes, store, registration, survey, the three event streams: base + 0..9.
BLOCK = 10


def _free_on_every_address(port: int) -> bool:
    # 0.0.0.0 covers 127.0.0.2, 127.0.0.3, ...: free there, free on each of them.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


# Ports handed out below the ephemeral range (32768+), so outgoing connections
# (to PostgreSQL, between services) do not take one between its choice and its
# bind. Each xdist worker has its own share of the range and walks it in order,
# so two workers never pick the same port, and one worker does not pick a port
# again while a cluster it handed it to may still be starting.
_LOW, _HIGH = 20000, 32000


def _share() -> tuple[int, int]:
    count = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    index = int(worker) % count if worker.isdigit() else 0
    span = (_HIGH - _LOW) // count
    return _LOW + index * span, _LOW + (index + 1) * span


_SHARE = _share()
_cursor = random.Random().randrange(*_SHARE)


def free_port_block(size: int) -> int:
    """The first port of ``size`` consecutive ports free on every address, from this
    test process's share of the ports below the ephemeral range."""
    global _cursor
    low, high = _SHARE
    for _ in range((high - low) // max(1, size)):
        start = _cursor if _cursor + size <= high else low
        _cursor = start + size
        if all(_free_on_every_address(p) for p in range(start, start + size)):
            return start
    raise RuntimeError(f"no block of {size} free ports found in {low}..{high}")


def free_port() -> int:
    """One port free on every address (see ``free_port_block``)."""
    return free_port_block(1)


def listening(pid: int) -> set[tuple[str, int]]:
    """The (address, port) pairs a process listens on over TCP."""
    return {
        (c.laddr.ip, c.laddr.port)
        for c in psutil.Process(pid).net_connections(kind="tcp")
        if c.status == psutil.CONN_LISTEN
    }


def http_status(port: int, path: str) -> int:
    """The status of ``GET http://127.0.0.1:<port><path>``; 0 when nothing listens."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as err:
        return err.code
    except OSError:
        return 0
