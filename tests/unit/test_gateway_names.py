"""The gateway's task names (gateway/names.py): callers that share one refresh of
the store's names share its outcome, and each waits no longer than its own limit."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from taskyard.bus.v1 import pools_pb2
from taskyard.core import errors
from taskyard.gateway.names import KnownNames

pytestmark = pytest.mark.asyncio


class HeldStore:
    """A store whose task names reply waits until the test gives it (or its failure)."""

    def __init__(self) -> None:
        self.called = asyncio.Event()
        self.reply: asyncio.Future[pools_pb2.TaskNamesReply] = asyncio.get_running_loop().create_future()
        self.calls = 0

    async def call(self, method: Any, request: Any, **options: Any) -> Any:
        self.calls += 1
        self.called.set()
        return await self.reply


async def test_a_caller_joining_a_refresh_gets_its_failure() -> None:
    store = HeldStore()
    names = KnownNames(store, None)
    first = asyncio.create_task(names.refresh())
    await store.called.wait()
    joiner = asyncio.create_task(names.refresh(limit=30.0))
    await asyncio.sleep(0)  # the joiner waits on the refresh in flight
    store.reply.set_exception(errors.unavailable("the store is down"))
    for caller in (first, joiner):
        with pytest.raises(errors.TaskyardError) as failed:
            await caller
        assert failed.value.code is errors.Code.UNAVAILABLE
    assert store.calls == 1  # one request for both


async def test_a_caller_joining_a_refresh_waits_no_longer_than_its_limit() -> None:
    store = HeldStore()
    names = KnownNames(store, None)
    first = asyncio.create_task(names.refresh())
    await store.called.wait()
    with pytest.raises(errors.TaskyardError) as late:
        await names.refresh(limit=0.05)
    assert late.value.code is errors.Code.DEADLINE_EXCEEDED
    # The request it joined goes on for the caller that started it.
    store.reply.set_result(pools_pb2.TaskNamesReply(names=["add"]))
    await first
    assert "add" in names
