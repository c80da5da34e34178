"""Server reflection in both versions: ``grpc.reflection.v1`` and ``v1alpha``.

grpcio-reflection (1.76 here, and still at 1.85) implements only ``v1alpha``;
tools now ask ``v1`` first (grpcurl falls back, others fail). The two protocols
are the same messages under another package, field for field, so their bytes
on the wire are the same: the ``v1`` service is the ``v1alpha`` servicer
reached under the ``v1`` name, and the ``v1`` file's descriptor (for tools
that describe the reflection service itself) is ``v1alpha``'s, renamed.
"""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection, reflection_pb2

V1ALPHA_SERVICE = reflection.SERVICE_NAME
V1_PACKAGE = "grpc.reflection.v1"
V1_SERVICE = f"{V1_PACKAGE}.ServerReflection"
V1_FILE = "grpc/reflection/v1/reflection.proto"
SERVICE_NAMES = (V1_SERVICE, V1ALPHA_SERVICE)
METHOD = "ServerReflectionInfo"


def v1_file() -> descriptor_pb2.FileDescriptorProto:
    """``grpc/reflection/v1/reflection.proto``: the v1alpha file under the v1 package."""
    old = f".{reflection_pb2.DESCRIPTOR.package}."
    new = f".{V1_PACKAGE}."
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    proto.name, proto.package = V1_FILE, V1_PACKAGE
    proto.ClearField("options")  # v1alpha's language packages are not v1's
    for message in proto.message_type:
        for field in message.field:
            if field.type_name.startswith(old):
                field.type_name = new + field.type_name.removeprefix(old)
            # As protoc writes it (Python's generated copy leaves it out): JSON tools read it.
            head, *rest = field.name.split("_")
            field.json_name = head + "".join(part.capitalize() for part in rest)
    for service in proto.service:
        for method in service.method:
            method.input_type = new + method.input_type.removeprefix(old)
            method.output_type = new + method.output_type.removeprefix(old)
    return proto


def _register_v1_file(pool: descriptor_pool.DescriptorPool) -> None:
    try:
        pool.FindFileByName(V1_FILE)
    except KeyError:
        pool.AddSerializedFile(v1_file().SerializeToString())


def enable(service_names: Iterable[str], server: grpc.aio.Server) -> None:
    """Reflection of ``service_names`` and of itself, in both versions, on ``server``."""
    _register_v1_file(descriptor_pool.Default())
    names = (*service_names, *SERVICE_NAMES)
    reflection.enable_server_reflection(names, server)  # v1alpha
    servicer = reflection.aio.ReflectionServicer(names)  # type: ignore[attr-defined]
    handler = grpc.method_handlers_generic_handler(
        V1_SERVICE,
        {
            METHOD: grpc.stream_stream_rpc_method_handler(
                servicer.ServerReflectionInfo,
                request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
                response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
            )
        },
    )
    server.add_generic_rpc_handlers((handler,))
