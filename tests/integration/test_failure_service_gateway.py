"""FailureService at the gateway against a fake store: bad input is INVALID_ARGUMENT with
the field named and never reaches the store; good input reaches it checked (task ids
canonical) with the caller's name for the audit. The store's own answers (NOT_FOUND,
FAILED_PRECONDITION) are tested against the real store (test_dead_letters_store.py,
test_redrives_store.py) and end to end (tests/acceptance/test_redrive.py)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
import pytest_asyncio
from google.protobuf.timestamp_pb2 import Timestamp
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from integration.gateway_fakes import FAILURE_METHODS, GatewayEnv, gateway_env

from taskyard.bus.v1 import failures_pb2
from taskyard.core import contract
from taskyard.v1 import failure_service_pb2 as fs
from taskyard.v1 import failure_service_pb2_grpc

TASK = "0b0c8f3e-5d7a-4f0e-9a51-2f4d0c9a7b11"


@pytest_asyncio.fixture
async def gw() -> AsyncIterator[GatewayEnv]:
    async with gateway_env() as env:
        yield env


def stub(env: GatewayEnv) -> failure_service_pb2_grpc.FailureServiceStub:
    return failure_service_pb2_grpc.FailureServiceStub(env.channel)


def sent(env: GatewayEnv) -> list[tuple[contract.Method[Any, Any], Any]]:
    """The failure methods the store was asked, with their requests, in order."""
    by_kind = {m.kind: m for m in FAILURE_METHODS}
    return [(by_kind[k], r) for k, r in env.backend.store_requests if k in by_kind]


def fields(err: grpc.aio.AioRpcError) -> list[str]:
    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert status is not None
    bad = error_details_pb2.BadRequest()
    for d in status.details:
        if d.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            d.Unpack(bad)
    return [v.field for v in bad.field_violations]


async def refused(call: Callable[[], Any]) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call()
    return info.value


async def test_bad_input_is_refused_with_its_field_and_reaches_no_store(gw: GatewayEnv) -> None:
    s = stub(gw)
    group = fs.FailureFilter(group_id="g1")
    cases: list[tuple[Callable[[], Any], list[str]]] = [
        # An empty filter without all, on every call that acts on dead letters.
        (lambda: s.Redrive(fs.RedriveRequest(rate=10)), ["filter"]),
        (lambda: s.Redrive(fs.RedriveRequest(rate=10, dry_run=True)), ["filter"]),
        (lambda: s.ListFailures(fs.ListFailuresRequest()), ["filter"]),
        (lambda: s.PurgeDeadLetters(fs.PurgeDeadLettersRequest()), ["filter"]),
        # A rate of 0 or below (or above the limit), with every other fault in the same answer.
        (lambda: s.Redrive(fs.RedriveRequest(filter=group, rate=0)), ["rate"]),
        (lambda: s.Redrive(fs.RedriveRequest(filter=group, rate=-5)), ["rate"]),
        (lambda: s.Redrive(fs.RedriveRequest(filter=group, rate=10_001)), ["rate"]),
        (lambda: s.Redrive(fs.RedriveRequest(rate=0, note="x" * 1025)), ["filter", "rate", "note"]),
        (
            lambda: s.Redrive(fs.RedriveRequest(filter=fs.FailureFilter(task_ids=["x"]), rate=1)),
            ["filter.task_ids[0]"],
        ),
        # A time past google.protobuf.Timestamp's range is no instant (the store failed on it: INTERNAL).
        (
            lambda: s.PurgeDeadLetters(
                fs.PurgeDeadLettersRequest(filter=fs.FailureFilter(failed_after=Timestamp(seconds=10**15)))
            ),
            ["filter.failed_after"],
        ),
        (
            lambda: s.Redrive(
                fs.RedriveRequest(filter=fs.FailureFilter(failed_before=Timestamp(seconds=-(10**15))), rate=1)
            ),
            ["filter.failed_before"],
        ),
        # Below the least rate a redrive may have: one that would barely ever step.
        (lambda: s.Redrive(fs.RedriveRequest(filter=group, rate=1e-9)), ["rate"]),
        (lambda: s.Redrive(fs.RedriveRequest(filter=group, rate=0.009)), ["rate"]),
        (lambda: s.ListFailures(fs.ListFailuresRequest(filter=group, page_size=1001)), ["page_size"]),
        (lambda: s.ListFailureGroups(fs.ListFailureGroupsRequest(page_size=-1)), ["page_size"]),
        (lambda: s.GetRedrive(fs.GetRedriveRequest()), ["id"]),
        (lambda: s.PauseRedrive(fs.PauseRedriveRequest(id="a/b")), ["id"]),
        (
            lambda: s.ListRedriveItems(fs.ListRedriveItemsRequest(id="r1", page_token="not a token")),
            ["page_token"],
        ),
    ]
    for call, expected in cases:
        err = await refused(call)
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, err.details()
        assert fields(err) == expected, err.details()
    assert sent(gw) == []


async def test_good_input_reaches_the_store_checked_with_the_callers_name(gw: GatewayEnv) -> None:
    s = stub(gw)
    await s.ListFailureGroups(fs.ListFailureGroupsRequest())  # an empty filter: every group
    f = fs.FailureFilter(queue="emails", task_ids=[TASK.upper()])
    await s.Redrive(fs.RedriveRequest(filter=f, rate=200, dry_run=True, note="why"))
    await s.Redrive(fs.RedriveRequest(filter=fs.FailureFilter(all=True), rate=0.5))
    reply = await s.CancelRedrive(fs.CancelRedriveRequest(id="r-1"))
    assert reply.redrive.id == "r-1"
    methods = [m for m, _ in sent(gw)]
    assert methods == [
        contract.STORE_FAILURE_GROUPS,
        contract.STORE_REDRIVE_CREATE,
        contract.STORE_REDRIVE_CREATE,
        contract.STORE_REDRIVE_CONTROL,
    ]
    dry, real = sent(gw)[1][1], sent(gw)[2][1]
    assert list(dry.request.filter.task_ids) == [TASK]  # canonical
    assert dry.request.dry_run and dry.request.rate == 200 and dry.request.note == "why"
    assert dry.created_by == real.created_by == "dev"  # no tokens: a loopback gateway
    assert real.request.filter.all and not real.request.dry_run


async def test_created_by_is_the_tokens_name_and_a_redrive_takes_admin(tmp_path: Path) -> None:
    admin, reader = (f"{who}-{secrets.token_urlsafe(24)}" for who in ("admin", "read"))
    path = tmp_path / "tokens"
    path.write_text(
        f"sha256:{hashlib.sha256(admin.encode()).hexdigest()}  admin  ops-oncall\n{reader}  read  dashboard\n"
    )
    async with gateway_env(grpc_tokens_file=str(path)) as env:
        s = stub(env)
        as_reader = (("authorization", f"Bearer {reader}"),)
        as_admin = (("authorization", f"Bearer {admin}"),)
        request = fs.RedriveRequest(filter=fs.FailureFilter(group_id="g1"), rate=5, dry_run=True)
        err = await refused(lambda: s.Redrive(request, metadata=as_reader))
        assert err.code() == grpc.StatusCode.PERMISSION_DENIED
        await s.ListFailureGroups(fs.ListFailureGroupsRequest(), metadata=as_reader)
        await s.Redrive(request, metadata=as_admin)
        creates = env.backend.store_asked(contract.STORE_REDRIVE_CREATE)
        assert [r.created_by for r in creates] == ["ops-oncall"]


async def test_the_async_client_sends_what_it_is_given(gw: GatewayEnv) -> None:
    from taskyard.client import AsyncClient, FailureFilter

    async with AsyncClient(gw.target) as client:
        page = await client.failures.groups(FailureFilter(queue="emails"), page_size=5)
        assert page.items == () and page.next_page_token == ""
        dry = await client.failures.redrive(FailureFilter(task_ids=[TASK]), rate=3, dry_run=True, note="n")
        assert dry.redrive is None and dry.matched == 0
        redrive = await client.failures.pause_redrive("r-2")
        assert redrive.id == "r-2"
        assert await client.failures.purge(FailureFilter(all=True), dry_run=True) == 0
    groups, create, control, purge = (r for _, r in sent(gw))
    assert groups.request.filter.queue == "emails" and groups.request.page_size == 5
    assert (list(create.request.filter.task_ids), create.request.rate, create.request.note) == (
        [TASK],
        3,
        "n",
    )
    assert create.request.dry_run and control.op == failures_pb2.REDRIVE_OP_PAUSE
    assert purge.request.filter.all and purge.request.dry_run
