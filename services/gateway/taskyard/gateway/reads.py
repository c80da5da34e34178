"""The store reads of waiting calls, gathered into few requests.

Every ``WaitTask`` reads its task now and then while it waits (a lost event then
only delays its answer). Five thousand waits made five thousand store requests
within the same second, and a ``GetTask`` queued behind them for seconds. The
reads asked for in one turn of the event loop go to the store together, as
``GetTasks`` requests of at most ``MAX_IDS`` ids each.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from taskyard.bus.v1 import task_record_pb2

TaskRecord = task_record_pb2.TaskRecord
# One request's ids: its reply (up to this many records) must fit an NNG message.
MAX_IDS = 500


class RecordReads:
    def __init__(
        self,
        fetch: Callable[[Sequence[str]], Awaitable[list[TaskRecord]]],
        *,
        max_ids: int = MAX_IDS,
    ) -> None:
        self._fetch = fetch
        self._max_ids = max_ids
        self._asked: dict[str, list[asyncio.Future[TaskRecord | None]]] = {}
        self._flush_scheduled = False
        self._requests: set[asyncio.Task[None]] = set()

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task's record, or None if the store has no such task."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[TaskRecord | None] = loop.create_future()
        self._asked.setdefault(task_id, []).append(future)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            loop.call_soon(self._flush)
        return await future

    def _flush(self) -> None:
        self._flush_scheduled = False
        asked, self._asked = self._asked, {}
        ids = list(asked)
        loop = asyncio.get_running_loop()
        for start in range(0, len(ids), self._max_ids):
            chunk = {i: asked[i] for i in ids[start : start + self._max_ids]}
            request = loop.create_task(self._read(chunk))
            self._requests.add(request)
            request.add_done_callback(self._requests.discard)

    async def _read(self, asked: dict[str, list[asyncio.Future[TaskRecord | None]]]) -> None:
        try:
            records = await self._fetch(list(asked))
        except Exception as exc:
            for futures in asked.values():
                for f in futures:
                    if not f.done():
                        f.set_exception(exc)
            return
        found = {r.id: r for r in records}
        for task_id, futures in asked.items():
            for f in futures:
                if not f.done():
                    f.set_result(found.get(task_id))
