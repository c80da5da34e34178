"""Who a call acts for, and whether its tenant may: the tenants the store holds, and
the refusals made before anything runs (docs/tenants.md).

A token of a tenant the store does not know is refused (PERMISSION_DENIED,
TENANT_UNKNOWN), and so is an operator acting as one (the ``taskyard-tenant``
metadata). A suspended tenant's submissions, retries, redrives and schedule
creations and firings are refused (FAILED_PRECONDITION, TENANT_SUSPENDED); its
reads and cancels go on. TenantService is the operators', but for a tenant reading
its own (GetTenant): OPERATOR_ONLY otherwise.

The tenants are held as the store last said (STORE_TENANTS with the version held:
``unchanged`` costs one indexed read), read again when older than ``max_age``, when
a ``tenant.*`` event passes, and at once for a name the copy held lacks, before
that name is refused. The store checks suspension again inside the insert: this
copy only spares it the submissions it would refuse.

Concurrent calls share one read in flight, and a name the store lacks is held as
missing for ``max_age`` (or until a ``tenant.*`` event): a flood of calls of an
unknown tenant costs one read, not one each. While the store cannot be read, the
copy held keeps serving the tenants it has for ``GRACE`` seconds after the last
read that worked, and reads are tried again after a growing pause (``BACKOFF``),
so a call does not wait out a store timeout each; past that, or for a name the
copy lacks, the call fails with the store's error (UNAVAILABLE).
"""

from __future__ import annotations

import asyncio
import inspect
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from taskyard.bus.v1 import event_pb2, tenants_pb2
from taskyard.core import contract, errors, rpc, tenants
from taskyard.core.retry import Backoff
from taskyard.gateway import admission, auth, status
from taskyard.v1 import tenant_service_pb2

# How old the copy held may be when it is used.
MAX_AGE = 1.0
# How long the copy held serves its tenants after the last read that worked, while
# the store cannot be read (suspension is checked again by the store's writes).
GRACE = 30.0
# The pause before reading again after a failed read: its first and its cap
# (core.retry.Backoff: growing with each failure in a row, jittered so gateways
# that lost the store together do not all read again at once).
BACKOFF = (0.25, 5.0)
# The names held as missing at once; past it the oldest are forgotten (read again).
MAX_MISSES = 10_000

TENANT_SERVICE_NAME = tenant_service_pb2.DESCRIPTOR.services_by_name["TenantService"].full_name
_TENANTS = f"/{TENANT_SERVICE_NAME}/"
# Refused to a suspended tenant: what would start work of its (reads and cancels go on).
SUSPENDED_REFUSES = frozenset(
    {
        "/taskyard.v1.TaskService/SubmitTask",
        "/taskyard.v1.TaskService/BatchSubmitTasks",
        "/taskyard.v1.TaskService/RunTask",
        "/taskyard.v1.QueueService/RetryTasks",
        "/taskyard.v1.FailureService/Redrive",
        "/taskyard.v1.ScheduleService/CreateSchedule",
        "/taskyard.v1.ScheduleService/TriggerSchedule",
    }
)
# TenantService but GetTenant (a tenant token reads its own); the tokens' check refuses
# them first, this again for an operator's identity a servicer is handed.
OPERATOR_METHODS = auth.OPERATOR_METHODS


def unknown(name: str) -> errors.TaskyardError:
    return errors.TaskyardError(
        errors.Code.PERMISSION_DENIED,
        tenants.TENANT_UNKNOWN,
        tenants.unknown_message(name),
    )


def suspended(name: str) -> errors.TaskyardError:
    return errors.TaskyardError(
        errors.Code.FAILED_PRECONDITION,
        tenants.TENANT_SUSPENDED,
        tenants.suspended_message(name),
    )


def operator_only(method: str, who: auth.Identity) -> errors.TaskyardError:
    return errors.TaskyardError(
        errors.Code.PERMISSION_DENIED,
        tenants.OPERATOR_ONLY,
        f"{method.rsplit('/', 1)[-1]} is for operator tokens only; token '{who.name}' belongs to a tenant",
    )


