"""core.discovery over real NNG BUS sockets (ipc in tmp_path).

BUS delivers only to directly connected peers, so peers dial a hub that relays
every announcement: two peers that are not connected to each other still meet.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pynng
import pytest

from taskyard.bus.v1 import dispatch_pb2
from taskyard.core import contract, discovery, transport

# Announce often so a first announcement lost before the dial completed is soon repeated.
INTERVAL = 0.05
WAIT = 10.0


def ipc(tmp_path: Path, name: str) -> str:
    address = f"ipc://{tmp_path / name}.sock"
    assert len(address) < 100, f"ipc path too long for a unix socket: {address}"
    return address


def announcement(service: str, instance_id: str, *names: str) -> Callable[[], dispatch_pb2.Announcement]:
    return lambda: dispatch_pb2.Announcement(
        service=service, instance_id=instance_id, task_names=list(names), capacity=4
    )


class Running:
    """Starts hubs and peers as tasks and closes them all at the end of a test."""

    def __init__(self) -> None:
        self.closers: list[Callable[[], None]] = []
        self.tasks: list[asyncio.Task[None]] = []

    def hub(self, address: str) -> discovery.Hub:
        hub = discovery.Hub(address)
        self.closers.append(hub.close)
        self.tasks.append(asyncio.create_task(hub.run()))
        return hub

    def peer(
        self, address: str | list[str], ann: Callable[[], dispatch_pb2.Announcement], **kw: bool
    ) -> discovery.Peer:
        peer = discovery.Peer(address, ann, interval=INTERVAL, **kw)
        self.closers.append(peer.close)
        self.tasks.append(asyncio.create_task(peer.run()))
        return peer

    async def close(self) -> None:
        for close in self.closers:
            close()
        for task in self.tasks:
            task.cancel()
        # Bounded: a hub or peer that does not end when closed is a failure, not a hang.
        await asyncio.wait_for(asyncio.gather(*self.tasks, return_exceptions=True), WAIT)


@pytest.fixture
async def running() -> AsyncIterator[Running]:
    r = Running()
    yield r
    await r.close()


async def until_member(peer: discovery.Peer, instance_id: str) -> dispatch_pb2.Announcement:
    """Wait (on the peer's `changed` event, no polling sleeps) until it knows instance_id."""

    async def wait() -> dispatch_pb2.Announcement:
        while instance_id not in peer.members:
            peer.changed.clear()
            if instance_id in peer.members:
                break
            await peer.changed.wait()
        return peer.members[instance_id].announcement

    return await asyncio.wait_for(wait(), WAIT)


async def test_hub_relays_between_peers_that_are_not_connected(tmp_path: Path, running: Running) -> None:
    address = ipc(tmp_path, "discovery")
    running.hub(address)
    # Both peers only dial the hub; neither listens, so they cannot reach each other directly.
    pool = running.peer(address, announcement("worker_pool", "pool-1", "add", "mul"))
    sched = running.peer(address, announcement("scheduler", "sched-1"))

    seen_by_sched = await until_member(sched, "pool-1")
    seen_by_pool = await until_member(pool, "sched-1")

    assert seen_by_sched.service == "worker_pool"
    assert list(seen_by_sched.task_names) == ["add", "mul"]
    assert seen_by_sched.sent_at_ms > 0
    assert seen_by_pool.service == "scheduler"
    assert "pool-1" not in pool.members, "a peer does not record its own announcement"
    assert "sched-1" not in sched.members


async def test_listen_only_peer_sees_everyone_and_is_not_seen(tmp_path: Path, running: Running) -> None:
    address = ipc(tmp_path, "discovery")
    running.hub(address)
    a = running.peer(address, announcement("worker_pool", "pool-a", "add"))
    running.peer(address, announcement("worker_pool", "pool-b", "mul"))
    running.peer(address, announcement("gateway", "gw-1"))
    watcher = running.peer(address, announcement("scheduler", "watcher"), listen_only=True)

    for instance in ("pool-a", "pool-b", "gw-1"):
        await until_member(watcher, instance)
    await until_member(a, "gw-1")

    pools = watcher.alive("worker_pool", max_age=60)
    assert sorted(p.instance_id for p in pools) == ["pool-a", "pool-b"]
    assert [g.instance_id for g in watcher.alive("gateway", max_age=60)] == ["gw-1"]
    assert watcher.alive("result_store", max_age=60) == []
    assert "watcher" not in a.members


async def test_alive_filters_by_age(tmp_path: Path, running: Running) -> None:
    address = ipc(tmp_path, "discovery")
    running.hub(address)
    running.peer(address, announcement("worker_pool", "pool-1"))
    watcher = running.peer(address, announcement("scheduler", "w"), listen_only=True)
    await until_member(watcher, "pool-1")
    assert [p.instance_id for p in watcher.alive("worker_pool", max_age=60)] == ["pool-1"]
    # A negative max_age asks for members seen in the future: nobody qualifies.
    assert watcher.alive("worker_pool", max_age=-1) == []


async def test_malformed_announcement_does_not_stop_discovery(tmp_path: Path, running: Running) -> None:
    address = ipc(tmp_path, "discovery")
    running.hub(address)
    watcher = running.peer(address, announcement("scheduler", "w"), listen_only=True)
    # Sealed, so its garbage passes the seal and reaches the announcement decoder.
    noisy = transport.open_socket(pynng.Bus0, max_message_bytes=1 << 16)
    running.closers.append(noisy.close)
    noisy.dial(address, block=True)  # connected before it sends: BUS drops sends with no peer
    running.peer(address, announcement("worker_pool", "pool-1"))
    await until_member(watcher, "pool-1")

    # Garbage, then a real announcement sent from the same socket: the second still arrives.
    await noisy.asend(b"\xff\x00 not a protobuf envelope")
    good = dispatch_pb2.Announcement(service="gateway", instance_id="gw-late", sent_at_ms=1)
    await noisy.asend(contract.ANNOUNCE.encode(good))
    assert (await until_member(watcher, "gw-late")).service == "gateway"


@pytest.mark.parametrize("leader", [0, 1], ids=["hub-first", "hub-second"])
async def test_peers_dialing_every_scheduler_meet_through_the_hub_wherever_it_runs(
    tmp_path: Path, running: Running, leader: int
) -> None:
    # TASKYARD_SCHEDULER_HOSTS: only the leader runs the hub; nobody listens at the other address.
    addresses = [ipc(tmp_path, "sched-a"), ipc(tmp_path, "sched-b")]
    running.hub(addresses[leader])
    first = running.peer(addresses, announcement("worker_pool", "pool-1"))
    second = running.peer(addresses, announcement("worker_pool", "pool-2"))
    assert first.addresses == tuple(addresses)
    await until_member(first, "pool-2")
    await until_member(second, "pool-1")
