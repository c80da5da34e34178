"""Server reflection in both versions on a real gateway: ``grpc.reflection.v1``
(what current tools ask first) and ``v1alpha``, asked by grpcurl and by a raw
v1 client."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2
from support import grpcurl

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

V1 = "grpc.reflection.v1.ServerReflection"
V1ALPHA = "grpc.reflection.v1alpha.ServerReflection"


def ask_v1(channel: grpc.Channel, request: reflection_pb2.ServerReflectionRequest) -> Any:
    """One request on the v1 method. The v1 messages are v1alpha's under another package,
    the same bytes on the wire: v1alpha's classes encode and decode them."""
    info = channel.stream_stream(
        f"/{V1}/ServerReflectionInfo",
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    (reply,) = list(info(iter([request]), timeout=10))
    return reply


def test_grpcurl_lists_and_calls_the_v1_reflection_service(cluster: Any) -> None:
    listed = grpcurl.list_services(cluster.target)
    assert {V1, V1ALPHA, "taskyard.v1.TaskService", "grpc.health.v1.Health"} <= set(listed), listed
    # grpcurl finds the v1 service's own description by reflection, then calls it.
    described = grpcurl.run_raw(["-plaintext", cluster.target, "describe", V1]).stdout
    assert "rpc ServerReflectionInfo ( stream .grpc.reflection.v1.ServerReflectionRequest )" in described
    reply = grpcurl.call(cluster.target, f"{V1}/ServerReflectionInfo", {"list_services": ""})
    services = {s["name"] for s in reply["listServicesResponse"]["service"]}
    assert {V1, "taskyard.v1.TaskService"} <= services


def test_a_v1_client_reads_the_api_descriptors(cluster: Any) -> None:
    with grpc.insecure_channel(cluster.target) as channel:
        listed = ask_v1(channel, reflection_pb2.ServerReflectionRequest(list_services=""))
        assert V1 in {s.name for s in listed.list_services_response.service}
        found = ask_v1(
            channel, reflection_pb2.ServerReflectionRequest(file_containing_symbol="taskyard.v1.TaskService")
        )
        files = [
            descriptor_pb2.FileDescriptorProto.FromString(raw)
            for raw in found.file_descriptor_response.file_descriptor_proto
        ]
        assert "taskyard/v1/task_service.proto" in {f.name for f in files}
        itself = ask_v1(channel, reflection_pb2.ServerReflectionRequest(file_containing_symbol=V1))
        (v1_file,) = [
            descriptor_pb2.FileDescriptorProto.FromString(raw)
            for raw in itself.file_descriptor_response.file_descriptor_proto
        ]
        assert (v1_file.name, v1_file.package) == (
            "grpc/reflection/v1/reflection.proto",
            "grpc.reflection.v1",
        )
        assert [m.input_type for m in v1_file.service[0].method] == [
            ".grpc.reflection.v1.ServerReflectionRequest"
        ]
