"""Worker pools the scheduler knows, with the PAIR link to each and its slots.

Free capacity is the scheduler's own account (capacity minus attempts it
dispatched and has not heard back about); a pool's survey replies correct it.

A pool the scheduler reaches is not always one whose work counts: its starts,
outcomes and renewals go to the result-store by a route of their own. Such a
pool gets nothing new (``free`` is 0) while it says it is cut off from every
store (``cut_off``, worker_pool/contact.py), or while a store has declared it
lost and no store has heard from it since (``lost``: pool.lost, until its
heartbeat reaches a store again, pool.registered).

A pool serves every tenant's tasks, or only those of the tenants it lists
(``taskyard pool --tenant``; Register/SurveyReply/Announcement.tenants, ``""``
the default tenant): ``Pool.tenants``, None for every tenant.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pynng

from taskyard.bus.v1 import dispatch_pb2
from taskyard.core import contract, roles, transport
from taskyard.core.states import WorkerState

log = logging.getLogger(__name__)

ReportHandler = Callable[["Pool", dispatch_pb2.PoolReport], Awaitable[None]]

# A link's first message, sent on every pipe as it connects: an empty dispatch,
# sealed. A pool admits a pipe by it and drops one that sends nothing it can verify
# (core/pair_peers.py), so a peer without the key cannot hold the pool's port.
HELLO = contract.DISPATCH.encode(dispatch_pb2.Dispatch())


def open_link(address: str, *, max_message_bytes: int, on_connect: Callable[[], None] | None = None) -> Any:
    """A PAIR link dialing a pool at ``address`` that says hello on every connect
    (then calls ``on_connect``, on the loop).

    The hello is sent from NNG's thread as the pipe connects, not from the loop: a
    loop stalled longer than the pool waits for it would cost the link (the pool
    drops a pipe that stays silent)."""
    # Sealed under the pools' key (core.seal, for_audience): a pool holds no other.
    sock = transport.open_pair(max_message_bytes=max_message_bytes, dial=address, audience=roles.WORKER_POOL)
    loop = asyncio.get_running_loop()

    def hello() -> None:
        # Never blocks: the send buffer (transport.PAIR_BUFFER) has room for it.
        with contextlib.suppress(pynng.NNGException):
            sock.send(HELLO, block=False)

    def connected(_pipe: Any) -> None:
        hello()
        if on_connect is not None:
            transport.call_from_nng_thread(loop, on_connect)

    sock.add_post_pipe_connect_cb(connected)
    if sock.pipes:  # connected before the callback was set (twice is harmless)
        hello()
        if on_connect is not None:
            loop.call_soon(on_connect)
    return sock


# Seconds a pool whose PAIR link dropped is known as gone: a survey reply or an
# announcement it sent before it died may still arrive, and must not bring it back
# (dispatches would wait for their lease). A pool still alive registers again.
LINK_LOST_MEMORY = 300.0

_STARTING = WorkerState.STARTING.value


@dataclasses.dataclass(eq=False)
class Pool:
    pool_id: str
    pair_address: str
    names: frozenset[str]
    capacity: int
    socket: pynng.Pair1
    state: str = WorkerState.RUNNING.value
    # task id -> monotonic time it was dispatched
    inflight: dict[str, float] = dataclasses.field(default_factory=dict)
    last_seen: float = dataclasses.field(default_factory=time.monotonic)
    missed_surveys: int = 0
    # It says its requests reach no store (its last survey answer or slot notice).
    cut_off: bool = False
    # A store declared it lost, and no store has heard from it since.
    lost: bool = False
    receiver: asyncio.Task[None] | None = None
    # What the pool reports (slot notices, one per finished task), taken on the
    # loop; closing it closes ``socket``.
    inbox: transport.Inbox | None = None
    # The tenants whose tasks it runs; None: every tenant's.
    tenants: frozenset[str] | None = None
    # It registered with this scheduler (it takes work from then on).
    registered: bool = False

    def serves(self, name: str, tenant: str) -> bool:
        """Whether it runs tasks of this name and tenant."""
        return name in self.names and (self.tenants is None or tenant in self.tenants)

    @property
    def benched(self) -> bool:
        """Nothing new goes to it: what it would run could not be reported."""
        return self.cut_off or self.lost

    @property
    def free(self) -> int:
        if self.state != WorkerState.RUNNING.value or self.benched:
            return 0
        return max(0, self.capacity - len(self.inflight))

    async def send(self, message: dispatch_pb2.Dispatch | bytes) -> bool:
        try:
            await self.socket.asend(contract.DISPATCH.encode(message))
        except pynng.NNGException as exc:
            log.warning("dispatch to pool %s failed: %s", self.pool_id, exc)
            return False
        return True


class PoolRegistry:
    def __init__(
        self, *, max_message_bytes: int, on_report: ReportHandler, on_change: Callable[[], None]
    ) -> None:
        self._max = max_message_bytes
        self._on_report = on_report
        self._on_change = on_change
        self.pools: dict[str, Pool] = {}
        # pool id -> monotonic time its link dropped (see LINK_LOST_MEMORY).
        self._lost: dict[str, float] = {}
        # Pools a store declared lost that no store has heard from since: kept by
        # id, so a pool that registers again (a new ``Pool``) is still benched.
        self.unheard: set[str] = set()

    def upsert(
        self,
        *,
        pool_id: str,
        pair_address: str,
        names: list[str],
        capacity: int,
        state: str = "",
        registered: bool = False,
        cut_off: bool | None = None,
        tenants: list[str] | None = None,
    ) -> Pool | None:
        """Learn about a pool from a registration, an announcement or a survey reply.

        None when the pool's link dropped and only its own registration (``registered``)
        may bring it back."""
        now = time.monotonic()
        if registered:
            self._lost.pop(pool_id, None)
        elif pool_id in self._lost:
            if now - self._lost[pool_id] < LINK_LOST_MEMORY:
                return None
            del self._lost[pool_id]
        pool = self.pools.get(pool_id)
        if pool is not None and pool.pair_address != pair_address and pair_address:
            self.remove(pool_id)
            pool = None
        if pool is None:
            sock = open_link(pair_address, max_message_bytes=self._max)
            loop = asyncio.get_running_loop()
            # A pool whose link drops is forgotten at once (no dispatch into the void);
            # a pool that is still alive registers again when it notices.
            sock.add_post_pipe_remove_cb(
                lambda _pipe, pid=pool_id, s=sock: transport.call_from_nng_thread(
                    loop, self._link_lost, pid, s
                )
            )
            pool = Pool(
                pool_id, pair_address, frozenset(names), max(0, capacity), sock, inbox=transport.Inbox(sock)
            )
            pool.lost = pool_id in self.unheard
            pool.receiver = asyncio.get_running_loop().create_task(self._receive(pool))
            self.pools[pool_id] = pool
            log.info(
                "pool %s joined at %s (%d slots, %d task names)", pool_id, pair_address, capacity, len(names)
            )
        else:
            pool.names = frozenset(names) or pool.names
            pool.capacity = max(0, capacity) or pool.capacity
        if tenants is not None:  # every message of a pool says which (empty: all)
            pool.tenants = frozenset(tenants) or None
        if registered:
            pool.registered = True
            if pool.state == _STARTING:  # a survey answered before it registered
                pool.state = WorkerState.RUNNING.value
        if state and not (state == _STARTING and pool.registered):
            # A survey answer sent while it was starting can be read after the slot
            # notice that says it runs: it must not make a registered pool unready
            # until the next survey.
            pool.state = state
        if cut_off is not None:
            pool.cut_off = cut_off
        pool.last_seen = now
        pool.missed_surveys = 0
        self._on_change()
        return pool

    def serving(self, name: str, tenant: str) -> bool:
        """Whether a pool it knows runs tasks of this name and tenant."""
        return any(pool.serves(name, tenant) for pool in self.pools.values())

    def declare_lost(self, pool_id: str) -> bool:
        """A store declared the pool lost: nothing new goes to it until a store hears
        from it again. Whether that is news."""
        if pool_id in self.unheard:
            return False
        self.unheard.add(pool_id)
        pool = self.pools.get(pool_id)
        if pool is not None:
            pool.lost = True
        log.warning("pool %s declared lost by a result-store: no dispatch to it until it is heard", pool_id)
        return True

    def heard(self, pool_id: str) -> bool:
        """A store heard from the pool (its heartbeat): it may be given work again.
        Whether that is news."""
        if pool_id not in self.unheard:
            return False
        self.unheard.discard(pool_id)
        pool = self.pools.get(pool_id)
        if pool is not None:
            pool.lost = False
        log.info("pool %s heard by a result-store again: dispatching to it", pool_id)
        self._on_change()
        return True

    def learn_states(self, states: dict[str, str]) -> bool:
        """The stores' registry as read (pool id -> state): STOPPED is lost, any other
        state heard; a pool the registry lacks is left as it is. Whether a pool was
        newly declared lost."""
        news = False
        for pool_id in set(self.pools) | self.unheard:
            state = states.get(pool_id)
            if state == WorkerState.STOPPED.value:
                news = self.declare_lost(pool_id) or news
            elif state:
                self.heard(pool_id)
        # Ids neither known here nor in the read (stopped for good, or long gone): forgotten,
        # so pools that come and go with ids of their own do not pile up.
        self.unheard &= set(states) | set(self.pools)
        return news

    def _link_lost(self, pool_id: str, sock: pynng.Pair1) -> None:
        pool = self.pools.get(pool_id)
        if pool is not None and pool.socket is sock:
            log.info("pool %s: PAIR link lost", pool_id)
            self.remove(pool_id)
            now = time.monotonic()
            self._lost = {p: t for p, t in self._lost.items() if now - t < LINK_LOST_MEMORY}
            self._lost[pool_id] = now

    def remove(self, pool_id: str) -> None:
        pool = self.pools.pop(pool_id, None)
        if pool is None:
            return
        log.info("pool %s left (%d attempts in flight are recovered by lease)", pool_id, len(pool.inflight))
        if pool.receiver is not None:
            pool.receiver.cancel()
        (pool.inbox or pool.socket).close()

    async def _receive(self, pool: Pool) -> None:
        while True:
            try:
                raw = await (pool.inbox.recv() if pool.inbox is not None else pool.socket.arecv())
            except pynng.Closed:
                return
            try:
                report = contract.POOL_REPORT.open(raw)
            except Exception:  # a malformed report must not stop the link
                log.warning("malformed message from pool %s dropped", pool.pool_id)
                continue
            if report is None:
                continue
            pool.last_seen = time.monotonic()
            await self._on_report(pool, report)

    def close(self) -> None:
        for pool_id in list(self.pools):
            self.remove(pool_id)
