"""Discovery peers dial the hub at every scheduler's address (TASKYARD_SCHEDULER_HOSTS):
only the leader runs it, and the peers meet through it whichever address it is at,
the others never listening (real NNG BUS sockets, ipc in tmp_path)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from taskyard.bus.v1 import dispatch_pb2
from taskyard.core import discovery

INTERVAL = 0.05
WAIT = 10.0


def ipc(tmp_path: Path, name: str) -> str:
    address = f"ipc://{tmp_path / name}.sock"
    assert len(address) < 100, f"ipc path too long for a unix socket: {address}"
    return address


@pytest.fixture
async def closers() -> AsyncIterator[list[discovery.Hub | discovery.Peer]]:
    opened: list[discovery.Hub | discovery.Peer] = []
    yield opened
    for thing in opened:
        thing.close()


def announcing(instance_id: str) -> Callable[[], dispatch_pb2.Announcement]:
    return lambda: dispatch_pb2.Announcement(service="worker_pool", instance_id=instance_id)


async def until_member(peer: discovery.Peer, instance_id: str) -> None:
    async with asyncio.timeout(WAIT):
        while instance_id not in peer.members:
            peer.changed.clear()
            if instance_id in peer.members:
                break
            await peer.changed.wait()


@pytest.mark.parametrize("leader", [0, 1], ids=["hub-first", "hub-second"])
async def test_peers_meet_through_the_hub_at_any_of_the_addresses(
    tmp_path: Path, closers: list[discovery.Hub | discovery.Peer], leader: int
) -> None:
    addresses = [ipc(tmp_path, "sched-a"), ipc(tmp_path, "sched-b")]
    hub = discovery.Hub(addresses[leader])
    closers.append(hub)
    peers = [discovery.Peer(addresses, announcing(name), interval=INTERVAL) for name in ("pool-1", "pool-2")]
    closers.extend(peers)
    assert peers[0].addresses == tuple(addresses)
    async with asyncio.TaskGroup() as tg:
        running = [tg.create_task(hub.run()), *(tg.create_task(p.run()) for p in peers)]
        await until_member(peers[0], "pool-2")
        await until_member(peers[1], "pool-1")
        for thing in closers:
            thing.close()
        for task in running:
            task.cancel()
