"""The gateway's copy of the tenants (tenancy.TenantCache) when the store is slow,
down or asked about a name it lacks: an injected clock and a store that counts its
reads."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from taskyard.bus.v1 import event_pb2, tenants_pb2
from taskyard.core import contract, errors, tenants
from taskyard.gateway import auth, tenancy
from taskyard.v1 import tenant_service_pb2

pytestmark = pytest.mark.asyncio

GET = "/taskyard.v1.TaskService/GetTask"
ACME = auth.Identity(name="acme-ci", tenant="acme")
GHOST = auth.Identity(name="ghost-ci", tenant="ghost")


class Clock:
    now = 100.0

    def __call__(self) -> float:
        return self.now


class FixedRandom(random.Random):
    """Every jittered pause at the same point of its range (0: its bottom, 1: its top)."""

    def __init__(self, value: float) -> None:
        super().__init__(0)
        self.value = value

    def random(self) -> float:
        return self.value


class Store:
    """acme, and every read asked of it (those that failed too). A read yields to the
    loop once, so calls made together meet it in flight."""

    def __init__(self) -> None:
        self.down = False
        self.asked = 0
        self.version = 1
        self.tenants = [tenant_service_pb2.Tenant(name="acme", state=tenant_service_pb2.TENANT_STATE_ACTIVE)]

    async def call(self, method: Any, request: Any, **options: Any) -> Any:
        assert method is contract.STORE_TENANTS
        self.asked += 1
        await asyncio.sleep(0)
        if self.down:
            raise errors.unavailable("store: no reply")
        if request.known_version == self.version:
            return tenants_pb2.ReadTenantsReply(version=self.version, unchanged=True)
        return tenants_pb2.ReadTenantsReply(tenants=self.tenants, version=self.version)


async def test_while_the_store_is_down_known_tenants_are_served_for_the_grace_with_pauses_between_reads() -> (
    None
):
    store, clock = Store(), Clock()
    cache = tenancy.TenantCache(store, clock=clock, rng=FixedRandom(1.0))
    first = tenancy.BACKOFF[0] * 3  # the top of the first pause's range
    assert await cache.refusal(GET, ACME) is None
    store.down = True
    clock.now += tenancy.MAX_AGE
    assert await cache.refusal(GET, ACME) is None  # the held copy: the read failed
    assert store.asked == 2
    clock.now += first / 2
    assert await cache.refusal(GET, ACME) is None
    assert store.asked == 2  # paused: no read, no wait on the store
    clock.now += first / 2
    assert await cache.refusal(GET, ACME) is None
    assert store.asked == 3
    clock.now += first  # the pause grew: not yet
    assert await cache.refusal(GET, ACME) is None
    assert store.asked == 3
    # A name the copy lacks cannot be told unknown: the store's error.
    with pytest.raises(errors.TaskyardError) as lacking:
        await cache.refusal(GET, GHOST)
    assert lacking.value.code is errors.Code.UNAVAILABLE
    # Past the grace from the last read that worked, the copy serves no more.
    clock.now = 100.0 + tenancy.GRACE
    with pytest.raises(errors.TaskyardError) as past:
        await cache.refusal(GET, ACME)
    assert past.value.code is errors.Code.UNAVAILABLE
    # Back: the next read after the pause works, and the grace starts again.
    store.down = False
    clock.now += tenancy.BACKOFF[1]
    assert await cache.refusal(GET, ACME) is None
    store.down = True
    clock.now += tenancy.MAX_AGE
    assert await cache.refusal(GET, ACME) is None


@pytest.mark.parametrize(
    ("draw", "expected"),
    [
        (1.0, [0.75, 2.25, 5.0, 5.0, 5.0, 5.0, 5.0]),  # the top of each range: threefold to the cap
        (0.0, [0.25] * 7),  # the bottom of each range: the first pause
    ],
)
async def test_the_pause_between_failed_reads_is_drawn_up_to_its_bound(
    draw: float, expected: list[float]
) -> None:
    store, clock = Store(), Clock()
    cache = tenancy.TenantCache(store, clock=clock, grace=1e9, rng=FixedRandom(draw))
    assert await cache.refusal(GET, ACME) is None
    store.down = True
    clock.now += tenancy.MAX_AGE
    pauses = []
    for _ in range(8):
        asked = store.asked
        step = 0.0
        while store.asked == asked:
            clock.now += 0.125
            step += 0.125
            assert await cache.refusal(GET, ACME) is None
        pauses.append(step)
    assert pauses[1:] == expected


async def test_concurrent_calls_of_an_unknown_tenant_share_one_read_and_the_miss_is_held() -> None:
    store, clock = Store(), Clock()
    cache = tenancy.TenantCache(store, clock=clock)
    assert await cache.refusal(GET, ACME) is None
    asked = store.asked
    refusals = await asyncio.gather(*(cache.refusal(GET, GHOST) for _ in range(50)))
    assert {(r.code, r.reason) for r in refusals if r is not None} == {
        (errors.Code.PERMISSION_DENIED, tenants.TENANT_UNKNOWN)
    }
    assert len([r for r in refusals if r is not None]) == 50
    assert store.asked == asked + 1
    # Held as missing for max_age: no read.
    refusals = await asyncio.gather(*(cache.refusal(GET, GHOST) for _ in range(50)))
    assert all(r is not None for r in refusals) and store.asked == asked + 1
    # Past it, one read again; a tenant.* event (ghost created) drops the miss at once.
    clock.now += tenancy.MAX_AGE
    await asyncio.gather(*(cache.refusal(GET, GHOST) for _ in range(50)))
    assert store.asked == asked + 2
    store.tenants = [*store.tenants, tenant_service_pb2.Tenant(name="ghost")]
    store.version += 1
    cache.tap(event_pb2.EventBatch(events=[event_pb2.Event(type="tenant.created")]))
    assert await cache.refusal(GET, GHOST) is None
    assert store.asked == asked + 3
