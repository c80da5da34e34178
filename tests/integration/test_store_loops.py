"""A result-store whose committer dies does not go on answering: the loop's end fails
the service's supervised set (core.background), and ``serve`` ends with it, the store
closed, for the process to exit and be restarted."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from taskyard.core.background import LoopEnded
from taskyard.result_store import service
from taskyard.result_store.committer import Committer

pytestmark = pytest.mark.asyncio


async def test_a_committer_that_dies_ends_the_service(
    store_settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def dies(self: Committer) -> None:
        raise RuntimeError("a bug in the writer")

    monkeypatch.setattr(Committer, "run", dies)
    stop = asyncio.Event()
    with pytest.raises(LoopEnded, match=r"store-committer failed: RuntimeError\('a bug in the writer'\)"):
        await asyncio.wait_for(service.serve(store_settings, stop), 30)
    assert not stop.is_set()
