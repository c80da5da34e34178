"""Paused queues, as the scheduler follows them.

The store owns the truth (the ``queues`` table). The store's ``queue.paused``
/ ``queue.resumed`` events (Event.name = the queue) park or release the queue's
tasks in the lanes at once; since events are published without blocking and
can be dropped, every reload (start-up, tasks.available, the fallback poll)
first reconciles with the store's list of paused queues (``load``), so a lost
``queue.resumed`` costs one reload interval, not a restart. A paused queue's
tasks stay QUEUED in the store: nothing is lost, and the store's lease
statements refuse them too, so a dispatch racing the event leaves them queued.
"""

from __future__ import annotations

import logging

from taskyard.bus.v1 import event_pb2, queues_pb2, tenants_pb2
from taskyard.core import contract, rpc
from taskyard.scheduler.lanes import Lanes

log = logging.getLogger(__name__)


async def load(store: rpc.Caller, lanes: Lanes) -> bool:
    """Make ``lanes.paused`` the store's paused queues; True when tasks came back.

    Asks only for the names (``paused_only``: the queues table, no aggregate).
    A pause/resume event applied while the request was out is newer than the
    reply, so the reply is then dropped (the next reload reconciles again).
    """
    epoch = lanes.pause_epoch
    # Every tenant's paused queues (their names qualified): the suite's own read.
    request = queues_pb2.QueueStatusRequest(paused_only=True, scope=tenants_pb2.TenantScope(all=True))
    reply = await store.call(contract.STORE_QUEUE_STATUS, request)
    if lanes.pause_epoch != epoch:
        return False
    paused = set(reply.paused)
    for name in sorted(paused - lanes.paused):
        log.info("queue %r paused (from the store; %d waiting tasks parked)", name, lanes.pause(name))
    woke = False
    for name in sorted(lanes.paused - paused):
        back = lanes.resume(name)
        log.info("queue %r resumed (from the store; %d tasks back in the lanes)", name, back)
        woke = woke or back > 0
    return woke


def on_events(lanes: Lanes, batch: event_pb2.EventBatch) -> bool:
    """Apply queue.paused / queue.resumed; True when tasks came back (dispatch now)."""
    woke = False
    for ev in batch.events:
        if ev.type == "queue.paused":
            moved = lanes.pause(ev.name)
            log.info("queue %r paused (%d waiting tasks parked)", ev.name, moved)
        elif ev.type == "queue.resumed":
            back = lanes.resume(ev.name)
            log.info("queue %r resumed (%d tasks back in the lanes)", ev.name, back)
            woke = woke or back > 0
    return woke
