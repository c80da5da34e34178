"""The JSON of tasks a lane receives from anyone but a gateway.

A gateway has checked every record it submits (``core.validation``), so the
result-store takes the args and kwargs a scheduler relays without decoding them
again, when the bus says the insert came from a scheduler (keys bound to roles,
``core.roles``). The other senders of a lane's Submit, worker pools submitting a
task's children, are checked here instead, before anything is relayed.
"""

from __future__ import annotations

from taskyard.bus.v1 import dispatch_pb2
from taskyard.core import roles, rpc
from taskyard.core import validation as rules


def check(payload: bytes) -> None:
    """Refuse (INVALID_ARGUMENT) a SubmitRequest from anyone but a gateway whose
    records' args or kwargs break the rules; a gateway's passes unread."""
    if rpc.sender_role() == roles.GATEWAY:
        return
    found: list[rules.Violation] = []
    for i, rec in enumerate(dispatch_pb2.SubmitRequest.FromString(payload).tasks):
        rules.check_payloads(found, rec, path=f"tasks[{i}]", fields=rules.RECORD_FIELDS)
    if found:
        raise rules.invalid(found)
