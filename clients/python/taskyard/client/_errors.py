"""The client's error: a gRPC status with its ``google.rpc.Status`` details parsed."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2

STATUS_DETAILS_KEY = "grpc-status-details-bin"


@dataclasses.dataclass(frozen=True, kw_only=True)
class FieldViolation:
    field: str
    description: str
    reason: str = ""


class TaskyardError(Exception):
    """A failed call. ``code`` is the gRPC status code; ``reason`` the ErrorInfo reason
    (e.g. ``UNKNOWN_TASK_NAME``); ``violations`` every bad field of an INVALID_ARGUMENT."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        *,
        reason: str = "",
        domain: str = "",
        metadata: Mapping[str, str] | None = None,
        violations: tuple[FieldViolation, ...] = (),
    ) -> None:
        super().__init__(f"{code.name}: {message}" + (f" [{reason}]" if reason else ""))
        self.code = code
        self.message = message
        self.reason = reason
        self.domain = domain
        self.metadata: Mapping[str, str] = dict(metadata or {})
        self.violations = violations

    def __repr__(self) -> str:
        return f"TaskyardError({self.code.name}, {self.reason!r}, {self.message!r})"

    @classmethod
    def from_rpc_error(cls, err: grpc.RpcError) -> TaskyardError:
        code: grpc.StatusCode = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
        message: str = (err.details() if hasattr(err, "details") else "") or ""
        trailers: Any = err.trailing_metadata() if hasattr(err, "trailing_metadata") else None
        raw: bytes | None = None
        for key, value in trailers or ():
            if key == STATUS_DETAILS_KEY and isinstance(value, bytes):
                raw = value
        if raw is None:
            return cls(code, message)
        status = status_pb2.Status()
        try:
            status.ParseFromString(raw)
        except Exception:
            return cls(code, message)
        reason = domain = ""
        metadata: dict[str, str] = {}
        violations: list[FieldViolation] = []
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            bad = error_details_pb2.BadRequest()
            if detail.Unpack(info):
                reason, domain, metadata = info.reason, info.domain, dict(info.metadata)
            elif detail.Unpack(bad):
                violations.extend(
                    FieldViolation(field=v.field, description=v.description, reason=v.reason)
                    for v in bad.field_violations
                )
        return cls(
            code,
            status.message or message,
            reason=reason,
            domain=domain,
            metadata=metadata,
            violations=tuple(violations),
        )
