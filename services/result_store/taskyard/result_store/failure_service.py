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
from .appliers import Applier, Method
from .reads import dead_letters, redrives
from .writes import dead_letter_purge
from .writes import redrives as redrive_writes

if TYPE_CHECKING:
    from .store import ResultStore


def appliers() -> list[tuple[Method, Applier]]:
    """The write kinds of redrives, for the group committer: a step."""
    return [(contract.STORE_REDRIVE_STEP, redrive_writes.apply_steps)]


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

    async def create_redrive(
        self, req: bus.CreateRedriveRequest, request_id: str = ""
    ) -> bus.CreateRedriveReply:
        """``request_id``: carried out once per database (bus_requests.py)."""
        return await self.store._read(redrive_writes.create_redrive(self.store.pool, req, request_id))

    async def control_redrive(
        self, req: bus.RedriveControlRequest, request_id: str = ""
    ) -> bus.RedriveControlReply:
        return await self.store._read(redrive_writes.control_redrive(self.store.pool, req, request_id))

    async def list_redrives(self, req: bus.RedriveListRequest) -> bus.RedriveListReply:
        return await self.store._read(redrives.list_redrives(self.store.pool, self.store.stats, req))

    async def active_redrives(self, req: bus.ActiveRedrivesRequest) -> bus.ActiveRedrivesReply:
        return await self.store._read(redrives.active_redrives(self.store.pool, self.store.stats, req))

    async def step(self, req: bus.RedriveStepRequest) -> bus.RedriveStepReply:
        redrive_writes.check_step(req)
        reply = await self.store._submit(contract.STORE_REDRIVE_STEP, req, req.limit)
        return redrive_writes.step_reply(req, reply)

    def routes(self) -> list[rpc.Route[Any]]:
        return [
            rpc.serve_call(contract.STORE_FAILURE_GROUPS, self.groups),
            rpc.serve_call(contract.STORE_DEAD_LETTERS, self.dead_letters),
            rpc.serve(contract.STORE_PURGE_DEAD_LETTERS, bus_requests.once(self.purge)),
            rpc.serve(contract.STORE_REDRIVE_CREATE, bus_requests.once(self.create_redrive)),
            rpc.serve(contract.STORE_REDRIVE_CONTROL, bus_requests.once(self.control_redrive)),
            rpc.serve_call(contract.STORE_REDRIVE_LIST, self.list_redrives),
            rpc.serve_call(contract.STORE_REDRIVE_STEP, self.step),
            rpc.serve_call(contract.STORE_REDRIVES_ACTIVE, self.active_redrives),
        ]
