"""A real cluster over TCP with the multi-host address settings: listeners on
0.0.0.0 (TASKYARD_BIND_HOST), dialers at TASKYARD_SCHEDULER_HOST /
TASKYARD_STORE_HOST, and a pool that announces TASKYARD_ADVERTISE_HOST (not the
wildcard it is bound to) as its PAIR address.

The second case sets TASKYARD_HOST to an unroutable TEST-NET address (RFC 5737)
and every role explicitly: any socket still built from ``host`` would fail to
bind or never connect, so the task reaching SUCCESS shows that every listen and
dial site uses its own role's host."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from support.cluster import Cluster
from support.ports import BLOCK, free_port_block, listening

from taskyard.core.priority import Priority

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


@pytest.mark.parametrize("host", ["127.0.0.1", "192.0.2.1"], ids=["host-loopback", "host-unroutable"])
def test_cluster_listens_on_the_bind_host_and_dials_the_role_hosts(
    cluster_factory: Callable[..., Cluster], host: str
) -> None:
    start = free_port_block(BLOCK + 1)
    discovery_port, base = start, start + 1
    cluster = cluster_factory(
        transport="tcp",
        host=host,
        bind_host="0.0.0.0",
        scheduler_host="127.0.0.1",
        store_host="127.0.0.1",
        advertise_host="127.0.0.1",
        base_port=base,
        discovery_port=discovery_port,
    )
    s = cluster.settings
    # Listeners on 0.0.0.0 start only with a bus key (support.cluster passes the session's).
    assert s.bus_keys
    assert s.lane_listen_address(Priority.CRITICAL) == f"tcp://0.0.0.0:{base}"
    assert s.store_address == f"tcp://127.0.0.1:{base + 4}"

    client: Any = cluster.client()
    task = client.submit("add", 2, 3)
    final = client.wait(task.id, timeout=30)
    assert final.state.name == "SUCCESS", final
    assert final.result == 5

    # Every listener is on the wildcard, none on the loopback or on `host`.
    scheduler = listening(cluster.pid("scheduler"))
    for port in (*range(base, base + 4), base + 5, base + 6, discovery_port):
        assert ("0.0.0.0", port) in scheduler, (port, scheduler)
    store = listening(cluster.pid("result-store"))
    assert {("0.0.0.0", base + p) for p in (4, 7, 8, 9)} <= store, store

    # The pool bound its PAIR socket to 0.0.0.0 on an ephemeral port and announced
    # that port on the advertise host; the scheduler dialed exactly that.
    started = re.search(r"pair (tcp://\S+),", cluster.log_text("worker-pool"))
    assert started is not None, cluster.log_text("worker-pool")
    advertised = started.group(1)
    assert re.fullmatch(r"tcp://127\.0\.0\.1:\d+", advertised), advertised
    pair_port = int(advertised.rsplit(":", 1)[1])
    assert ("0.0.0.0", pair_port) in listening(cluster.pid("worker-pool"))
    assert f"joined at {advertised} " in cluster.log_text("scheduler")
    assert "0.0.0.0" not in advertised
