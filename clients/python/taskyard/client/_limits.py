"""Flow control's limits and fairness weights: ``client.limits`` (LimitService).

with Client() as c:
    c.limits.create("openai", rate=500, period=1.0, burst=50)      # 500 a second in all
    c.limits.create("per-customer", concurrency=3, per_key=True)   # 3 at once per key
    c.limits.create("payments", breaker=Breaker(failures=5, window=30, cool_down=10), per_key=True)
    c.submit("call_openai", limits={"openai": "", "per-customer": "customer:42"})
    c.limits.set_weight("customer:42", 3)                          # 3 shares of its lane

Changing a limit or a weight takes the ``admin`` scope, reading them ``read``.
"""

from __future__ import annotations

import builtins
import datetime
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import grpc

from taskyard.client._common import request_from
from taskyard.client._flow import Breaker, KeyWeight, LimitInfo, LimitPage
from taskyard.v1 import limit_pb2, limit_service_pb2, limit_service_pb2_grpc


def definition(
    name: str,
    *,
    rate: int | None = None,
    period: float | datetime.timedelta = 1.0,
    burst: int = 0,
    concurrency: int | None = None,
    breaker: Breaker | None = None,
    per_key: bool = False,
    description: str = "",
    task_name: str = "",
    key_argument: str = "",
) -> limit_pb2.Limit:
    """A limit: exactly one of ``rate`` (units per ``period``, seconds or a timedelta, in
    bursts of up to ``burst``; 0 means ``rate``), ``concurrency`` (units held at once) and
    ``breaker`` (a circuit breaker, ``Breaker``: per key with ``per_key``).
    ``per_key``: each key of a LimitUse has its own bucket. ``task_name``: every task of
    that name uses the limit, keyed (with ``per_key``) by its keyword argument
    ``key_argument``, as ``@task(rate_limit=..., limit_key=...)`` declares it. The gateway
    checks the numbers (INVALID_ARGUMENT with the fields named).

    ``update`` sends the whole definition, as UpdateLimit replaces it: an option left out
    is reset to its default, so updating a limit a task declares (``send_invoice.rate``)
    without ``task_name=`` (and ``key_argument=``, ``per_key=True``) stops it applying to
    that task's tasks."""
    if [rate is not None, concurrency is not None, breaker is not None].count(True) != 1:
        raise ValueError("give exactly one of rate=, concurrency= and breaker=")
    limit = limit_pb2.Limit(
        name=name, per_key=per_key, description=description, task_name=task_name, key_argument=key_argument
    )
    if rate is not None:
        span = period if isinstance(period, datetime.timedelta) else datetime.timedelta(seconds=period)
        limit.rate.units = rate
        limit.rate.burst = burst
        limit.rate.period.FromTimedelta(span)
    elif burst:
        raise ValueError("burst= applies to rate= only")
    elif breaker is not None:
        limit.breaker.CopyFrom(breaker.to_proto())
    else:
        assert concurrency is not None
        limit.concurrency.max_units = concurrency
    return limit


def _page(resp: limit_service_pb2.ListLimitsResponse) -> LimitPage:
    return LimitPage(
        limits=tuple(LimitInfo.from_proto(m) for m in resp.limits), next_page_token=resp.next_page_token
    )


def _weight(key: str, weight: int) -> limit_service_pb2.SetKeyWeightRequest:
    return limit_service_pb2.SetKeyWeightRequest(weight=limit_pb2.KeyWeight(key=key, weight=weight))


