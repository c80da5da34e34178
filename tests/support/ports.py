"""TCP ports for clusters over tcp: a block of consecutive free ports (a cluster's
base port and its offsets, the same on every loopback address its instances
listen on), what a process listens on, and what an HTTP port answers."""

from __future__ import annotations

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


def free_port_block(size: int) -> int:
    """The first port of ``size`` consecutive ports free on every address, below the
    ephemeral range (32768+) so outgoing connections do not take them meanwhile."""
    rng = random.Random()
    for _ in range(200):
        start = rng.randrange(20000, 32000 - size)
        if all(_free_on_every_address(p) for p in range(start, start + size)):
            return start
    raise RuntimeError(f"no block of {size} free ports found")


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
