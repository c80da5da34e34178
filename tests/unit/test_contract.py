"""The internal contract (core.contract): every kind declared once, and a route or a
call that pairs the wrong request/reply types refused — by mypy for a call, and by
the Responder at start-up for a handler."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from mypy import api as mypy_api

from taskyard.bus.v1 import envelope_pb2, tasks_pb2
from taskyard.core import contract, rpc

ROOT = Path(__file__).resolve().parents[2]


def test_every_kind_is_declared_exactly_once() -> None:
    kinds = {v for v in envelope_pb2.Kind.values() if v != envelope_pb2.KIND_UNSPECIFIED}
    assert set(contract.METHODS) | set(contract.STREAMS) == kinds
    assert not set(contract.METHODS) & set(contract.STREAMS)
    for kind, method in contract.METHODS.items():
        assert method.kind == kind
        assert method.request.DESCRIPTOR.full_name.startswith("taskyard.bus.v1.")


async def _get(req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope) -> tasks_pb2.GetTasksReply:
    return tasks_pb2.GetTasksReply()


async def _takes_the_wrong_request(
    req: tasks_pb2.ListTasksRequest, env: envelope_pb2.Envelope
) -> tasks_pb2.GetTasksReply:
    return tasks_pb2.GetTasksReply()


async def _returns_the_wrong_reply(
    req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope
) -> tasks_pb2.ListTasksReply:
    return tasks_pb2.ListTasksReply()


def _responder(tmp_path: Path, routes: list[rpc.Route[Any] | rpc.RawRoute]) -> rpc.Responder:
    return rpc.Responder(f"ipc://{tmp_path}/contract.sock", routes, max_message_bytes=1 << 16)


def test_a_matching_handler_is_served(tmp_path: Path) -> None:
    _responder(tmp_path, [rpc.serve(contract.STORE_GET, _get)]).close()


@pytest.mark.parametrize(
    ("handler", "names"),
    [
        (_takes_the_wrong_request, "takes ListTasksRequest"),
        (_returns_the_wrong_reply, "returns ListTasksReply"),
    ],
)
def test_a_handler_pairing_other_types_is_refused_at_start_up(
    tmp_path: Path, handler: object, names: str
) -> None:
    with pytest.raises(TypeError, match=names):
        _responder(tmp_path, [rpc.serve(contract.STORE_GET, handler)])  # type: ignore[arg-type]


def test_a_method_not_from_the_contract_is_refused(tmp_path: Path) -> None:
    forged = contract.Method(
        service=contract.STORE,
        name="GetTasks",
        kind=envelope_pb2.KIND_STORE_GET,
        request=tasks_pb2.GetTasksRequest,
        reply=tasks_pb2.ListTasksReply,
    )
    with pytest.raises(TypeError, match="not the contract's method"):
        _responder(tmp_path, [rpc.serve(forged, _returns_the_wrong_reply)])


def test_a_method_served_twice_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="served twice"):
        _responder(tmp_path, [rpc.serve(contract.STORE_GET, _get), rpc.serve(contract.STORE_GET, _get)])


def test_mypy_rejects_a_call_with_the_wrong_request_and_a_wrong_reply_type(tmp_path: Path) -> None:
    snippet = tmp_path / "wrong_pairing.py"
    snippet.write_text(
        textwrap.dedent(
            """
            from taskyard.bus.v1 import tasks_pb2
            from taskyard.core import contract, rpc

            async def wrong(requester: rpc.Requester) -> None:
                await requester.call(contract.STORE_GET, tasks_pb2.ListTasksRequest())
                reply: tasks_pb2.ListTasksReply = await requester.call(
                    contract.STORE_GET, tasks_pb2.GetTasksRequest()
                )
            """
        )
    )
    out, _, status = mypy_api.run(
        ["--strict", "--no-error-summary", "--config-file", str(ROOT / "pyproject.toml"), str(snippet)]
    )
    assert status == 1, out
    lines = {int(line.split(":")[1]) for line in out.splitlines() if ": error: " in line}
    assert lines == {6, 8}, out  # the wrong request, then the wrong reply
