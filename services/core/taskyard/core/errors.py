"""Errors that cross service boundaries.

A ``TaskyardError`` travels inside the NNG reply envelope as ``bus.v1.Error``
and leaves the gateway as a ``google.rpc.Status`` with ErrorInfo (and
BadRequest when there are field violations). ``code`` is a gRPC status code.
"""

from __future__ import annotations

import dataclasses
import enum

from taskyard.bus.v1 import envelope_pb2

ERROR_DOMAIN = "taskyard.dev"


class Code(enum.Enum):
    """The gRPC status codes, by grpc.StatusCode's names and values, without
    importing grpc: only the gateway speaks gRPC (it maps these by value), and the
    grpc package would cost every other process, each worker too, 16 MiB."""

    OK = (0, "ok")
    CANCELLED = (1, "cancelled")
    UNKNOWN = (2, "unknown")
    INVALID_ARGUMENT = (3, "invalid argument")
    DEADLINE_EXCEEDED = (4, "deadline exceeded")
    NOT_FOUND = (5, "not found")
    ALREADY_EXISTS = (6, "already exists")
    PERMISSION_DENIED = (7, "permission denied")
    RESOURCE_EXHAUSTED = (8, "resource exhausted")
    FAILED_PRECONDITION = (9, "failed precondition")
    ABORTED = (10, "aborted")
    OUT_OF_RANGE = (11, "out of range")
    UNIMPLEMENTED = (12, "unimplemented")
    INTERNAL = (13, "internal")
    UNAVAILABLE = (14, "unavailable")
    DATA_LOSS = (15, "data loss")
    UNAUTHENTICATED = (16, "unauthenticated")


@dataclasses.dataclass(frozen=True, kw_only=True)
class FieldViolation:
    field: str
    description: str


class TaskyardError(Exception):
    def __init__(
        self,
        code: Code,
        reason: str,
        message: str,
        violations: tuple[FieldViolation, ...] = (),
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.violations = violations

    def to_proto(self) -> envelope_pb2.Error:
        return envelope_pb2.Error(
            code=self.code.value[0],
            message=self.message,
            reason=self.reason,
            violations=[
                envelope_pb2.FieldViolation(field=v.field, description=v.description) for v in self.violations
            ],
        )

    @classmethod
    def from_proto(cls, err: envelope_pb2.Error) -> TaskyardError:
        code = _CODES.get(err.code, Code.UNKNOWN)
        return cls(
            code,
            err.reason,
            err.message,
            tuple(FieldViolation(field=v.field, description=v.description) for v in err.violations),
        )

    def __repr__(self) -> str:
        return f"TaskyardError({self.code.name}, {self.reason!r}, {self.message!r})"


_CODES = {c.value[0]: c for c in Code}


def invalid(violations: list[FieldViolation], message: str = "") -> TaskyardError:
    text = message or "; ".join(f"{v.field}: {v.description}" for v in violations[:5])
    return TaskyardError(Code.INVALID_ARGUMENT, "INVALID_ARGUMENT", text, tuple(violations))


def not_found(what: str, ident: str) -> TaskyardError:
    return TaskyardError(Code.NOT_FOUND, f"{what.upper()}_NOT_FOUND", f"{what} {ident} not found")


def unavailable(message: str) -> TaskyardError:
    return TaskyardError(Code.UNAVAILABLE, "BACKEND_UNAVAILABLE", message)


def gateway_stopping(then: str) -> TaskyardError:
    """A stream the gateway ends at its stop; ``then``: how the client continues elsewhere."""
    return TaskyardError(Code.UNAVAILABLE, "GATEWAY_STOPPING", f"this gateway is stopping; {then}")


def deadline(message: str) -> TaskyardError:
    return TaskyardError(Code.DEADLINE_EXCEEDED, "BACKEND_TIMEOUT", message)


def internal(message: str) -> TaskyardError:
    return TaskyardError(Code.INTERNAL, "INTERNAL", message)
