"""Which task names may be submitted: those announced by worker pools on the
discovery BUS (recently) and every name a pool has ever declared, which the store
keeps for good (a task for a pool that is down waits QUEUED: ExplainTask says
NO_POOL). Only a name never declared is refused."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable, Sequence
from typing import Protocol

from taskyard.bus.v1 import dispatch_pb2, pools_pb2
from taskyard.core import contract, errors, rpc

log = logging.getLogger(__name__)

# 0: every name ever declared, not only those live pools serve now.
STORE_MAX_AGE_MS = 0
MIN_REFRESH_INTERVAL = 0.5


class Announced(Protocol):
    """What the gateway needs of ``core.discovery.Peer``."""

    def alive(self, service: str, max_age: float) -> Sequence[dispatch_pb2.Announcement]: ...


class KnownNames:
    """A ``Container[str]`` of the names that may be submitted now."""

    def __init__(
        self,
        store: rpc.Caller,
        peer: Announced | None,
        *,
        announce_interval: float = 2.0,
        min_refresh_interval: float = MIN_REFRESH_INTERVAL,
    ) -> None:
        self._store = store
        self._peer = peer
        self._max_announce_age = 3 * announce_interval
        self._min_refresh = min_refresh_interval
        self._store_names: frozenset[str] = frozenset()
        self._last_refresh = -1e9
        self._last_error: errors.TaskyardError | None = None
        self._refreshing: asyncio.Task[errors.TaskyardError | None] | None = None
        self.refreshes = 0

    def announced(self) -> set[str]:
        names: set[str] = set()
        if self._peer is not None:
            for ann in self._peer.alive("worker_pool", self._max_announce_age):
                names.update(ann.task_names)
        return names

    def __contains__(self, name: object) -> bool:
        if name in self._store_names:
            return True
        return isinstance(name, str) and name in self.announced()

    def snapshot(self) -> frozenset[str]:
        return self._store_names | self.announced()

    async def ensure(self, names: Iterable[str]) -> None:
        """Refresh from the store when a name is missing (at most every 0.5 s).

        Raises the store's error when the refresh failed and a name is still
        missing: "unknown" must not be said of a name we could not check.
        """
        missing = [n for n in names if n and n not in self]
        if not missing:
            return
        try:
            if self._refreshing is not None or time.monotonic() - self._last_refresh >= self._min_refresh:
                await self.refresh()
        except errors.TaskyardError:
            pass
        if self._last_error is not None and any(n not in self for n in missing):
            raise self._last_error

    async def refresh(self, *, limit: float | None = None) -> None:
        """Reload the store's names; concurrent callers share one request and each
        gets its outcome: its failure is raised to all of them. ``limit`` bounds this
        caller's wait, also on a request another caller started."""
        if self._refreshing is None:
            self._refreshing = asyncio.get_running_loop().create_task(self._load(limit), name="gateway-names")
        shared = self._refreshing
        try:
            # The shield: one caller's limit or cancel does not end the others' request.
            failure = await asyncio.wait_for(asyncio.shield(shared), limit)
        except TimeoutError:
            raise errors.deadline(f"no task names from the store within {limit:.1f}s") from None
        if failure is not None:
            raise failure

    async def _load(self, limit: float | None) -> errors.TaskyardError | None:
        self._last_refresh = time.monotonic()
        try:
            reply = await self._store.call(
                contract.STORE_TASK_NAMES,
                pools_pb2.TaskNamesRequest(max_age_ms=STORE_MAX_AGE_MS),
                timeout=limit,
            )
        except errors.TaskyardError as exc:
            self._last_error = exc
            log.debug("task names refresh failed: %s", exc)
            return exc
        else:
            self._learn(reply.names)
            self._last_error = None
            self.refreshes += 1
            return None
        finally:
            self._refreshing = None

    async def probe(self, *, limit: float) -> None:
        """The readiness probe: a store that can commit answers with the names it holds
        (no read of its database), one that cannot refuses (``contract.STORE_NOT_READY``)."""
        reply = await self._store.call(
            contract.STORE_TASK_NAMES,
            pools_pb2.TaskNamesRequest(max_age_ms=contract.TASK_NAMES_HELD),
            timeout=limit,
        )
        self._learn(reply.names)

    def _learn(self, names: Iterable[str]) -> None:
        # Declared names are never forgotten (the store's table only grows), and one
        # store may hold fewer than another read: a union, never a replacement.
        self._store_names = self._store_names.union(names)