class Limits:
    """The blocking client's ``client.limits``: limits by name, and fairness weights by key."""

    def __init__(self, channel: grpc.Channel, call: Callable[[Callable[..., Any], Any], Any]) -> None:
        self._stub = limit_service_pb2_grpc.LimitServiceStub(channel)
        self._call = call

    @request_from(definition)
    def create(self, limit: limit_pb2.Limit) -> LimitInfo:
        """Create limit ``name``: ``rate=`` units per ``period`` (``burst``) or ``concurrency=``
        units at once, global or ``per_key``. ALREADY_EXISTS when the name is taken."""
        req = limit_service_pb2.CreateLimitRequest(limit=limit)
        return LimitInfo.from_proto(self._call(self._stub.CreateLimit, req).limit)

    def get(self, name: str) -> LimitInfo:
        req = limit_service_pb2.GetLimitRequest(name=name)
        return LimitInfo.from_proto(self._call(self._stub.GetLimit, req).limit)

    def list(self, *, page_size: int = 0, page_token: str = "") -> LimitPage:
        """One page of limits by name (``page_size`` 0 means 100, at most 1000)."""
        req = limit_service_pb2.ListLimitsRequest(page_size=page_size, page_token=page_token)
        return _page(self._call(self._stub.ListLimits, req))

    def __iter__(self) -> Iterator[LimitInfo]:
        """Every limit by name, fetching pages as needed."""
        token = ""
        while True:
            page = self.list(page_token=token)
            yield from page.limits
            token = page.next_page_token
            if not token:
                return

    @request_from(definition)
    def update(self, limit: limit_pb2.Limit) -> LimitInfo:
        """Replace limit ``name``'s whole definition (the options as ``create``'s: one left
        out is reset to its default, ``task_name`` and ``key_argument`` of a declared limit
        too); NOT_FOUND when there is none."""
        req = limit_service_pb2.UpdateLimitRequest(limit=limit)
        return LimitInfo.from_proto(self._call(self._stub.UpdateLimit, req).limit)

    def delete(self, name: str, *, force: bool = False) -> int:
        """Delete limit ``name``. FAILED_PRECONDITION while tasks not final use it, unless
        ``force``: they run without it; returns how many (0 without force)."""
        req = limit_service_pb2.DeleteLimitRequest(name=name, force=force)
        resp: limit_service_pb2.DeleteLimitResponse = self._call(self._stub.DeleteLimit, req)
        return resp.tasks_released

    def set_weight(self, key: str, weight: int) -> KeyWeight:
        """Fairness key ``key`` gets ``weight`` shares of its lane (1 to 1000; 0: back to 1)."""
        return KeyWeight.from_proto(self._call(self._stub.SetKeyWeight, _weight(key, weight)).weight)

    def weights(self) -> builtins.list[KeyWeight]:
        """Every key with a weight, by key (at most 10,000)."""
        resp = self._call(self._stub.ListKeyWeights, limit_service_pb2.ListKeyWeightsRequest())
        return [KeyWeight.from_proto(w) for w in resp.weights]


class AsyncLimits:
    """The asyncio client's ``client.limits`` (same methods, awaitable; ``async for`` iterates)."""

    def __init__(
        self, channel: grpc.aio.Channel, call: Callable[[Callable[..., Any], Any], Awaitable[Any]]
    ) -> None:
        self._stub = limit_service_pb2_grpc.LimitServiceStub(channel)
        self._call = call

    @request_from(definition)
    async def create(self, limit: limit_pb2.Limit) -> LimitInfo:
        req = limit_service_pb2.CreateLimitRequest(limit=limit)
        return LimitInfo.from_proto((await self._call(self._stub.CreateLimit, req)).limit)

    async def get(self, name: str) -> LimitInfo:
        req = limit_service_pb2.GetLimitRequest(name=name)
        return LimitInfo.from_proto((await self._call(self._stub.GetLimit, req)).limit)

    async def list(self, *, page_size: int = 0, page_token: str = "") -> LimitPage:
        req = limit_service_pb2.ListLimitsRequest(page_size=page_size, page_token=page_token)
        return _page(await self._call(self._stub.ListLimits, req))

    async def __aiter__(self) -> AsyncIterator[LimitInfo]:
        token = ""
        while True:
            page = await self.list(page_token=token)
            for limit in page.limits:
                yield limit
            token = page.next_page_token
            if not token:
                return

    @request_from(definition)
    async def update(self, limit: limit_pb2.Limit) -> LimitInfo:
        req = limit_service_pb2.UpdateLimitRequest(limit=limit)
        return LimitInfo.from_proto((await self._call(self._stub.UpdateLimit, req)).limit)

    async def delete(self, name: str, *, force: bool = False) -> int:
        req = limit_service_pb2.DeleteLimitRequest(name=name, force=force)
        resp: limit_service_pb2.DeleteLimitResponse = await self._call(self._stub.DeleteLimit, req)
        return resp.tasks_released

    async def set_weight(self, key: str, weight: int) -> KeyWeight:
        resp = await self._call(self._stub.SetKeyWeight, _weight(key, weight))
        return KeyWeight.from_proto(resp.weight)

    async def weights(self) -> builtins.list[KeyWeight]:
        resp = await self._call(self._stub.ListKeyWeights, limit_service_pb2.ListKeyWeightsRequest())
        return [KeyWeight.from_proto(w) for w in resp.weights]
