"""Two result-stores sharing one database, each on its own loopback address (same
ports), and every other service dialing both (TASKYARD_STORE_HOSTS): requests spread
over the stores, each store publishes the results it committed, and the gateway
hears both. After one store is SIGKILLed the other carries on alone: tasks still
succeed and WaitTask still answers as soon as the result is published.

"Promptly" is measured against what each store published, seen by the test's own
subscriber to every store: a WaitTask that missed the event would answer only at
its re-read of the store, seconds later (gateway WAIT_RECHECK)."""

from __future__ import annotations

import concurrent.futures
import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any

import pynng
import pytest
from support.cluster import Cluster
from support.ports import BLOCK, free_port_block, listening
from support.waiting import wait_until

from taskyard.core import contract, states, transport

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

STORE_HOSTS = ("127.0.0.2", "127.0.0.3")
SLEEPERS = 8
# Far below the ~4 s by which a wait that missed the event would be late, far above
# the milliseconds the event takes.
PROMPT = 1.0


class FinalsTap:
    """When one store published each task's final event (read on a thread)."""

    def __init__(self, address: str) -> None:
        self.seen: dict[str, float] = {}  # task id -> time.monotonic() of the event
        self._connected = threading.Event()
        self._sock: Any = transport.open_socket(pynng.Sub0, max_message_bytes=16 << 20, recv_timeout=100)
        self._sock.subscribe(transport.RESULT_EVENTS_TOPIC)
        self._sock.add_post_pipe_connect_cb(lambda _pipe: self._connected.set())
        self._sock.dial(address, block=False)
        self._thread = threading.Thread(target=self._read, name=f"tap {address}", daemon=True)
        self._thread.start()

    def wait_connected(self, timeout: float = 10.0) -> None:
        # A PUB drops what no subscriber hears yet.
        assert self._connected.wait(timeout), "the tap did not connect to its store"

    def _read(self) -> None:
        while True:
            try:
                raw = self._sock.recv()
            except pynng.Timeout:
                continue
            except pynng.NNGException:  # closed
                return
            at = time.monotonic()
            batch = contract.EVENTS.open(raw[transport.EVENTS_TOPIC_BYTES :])
            if batch is None:
                continue
            for event in batch.events:
                if event.state in states.FINAL_VALUES:
                    self.seen.setdefault(event.task_id, at)

    def close(self) -> None:
        self._sock.close()
        self._thread.join(5)


def run_sleepers(client: Any, taps: list[FinalsTap]) -> dict[str, float]:
    """Submit sleep tasks of staggered lengths (so their results are reported one by
    one), wait for each on a thread of its own, and return, per task, how long after
    a store published its result its WaitTask answered."""
    submitted = client.submit_many([{"name": "sleep", "args": [1.5 + 0.1 * i]} for i in range(SLEEPERS)])
    ids = [s.id for s in submitted]

    def wait(task_id: str) -> tuple[Any, float]:
        final = client.wait(task_id, timeout=60)
        return final, time.monotonic()

    with concurrent.futures.ThreadPoolExecutor(SLEEPERS) as pool:
        outcomes = list(pool.map(wait, ids))
    late: dict[str, float] = {}
    for task_id, (final, answered_at) in zip(ids, outcomes, strict=True):
        assert final.state.name == "SUCCESS", final
        # The taps read on threads of their own: one may take its copy a moment
        # after the gateway answered from its own (the time it records is then
        # later, which only makes the wait look more prompt).
        published = wait_until(
            lambda tid=task_id: [tap.seen[tid] for tap in taps if tid in tap.seen],
            5,
            f"a store to publish the result of {task_id}",
        )
        late[task_id] = answered_at - min(published)
    return late


def test_two_stores_share_the_work_and_one_may_die(cluster_factory: Callable[..., Cluster]) -> None:
    start = free_port_block(BLOCK + 1)
    base = start + 1
    cluster = cluster_factory(
        start=False,
        transport="tcp",
        base_port=base,
        discovery_port=start,
        store_hosts=STORE_HOSTS,
        concurrency=SLEEPERS,
    )
    stores = cluster.start_instances("result-store", [{"TASKYARD_BIND_HOST": h} for h in STORE_HOSTS])
    for service in ("scheduler", "worker-pool", "gateway"):
        cluster.start_service(service)
    cluster.wait_ready()
    # Each store listens on its own address, on the same ports.
    for name, host in zip(stores, STORE_HOSTS, strict=True):
        assert {(host, base + offset) for offset in (4, 7, 8, 9)} <= listening(cluster.pid(name))

    taps = [FinalsTap(address) for address in cluster.settings.events_addresses]
    with contextlib.ExitStack() as stack:
        for tap in taps:
            stack.callback(tap.close)
            tap.wait_connected()
        client: Any = cluster.client()
        stack.callback(client.close)

        quick = client.submit_many([{"name": "add", "args": [i, 1]} for i in range(20)])
        for i, task in enumerate(quick):
            final = client.wait(task.id, timeout=30)
            assert final.state.name == "SUCCESS" and final.result == i + 1, final

        late = run_sleepers(client, taps)
        # The reports went to both stores, and what either published reached the gateway.
        assert all(set(late) & set(tap.seen) for tap in taps), [sorted(tap.seen) for tap in taps]
        assert max(late.values()) < PROMPT, late

        assert cluster.kill(stores[0]) is not None  # SIGKILL, by its PID
        # At once: requests that were on the dead store's pipes are sent again.
        quick = client.submit_many([{"name": "add", "args": [i, 2]} for i in range(20)])
        for i, task in enumerate(quick):
            final = client.wait(task.id, timeout=30)
            assert final.state.name == "SUCCESS" and final.result == i + 2, final

        late = run_sleepers(client, taps)
        assert set(late) <= set(taps[1].seen) and not set(late) & set(taps[0].seen)
        assert max(late.values()) < PROMPT, late
