"""The dashboard's HTTP pieces without a gateway: query parameters to requests, SSE
framing, gRPC errors as HTTP answers, and the rules every request passes."""

from __future__ import annotations

import grpc
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from multidict import MultiDict

from taskyard.gateway.dashboard import calls, streams
from taskyard.gateway.dashboard.site import guard
from taskyard.v1 import event_service_pb2 as pub
from taskyard.v1 import task_pb2


def test_query_parameters_become_the_request_by_proto_or_json_name() -> None:
    query = MultiDict(
        [("kinds", "EVENT_KIND_TASK"), ("queues", "a"), ("queues", "b"), ("taskNames", "add"), ("start", "2")]
    )
    body = streams.query_request(streams.WATCH, query, query.getall)
    request = calls.parse(streams.WATCH, body)
    assert isinstance(request, pub.WatchEventsRequest)
    assert list(request.kinds) == [pub.EVENT_KIND_TASK]
    assert list(request.queues) == ["a", "b"] and list(request.task_names) == ["add"]
    assert request.start == pub.WATCH_START_OLDEST


def test_each_event_is_a_message_with_its_cursor_then_how_far_the_stream_read() -> None:
    response = pub.WatchEventsResponse(
        events=[pub.Event(cursor="c1", type="task.queued", state=task_pb2.TASK_STATE_QUEUED)], cursor="c9"
    )
    messages = list(streams.watch_messages(response))
    assert [(kind, ident) for kind, ident, _ in messages] == [("event", "c1"), ("cursor", "c9")]
    assert messages[0][2]["state"] == "TASK_STATE_QUEUED"
    assert streams.encode("event", "c1", {"a": 1}) == b'event: event\nid: c1\ndata: {"a":1}\n\n'


def test_a_grpc_error_keeps_its_code_reason_and_field_violations() -> None:
    info, bad = any_pb2.Any(), any_pb2.Any()
    info.Pack(error_details_pb2.ErrorInfo(reason="SCOPE_MISSING", domain="taskyard.dev"))
    bad.Pack(error_details_pb2.BadRequest(field_violations=[{"field": "id", "description": "not a UUID"}]))
    status = status_pb2.Status(code=7, message="no", details=[info, bad])
    error = grpc.aio.AioRpcError(
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.aio.Metadata(),
        grpc.aio.Metadata(("grpc-status-details-bin", status.SerializeToString())),
        details="PauseQueue needs the scope 'admin'",
        debug_error_string="",
    )
    http_status, body = calls.error_body(error)
    assert http_status == 403
    assert body["code"] == "PERMISSION_DENIED" and body["reason"] == "SCOPE_MISSING"
    assert body["fieldViolations"] == [{"field": "id", "description": "not a UUID"}]


async def test_foreign_hosts_forms_and_other_origins_are_refused() -> None:
    async def ok(_request: web.Request) -> web.Response:
        return web.json_response({})

    app = web.Application(middlewares=[guard(loopback_only=True)])
    app.router.add_route("*", "/x", ok)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        port = client.port
        assert (await client.get("/x")).status == 200
        assert (await client.get("/x", headers={"Host": "evil.example"})).status == 421
        assert (await client.post("/x", data="a=1")).status == 415
        origin = {"Origin": "http://evil.example", "Content-Type": "application/json"}
        assert (await client.post("/x", data="{}", headers=origin)).status == 403
        same = {"Origin": f"http://127.0.0.1:{port}", "Content-Type": "application/json"}
        reply = await client.post("/x", data="{}", headers=same)
        assert reply.status == 200 and reply.headers["X-Content-Type-Options"] == "nosniff"
