"""The gateway's copy of the limits (gateway/limit_catalog.py) against a change made
through this gateway while a read begun before it is still in flight: the next
use reads again (it does not join the old read), and the old read, once it ends,
does not pass for a read made after the change."""

from __future__ import annotations

import asyncio
from typing import Any

from taskyard.bus.v1 import flow_pb2
from taskyard.core import contract
from taskyard.core import limits as rules
from taskyard.gateway.limit_catalog import LimitCatalog
from taskyard.v1 import limit_pb2


class HeldStore:
    """A store whose reads see the limits as of their start and answer only when
    ``release`` lets them (one event per read, in the order they began)."""

    def __init__(self) -> None:
        self.limits: dict[str, limit_pb2.Limit] = {}
        self.version = 0
        self.begun: list[asyncio.Event] = []
        self.started = asyncio.Event()

    async def call(self, method: contract.Method[Any, Any], request: Any, **_: Any) -> Any:
        assert method is contract.STORE_LIMITS
        seen = flow_pb2.ReadLimitsReply(version=self.version, limits=list(self.limits.values()))
        if request.known_version == self.version:
            seen = flow_pb2.ReadLimitsReply(version=self.version, unchanged=True)
        gate = asyncio.Event()
        self.begun.append(gate)
        self.started.set()
        await gate.wait()
        return seen

    async def next_read(self) -> asyncio.Event:
        await self.started.wait()
        self.started.clear()
        return self.begun[-1]

    def change(self, name: str, *, delete: bool = False) -> None:
        if delete:
            del self.limits[name]
        else:
            self.limits[name] = limit_pb2.Limit(name=name, rate=rules.parse_rate("10/s"))
        self.version += 1


def uses(*names: str) -> list[limit_pb2.LimitUse]:
    return [limit_pb2.LimitUse(limit=name) for name in names]


async def test_a_limit_created_through_this_gateway_is_not_checked_by_a_read_begun_before() -> None:
    store = HeldStore()
    store.change("other")
    catalog = LimitCatalog(store, max_age=3600.0)
    first = asyncio.create_task(catalog.for_uses(uses("other")))
    old_read = await store.next_read()

    store.change("api")  # CreateLimit through this gateway: committed, then marked
    catalog.stale()
    second = asyncio.create_task(catalog.for_uses(uses("api")))
    new_read = await store.next_read()

    old_read.set()
    assert "other" in (await first).names
    new_read.set()
    assert "api" in (await second).names
    assert catalog.reads == 2


async def test_a_read_begun_before_a_delete_does_not_stand_for_a_read_after_it() -> None:
    store = HeldStore()
    store.change("api")
    catalog = LimitCatalog(store, max_age=3600.0)
    first = asyncio.create_task(catalog.for_uses(uses("api")))
    old_read = await store.next_read()

    store.change("api", delete=True)  # DeleteLimit through this gateway
    catalog.stale()
    old_read.set()
    assert "api" in (await first).names  # begun before the delete: it saw the limit

    # The next use reads again rather than trusting the old read for max_age.
    after = asyncio.create_task(catalog.for_uses(uses("api")))
    new_read = await store.next_read()
    new_read.set()
    assert "api" not in (await after).names
    assert catalog.reads == 2


async def test_an_answer_overtaken_by_a_newer_one_does_not_replace_it() -> None:
    store = HeldStore()
    catalog = LimitCatalog(store, max_age=3600.0)
    first = asyncio.create_task(catalog.for_uses(uses("api")))
    old_read = await store.next_read()
    store.change("api")
    catalog.stale()
    second = asyncio.create_task(catalog.for_uses(uses("api")))
    new_read = await store.next_read()

    new_read.set()
    assert "api" in (await second).names
    old_read.set()
    await first
    assert "api" in (await catalog.for_uses(uses("api"))).names
    assert catalog.reads == 2
