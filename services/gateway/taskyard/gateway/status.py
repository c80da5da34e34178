"""TaskyardError -> ``google.rpc.Status`` (ErrorInfo + BadRequest) on a gRPC abort."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import NoReturn, TypeVar

import grpc
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from taskyard.core import errors

R = TypeVar("R")
Context = grpc.aio.ServicerContext[object, object]

# Trailing metadata is limited (8 KiB by default on the client): details above
# this budget are dropped, and ErrorInfo.metadata says how many were left out.
DETAILS_BUDGET_BYTES = 4096


log = logging.getLogger(__name__)

# The reasons of errors.unavailable/deadline/internal: their messages are written for
# the suite's logs (an NNG address, an exception's text, a server path) and
# may come from any service behind the gateway. A client gets a fixed message for
# them, by code; the reason stays in ErrorInfo and the text goes to the gateway's log.
SERVER_TEXT_REASONS = frozenset({"BACKEND_UNAVAILABLE", "BACKEND_TIMEOUT", "INTERNAL"})
# Codes that only a failure on the server's side produces, whatever their reason.
SERVER_FAULT_CODES = frozenset({errors.Code.UNKNOWN, errors.Code.INTERNAL, errors.Code.DATA_LOSS})
PUBLIC_MESSAGES = {
    errors.Code.UNAVAILABLE: "the service is unavailable for now; retry with backoff",
    errors.Code.DEADLINE_EXCEEDED: "no answer in time from the services behind; retry with backoff",
}
INTERNAL_MESSAGE = "internal error; the server's log has the details"


def public_message(exc: errors.TaskyardError) -> str:
    """What a client may read of ``exc``: its own message unless it is server text (above)."""
    if exc.reason not in SERVER_TEXT_REASONS and exc.code not in SERVER_FAULT_CODES:
        return exc.message if len(exc.message) <= 1024 else exc.message[:1021] + "..."
    log.info("answered %s (%s) for: %s", exc.code.name, exc.reason, exc.message[:2000])
    return PUBLIC_MESSAGES.get(exc.code, INTERNAL_MESSAGE)


def to_status(exc: errors.TaskyardError) -> status_pb2.Status:
    """A ``google.rpc.Status`` for ``exc`` with an ErrorInfo and, if any, a BadRequest."""
    message = public_message(exc)
    status = status_pb2.Status(code=exc.code.value[0], message=message)
    info = error_details_pb2.ErrorInfo(reason=exc.reason or exc.code.name, domain=errors.ERROR_DOMAIN)
    violations = exc.violations
    if violations:
        info.metadata["violations"] = str(len(violations))
        info.metadata["field"] = violations[0].field[:256]
    bad = error_details_pb2.BadRequest()
    used = 0
    for v in violations:
        fv = error_details_pb2.BadRequest.FieldViolation(
            field=v.field[:512], description=v.description[:512], reason=getattr(v, "reason", "")
        )
        size = fv.ByteSize() + 4
        if used + size > DETAILS_BUDGET_BYTES:
            info.metadata["violations_omitted"] = str(len(violations) - len(bad.field_violations))
            break
        bad.field_violations.append(fv)
        used += size
    status.details.add().Pack(info)
    if bad.field_violations:
        status.details.add().Pack(bad)
    return status


async def abort(context: Context, exc: errors.TaskyardError) -> NoReturn:
    status = rpc_status.to_status(to_status(exc))
    await context.abort(status.code, status.details, trailing_metadata=status.trailing_metadata)
    raise AssertionError("unreachable: abort raises")  # pragma: no cover


async def abort_failed(context: Context, exc: Exception, log: logging.Logger, message: str) -> NoReturn:
    """Abort with ``exc``'s status. Called while ``exc`` is being handled: anything but
    a TaskyardError is a bug, logged with its traceback under ``message`` and answered
    INTERNAL without its text (which may hold what a client must not see)."""
    if isinstance(exc, errors.TaskyardError):
        await abort(context, exc)
    log.exception(message)
    await abort(context, errors.internal(f"internal error ({type(exc).__name__})"))


async def guard(context: Context, call: Callable[[], Awaitable[R]], log: logging.Logger, message: str) -> R:
    """``call``'s answer, or the RPC aborted with its error's status (``abort_failed``)."""
    try:
        return await call()
    except Exception as exc:
        await abort_failed(context, exc, log, message)
