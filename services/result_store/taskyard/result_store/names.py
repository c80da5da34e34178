"""The task names some worker pool has ever declared (the ``task_names`` table).

Pools declare their names in every heartbeat (``writes/heartbeats.py``) and a name is
never forgotten: a task for a pool that is down waits QUEUED (ExplainTask says
NO_POOL) instead of being refused. Only a name never declared is refused, here
for every insert and at the gateway.

The set only grows, so it is cached; a name missing from the cache is looked up
(by primary key) before it is called unknown, one lookup at a time: a burst of
inserts of a name not cached yet waits for one lookup, not one each.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

import asyncpg

from .appliers import Stats
from .queries import bind


class DeclaredNames:
    """A ``Container[str]`` of the declared names this store has seen so far."""

    def __init__(self, pool: asyncpg.Pool, stats: Stats) -> None:
        self._pool = pool
        self._stats = stats
        self._names: set[str] = set()
        self._lookup: asyncio.Future[None] | None = None
        self._all: asyncio.Task[list[str]] | None = None  # a read of every name, shared
        self._read_all = False

    def __contains__(self, name: object) -> bool:
        return name in self._names

    async def ensure(self, names: Iterable[str]) -> None:
        """Look up the names of ``names`` the cache does not hold yet."""
        missing = {n for n in names if n and n not in self._names}
        while missing and self._lookup is not None:
            await asyncio.shield(self._lookup)  # it may have found them
            missing = {n for n in missing if n not in self._names}
        if not missing:
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._lookup = done
        try:
            self._stats.statements += 1
            rows = await self._pool.fetch(*bind("declared_task_names", names=sorted(missing)))
            self._names.update(r["name"] for r in rows)
        finally:
            self._lookup = None
            done.set_result(None)

    async def all(self) -> list[str]:
        """Every declared name (read from the table: another store may have added
        some); concurrent callers share one read."""
        if self._all is None:
            self._all = asyncio.get_running_loop().create_task(self._fetch_all(), name="store-all-names")
        return await asyncio.shield(self._all)

    async def _fetch_all(self) -> list[str]:
        try:
            self._stats.statements += 1
            rows = await self._pool.fetch(*bind("all_task_names"))
        finally:
            self._all = None
        found = [r["name"] for r in rows]
        self._names.update(found)
        self._read_all = True
        return found

    async def held(self) -> list[str]:
        """The names this store holds, read from the table only until it was read once:
        what a gateway's readiness probe gets every second, so it costs no read (a
        name added through another store since is found by ``all``, which a gateway
        asks for when a name is missing)."""
        if not self._read_all:
            return await self.all()
        return sorted(self._names)
