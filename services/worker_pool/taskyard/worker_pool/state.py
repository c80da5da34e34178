"""What the parts of the pool manager share, each as a small object of its own.

- ``PoolState``: the pool's identity and lifecycle (who it is, what it takes,
  whether it is stopping), read by every part and changed by the manager alone.
- ``Outbox``: the report gathered between two turns of the report loop; the
  worker processes and their supervision add to it, the report relay takes it.
"""

from __future__ import annotations

import asyncio
import logging

from taskyard.bus.v1 import dispatch_pb2
from taskyard.core import ids
from taskyard.core.config import PoolSettings
from taskyard.core.states import WorkerState
from taskyard.core.tenants import DEFAULT_TENANT_NAME
from taskyard.worker_pool.contact import StoreContact

log = logging.getLogger("taskyard.worker_pool.manager")  # one logger name for the manager process

_STOPPING = (WorkerState.DRAINING, WorkerState.STOPPING, WorkerState.STOPPED)


class PoolState:
    def __init__(self, settings: PoolSettings, pool_id: str | None = None) -> None:
        self.pool_id = pool_id or ids.new_instance_id("pool")
        self.state = WorkerState.INIT
        self.concurrency = max(1, settings.concurrency)
        self.capacity = max(1, settings.workers) * self.concurrency
        self.task_names: list[str] = []
        # The tenants whose tasks it runs, as the scheduler names them ("" the
        # default tenant); empty: every tenant's (TASKYARD_POOL_TENANTS).
        self.tenants: list[str] = ["" if t == DEFAULT_TENANT_NAME else t for t in settings.pool_tenants]
        # What the pool registers and announces (the bound PAIR port on the advertise host).
        self.pair_address = ""
        # The last reports are being handed over: no worker is respawned any more,
        # and the report loop ends once nothing is left to send.
        self.closing = False
        # Whether its requests reach a result-store (contact.py): no new work while not.
        self.contact = StoreContact(patience=settings.lease_seconds / 4)

    def accepting(self) -> bool:
        # STARTING too: a scheduler may dispatch as soon as it dials our PAIR,
        # before its RegisterReply has reached us.
        return self.state in (WorkerState.STARTING, WorkerState.RUNNING)

    def stopping(self) -> bool:
        """Draining or later: a worker that exits now was stopped, it did not die."""
        return self.state in _STOPPING


class Outbox:
    def __init__(self) -> None:
        self.report = dispatch_pb2.PoolReport()
        # Set when ``report`` holds news (the report loop waits on it).
        self.news = asyncio.Event()
        # Whether the scheduler's slot notice is due (a slot or the pool's state
        # changed); a worker's start report alone is news for the store only.
        self.notice_wanted = False

    def slots_changed(self) -> None:
        self.notice_wanted = True
        self.news.set()

    def take(self) -> dispatch_pb2.PoolReport:
        """The gathered report; the next one starts empty."""
        report, self.report = self.report, dispatch_pb2.PoolReport()
        return report

    def take_notice(self) -> bool:
        """Whether a slot notice is due; it is not any more."""
        notice, self.notice_wanted = self.notice_wanted, False
        return notice
