"""What a lane relays of a submission from anyone but a gateway.

A gateway has checked every record it submits (``core.validation``), so the
result-store takes the args and kwargs a scheduler relays without decoding them
again, when the bus says the insert came from a scheduler (keys bound to roles,
``core.roles``). The other senders of a lane's Submit, worker pools submitting a
task's children, are checked here instead, before anything is relayed; and what
is relayed of theirs is the SubmitRequest alone: a lane passes a submission's
bytes on as the store's InsertTasksRequest, whose other fields (a pool, leases,
their length) only the scheduler may set.
"""

from __future__ import annotations

from taskyard.bus.v1 import dispatch_pb2
from taskyard.core import roles, rpc
from taskyard.core import validation as rules


def checked(payload: bytes) -> bytes:
    """``payload`` to relay: a gateway's as it came, unread; anyone else's without
    the fields a SubmitRequest does not have, once its records' args and kwargs
    meet the rules (else INVALID_ARGUMENT)."""
    if rpc.sender_role() == roles.GATEWAY:
        return payload
    request = dispatch_pb2.SubmitRequest.FromString(payload)
    found: list[rules.Violation] = []
    for i, rec in enumerate(request.tasks):
        rules.check_payloads(found, rec, path=f"tasks[{i}]", fields=rules.RECORD_FIELDS)
    if found:
        raise rules.invalid(found)
    request.DiscardUnknownFields()
    return request.SerializeToString()
