"""What the leading scheduler says of flow control now (FLOW_GATES on a lane port):
the gate that holds a queued task, and the live usage of limits.

Only the leader knows it, and only while it answers: this is asked with a short
timeout, and no answer is None (a read shows what the store holds without it,
an explanation falls back to what the store's facts say).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from taskyard.bus.v1 import flow_pb2
from taskyard.core import contract, errors, rpc

log = logging.getLogger(__name__)

# Seconds to wait for the scheduler's answer: a read must not hang on a failover.
TIMEOUT = 0.5
# Task ids per request (flow.proto).
MAX_TASK_IDS = 100
# Every limit's usage.
ALL_LIMITS = "*"


async def ask(
    lane: rpc.Caller,
    *,
    task_ids: Sequence[str] = (),
    limits: Sequence[str] = (),
    timeout: float = TIMEOUT,  # noqa: ASYNC109 - a per-request RPC limit
) -> flow_pb2.FlowGatesReply | None:
    """The scheduler's reply, or None when it did not answer in time (or refused)."""
    request = flow_pb2.FlowGatesRequest(task_ids=task_ids[:MAX_TASK_IDS], limits=limits)
    try:
        return await lane.call(contract.FLOW_GATES, request, timeout=timeout)
    except errors.TaskyardError as exc:
        log.debug("no flow gates from the scheduler: %s", exc)
        return None