class TenantCache:
    """The tenants by name, as the store last said."""

    def __init__(
        self,
        store: rpc.Caller,
        *,
        max_age: float = MAX_AGE,
        grace: float = GRACE,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        self._store = store
        self.max_age = max_age
        self.grace = grace
        self._clock = clock
        self._held: dict[str, tenant_service_pb2.Tenant] = {}
        self._version = -1
        self._read_at = -1e9  # the copy's age: reset by stale()
        self._worked_at = -1e9  # the last read that worked: the grace runs from it
        self._generation = 0
        self._reading: asyncio.Task[None] | None = None
        self._reading_generation = -1
        self._reading_number = 0
        self._started = 0  # reads begun
        # name -> when a read found it missing (dicts keep insertion order: oldest first)
        self._missing: dict[str, float] = {}
        self._failure: errors.TaskyardError | None = None
        self._backoff = Backoff(first=BACKOFF[0], cap=BACKOFF[1], rng=rng)
        self._retry_at = -1e9
        self.reads = 0

    def stale(self) -> None:
        """A tenant changed: read before the next use."""
        self._generation += 1
        self._read_at = -1e9
        self._missing.clear()

    def tap(self, batch: event_pb2.EventBatch) -> None:
        """For Waiters.taps: a ``tenant.*`` event makes the copy stale."""
        if any(ev.type.startswith("tenant.") for ev in batch.events):
            self.stale()

    async def get(self, name: str) -> tenant_service_pb2.Tenant | None:
        """``name``'s tenant, or None when the store does not hold it (asked within
        ``max_age``); raises the store's error when it cannot say (see above)."""
        begun = self._started
        fresh = False
        if self._clock() - self._read_at >= self.max_age:
            fresh = await self._try_read() > begun
        found = self._held.get(name)
        if found is None and self._failure is None:
            missed = self._missing.get(name)
            if missed is not None and self._clock() - missed < self.max_age:
                return None  # a read since (this call's or one alongside) lacked it too
            if not fresh:
                await self._try_read()
            found = self._held.get(name)
            if found is None and self._failure is None:
                self._missed(name)
        if self._failure is not None and (found is None or self._clock() - self._worked_at >= self.grace):
            # A new error each time: one raised again by every call would grow its traceback.
            raise errors.unavailable(f"the tenants cannot be read from the store: {self._failure.message}")
        return found

    def _missed(self, name: str) -> None:
        self._missing.pop(name, None)
        if len(self._missing) >= MAX_MISSES:
            del self._missing[next(iter(self._missing))]
        self._missing[name] = self._clock()

    async def _try_read(self) -> int:
        """A read, shared with the one in flight of this generation; none while
        paused after a failure (the failure is kept for get to judge). The number
        of the read awaited (reads are numbered as they begin), 0 for none."""
        if self._failure is not None and self._clock() < self._retry_at:
            return 0
        try:
            return await self._read()
        except errors.TaskyardError:
            return 0  # kept in _failure by _load

    async def _read(self) -> int:
        if self._reading is None or self._reading_generation != self._generation:
            reading = asyncio.get_running_loop().create_task(
                self._load(self._generation), name="gateway-tenants"
            )
            self._started += 1
            self._reading, self._reading_generation = reading, self._generation
            self._reading_number = self._started
        number = self._reading_number
        await asyncio.shield(self._reading)
        return number

    async def _load(self, generation: int) -> None:
        try:
            reply = await self._store.call(
                contract.STORE_TENANTS, tenants_pb2.ReadTenantsRequest(known_version=self._version)
            )
        except errors.TaskyardError as exc:
            self._failure = exc
            self._retry_at = self._clock() + self._backoff.next_delay()
            raise
        finally:
            if self._reading is asyncio.current_task():
                self._reading = None
        self.reads += 1
        self._failure, self._retry_at = None, -1e9
        self._backoff.reset()
        if not reply.unchanged and reply.version >= self._version:
            self._held = {t.name: t for t in reply.tenants}
            self._version = reply.version
        self._worked_at = self._clock()
        if generation == self._generation:
            self._read_at = self._worked_at

    async def refusal(self, method: str, who: auth.Identity) -> errors.TaskyardError | None:
        """Why ``who`` may not call ``method`` now, or None."""
        if method in OPERATOR_METHODS:
            return None if who.operator else operator_only(method, who)
        within = who.within
        if not within or method.startswith(_TENANTS):
            return None  # every tenant's, or the default one (no row); TenantService answers itself
        tenant = await self.get(within)
        if tenant is None:
            return unknown(within)
        if method in SUSPENDED_REFUSES and tenant.state == tenant_service_pb2.TENANT_STATE_SUSPENDED:
            return suspended(within)
        return None


class Tenancy(admission.Interceptor):
    """Sets the identity of each call (with the ``taskyard-tenant`` metadata) and
    makes the refusals above. Inside the Authenticator, which names the token."""

    def __init__(self, cache: TenantCache) -> None:
        self.cache = cache
        self.refused = 0

    def _identify(self, method: str, context: grpc.aio.ServicerContext[Any, Any]) -> auth.Identity:
        """The call's identity with its metadata (raises the refusal of a bad one)."""
        return auth.act_as(context.invocation_metadata(), auth.identity())

    async def _refuse(
        self, context: grpc.aio.ServicerContext[Any, Any], refusal: errors.TaskyardError
    ) -> None:
        self.refused += 1
        await status.abort(context, refusal)

    async def _admit(self, method: str, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        """Refuse the call, or serve it as its identity's. An operator's call over every
        tenant (most calls of a suite without tenants) awaits nothing here."""
        try:
            who = self._identify(method, context)
            refusal = (
                await self.cache.refusal(method, who) if who.within or method in OPERATOR_METHODS else None
            )
        except errors.TaskyardError as exc:
            refusal = exc
        if refusal is not None:
            await self._refuse(context, refusal)
        auth.set_identity(who)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[admission.Handler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> admission.Handler:
        handler = await continuation(handler_call_details)
        method = handler_call_details.method
        if handler is None or method in auth.OPEN_METHODS or method.startswith("/grpc.reflection."):
            return handler
        behavior = admission.behavior_of(handler)
        admit = self._admit

        if inspect.isasyncgenfunction(behavior):

            async def stream(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
                await admit(method, context)
                async for item in behavior(request, context):
                    yield item

            return admission.handler_like(handler, stream)

        async def call(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            await admit(method, context)
            result = behavior(request, context)
            return await result if inspect.isawaitable(result) else result

        return admission.handler_like(handler, call)
