"""The store's side of FailureService: dead letters, their groups and purge, and
redrives (their creation, control, listing and paced steps), as bus routes
registered by ``ResultStore`` in a line.

Reads go to the pool. A redrive's creation and control run in their own
transaction on the pool (creation may write 100,000 items: never in the group
commit); a step re-queues tasks, so it goes through the committer like every
write of a task (writes/redrives.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from taskyard.bus.v1 import failures_pb2 as bus
from taskyard.core import contract, rpc

from . import bus_requests
from .reads import dead_letters
from .writes import dead_letter_purge

if TYPE_CHECKING:
    from .store import ResultStore


class FailureRoutes:
    def __init__(self, store: ResultStore) -> None:
        self.store = store

    async def groups(self, req: bus.FailureGroupsRequest) -> bus.FailureGroupsReply:
        return await self.store._read(
            dead_letters.list_failure_groups(self.store.pool, self.store.stats, req)
        )

    async def dead_letters(self, req: bus.DeadLettersRequest) -> bus.DeadLettersReply:
        return await self.store._read(dead_letters.list_dead_letters(self.store.pool, self.store.stats, req))

    async def purge(
        self, req: bus.PurgeDeadLettersRequest, request_id: str = ""
    ) -> bus.PurgeDeadLettersReply:
        """``request_id``: carried out once per database (bus_requests.py)."""
        return await self.store._read(dead_letter_purge.purge_dead_letters(self.store.pool, req, request_id))

    def routes(self) -> list[rpc.Route[Any]]:
        return [
            rpc.serve_call(contract.STORE_FAILURE_GROUPS, self.groups),
            rpc.serve_call(contract.STORE_DEAD_LETTERS, self.dead_letters),
            rpc.serve(contract.STORE_PURGE_DEAD_LETTERS, bus_requests.once(self.purge)),
        ]
