"""A gRPC call's end as grpc raises it, for client code tested without a gateway."""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2


class Ended(grpc.RpcError):
    """A stream's end: a code, and ErrorInfo (the reason) in the trailers."""

    def __init__(self, code: grpc.StatusCode, reason: str = "") -> None:
        self._code = code
        self._reason = reason

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return "ended"

    def trailing_metadata(self) -> Any:
        if not self._reason:
            return ()
        detail = any_pb2.Any()
        detail.Pack(error_details_pb2.ErrorInfo(reason=self._reason, domain="taskyard.dev"))
        status = status_pb2.Status(code=self._code.value[0], message="ended", details=[detail])
        return (("grpc-status-details-bin", status.SerializeToString()),)
