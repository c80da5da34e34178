"""The dashboard's way into the gRPC API: a channel to the gateway's own server,
generic unary calls in the API's JSON mapping, and gRPC errors as HTTP answers."""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

import grpc
from google.protobuf import json_format, message, message_factory
from google.protobuf.descriptor import MethodDescriptor
from google.rpc import error_details_pb2, status_pb2

from taskyard.core import tenants
from taskyard.v1 import (
    event_service_pb2,
    failure_service_pb2,
    limit_service_pb2,
    queue_service_pb2,
    schedule_service_pb2,
    task_service_pb2,
    tenant_service_pb2,
)

# The services the JSON API exposes; health and reflection stay gRPC-only.
SERVICES = {
    d.full_name: d
    for d in (
        task_service_pb2.DESCRIPTOR.services_by_name["TaskService"],
        queue_service_pb2.DESCRIPTOR.services_by_name["QueueService"],
        schedule_service_pb2.DESCRIPTOR.services_by_name["ScheduleService"],
        limit_service_pb2.DESCRIPTOR.services_by_name["LimitService"],
        event_service_pb2.DESCRIPTOR.services_by_name["EventService"],
        failure_service_pb2.DESCRIPTOR.services_by_name["FailureService"],
        tenant_service_pb2.DESCRIPTOR.services_by_name["TenantService"],
    )
}
# The query parameter with which an operator's page shows one tenant's.
TENANT_PARAMETER = "tenant"
# A unary call from a page: longer than a CancelTask's wait for its task to stop.
CALL_TIMEOUT = 30.0
# grpc.StatusCode -> the HTTP status a page gets.
HTTP_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.FAILED_PRECONDITION: 412,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}


class UnknownMethod(LookupError):
    """No such method in the API, or not one the JSON API serves this way."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Method:
    path: str
    descriptor: MethodDescriptor
    request_type: type[message.Message]
    response_type: type[message.Message]

    @property
    def streaming(self) -> bool:
        return bool(self.descriptor.server_streaming)


def method(service: str, name: str) -> Method:
    found = SERVICES.get(service)
    descriptor = found.methods_by_name.get(name) if found is not None else None
    if descriptor is None or descriptor.client_streaming:
        raise UnknownMethod(f"{service}/{name}")
    return Method(
        path=f"/{service}/{name}",
        descriptor=descriptor,
        request_type=message_factory.GetMessageClass(descriptor.input_type),
        response_type=message_factory.GetMessageClass(descriptor.output_type),
    )


def to_json(msg: message.Message) -> dict[str, Any]:
    return json_format.MessageToDict(msg)


def parse(method: Method, body: Mapping[str, Any]) -> message.Message:
    """The request from its JSON mapping; ``json_format.ParseError`` when it does not fit."""
    return json_format.ParseDict(dict(body), method.request_type())


def metadata(authorization: str | None, tenant: str | None = None) -> Sequence[tuple[str, str]]:
    """The browser's ``Authorization`` header, forwarded as is: the gateway judges it;
    and the tenant an operator's page picked (``?tenant=``), as ``taskyard-tenant``."""
    out = [("authorization", authorization)] if authorization else []
    if tenant:
        out.append((tenants.METADATA_KEY, tenant))
    return tuple(out)


def page_tenant(query: Mapping[str, str]) -> str | None:
    """The tenant a page asks to see (``?tenant=NAME``; an operator's tenant picker)."""
    return query.get(TENANT_PARAMETER) or None


def error_body(error: grpc.aio.AioRpcError) -> tuple[int, dict[str, Any]]:
    """HTTP status and JSON of a gRPC error: code, message, and the ErrorInfo reason
    and field violations of its google.rpc.Status details when it has them."""
    code = error.code()
    body: dict[str, Any] = {"code": code.name, "message": error.details() or code.name}
    trailers: Any = error.trailing_metadata() or ()  # grpc-stubs types it as one pair
    for key, value in trailers:
        if key != "grpc-status-details-bin" or not isinstance(value, bytes):
            continue
        status = status_pb2.Status.FromString(value)
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            bad = error_details_pb2.BadRequest()
            if detail.Unpack(info):
                body["reason"] = info.reason
                body["metadata"] = dict(info.metadata)
            elif detail.Unpack(bad):
                body["fieldViolations"] = [to_json(v) for v in bad.field_violations]
    return HTTP_STATUS.get(code, 500), body


class Loopback:
    """A private unix socket on the gateway's gRPC server and a channel to it.

    A socket in a fresh 0700 directory, not the TCP port: the port may demand TLS
    or client certificates the gateway has no credentials for, and the calls still
    pass every interceptor of the server (tokens, scopes, limits, metrics)."""

    def __init__(self, server: grpc.aio.Server, *, max_message_bytes: int) -> None:
        self._dir = tempfile.mkdtemp(prefix="taskyard-dashboard-")
        self.address = f"unix:{os.path.join(self._dir, 'grpc.sock')}"
        if server.add_insecure_port(self.address) == 0:
            raise RuntimeError(f"cannot listen on {self.address}")
        options = [
            ("grpc.max_receive_message_length", max_message_bytes),
            ("grpc.max_send_message_length", max_message_bytes),
        ]
        self.channel = grpc.aio.insecure_channel(self.address, options=options)

    def unary(self, m: Method) -> grpc.aio.UnaryUnaryMultiCallable[Any, Any]:
        return self.channel.unary_unary(
            m.path,
            request_serializer=m.request_type.SerializeToString,
            response_deserializer=m.response_type.FromString,
        )

    def stream(self, m: Method) -> grpc.aio.UnaryStreamMultiCallable[Any, Any]:
        return self.channel.unary_stream(
            m.path,
            request_serializer=m.request_type.SerializeToString,
            response_deserializer=m.response_type.FromString,
        )

    async def close(self) -> None:
        await self.channel.close(None)
        shutil.rmtree(self._dir, ignore_errors=True)
