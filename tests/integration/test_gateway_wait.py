"""WaitTask over the real event stream (NNG PUB/SUB), GetTask and ListTasks paging."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest
import pytest_asyncio
from google.protobuf import duration_pb2
from integration.gateway_fakes import GatewayEnv, gateway_env
from support.waiting import wait_until_async

from taskyard.bus.v1 import event_pb2, task_record_pb2
from taskyard.core import contract
from taskyard.gateway.waiters import Waiters
from taskyard.v1 import task_pb2, task_service_pb2


@pytest_asyncio.fixture
async def gw() -> AsyncIterator[GatewayEnv]:
    async with gateway_env() as env:
        yield env


async def _submit(gw: GatewayEnv, name: str = "add") -> str:
    resp = await gw.stub.SubmitTask(task_service_pb2.SubmitTaskRequest(task=task_pb2.TaskSpec(name=name)))
    return resp.task.id


def _wait_req(task_id: str, seconds: float) -> task_service_pb2.WaitTaskRequest:
    d = duration_pb2.Duration()
    d.FromNanoseconds(int(seconds * 1e9))
    return task_service_pb2.WaitTaskRequest(id=task_id, timeout=d)


async def _until_waiting(gw: GatewayEnv, n: int = 1) -> None:
    await wait_until_async(lambda: len(gw.gateway.waiters) >= n, 5, f"{n} WaitTask call(s) to register")


async def test_wait_wakes_on_a_final_event(gw: GatewayEnv) -> None:
    task_id = await _submit(gw)
    waiting = asyncio.ensure_future(gw.stub.WaitTask(_wait_req(task_id, 20)))
    # Registered before its read of the store: every event from now on reaches it.
    await _until_waiting(gw)
    # A non-final event does not end the wait.
    decoded = gw.gateway.waiters.batches_decoded
    await gw.backend.publish(
        event_pb2.Event(type="task.started", task_id=task_id, state=task_pb2.TASK_STATE_RUNNING)
    )
    await wait_until_async(
        lambda: gw.gateway.waiters.batches_decoded > decoded, 5, "the gateway to decode the started event"
    )
    # Decoding a batch wakes its waiters then and there (waiters.py): not woken now, never by it.
    assert not any(w.event.is_set() for w in gw.gateway.waiters._by_id[task_id])
    assert not waiting.done()
    gw.backend.set_state(task_id, task_pb2.TASK_STATE_SUCCESS, result_json=b'{"sum":5}')
    # Unrelated events in the same batch are skipped.
    await gw.backend.publish(
        event_pb2.Event(type="task.succeeded", task_id="other", state=task_pb2.TASK_STATE_SUCCESS),
        event_pb2.Event(type="task.succeeded", task_id=task_id, state=task_pb2.TASK_STATE_SUCCESS),
    )
    resp = await asyncio.wait_for(waiting, 5)
    assert not resp.timed_out
    assert resp.task.state == task_pb2.TASK_STATE_SUCCESS
    assert resp.task.result.struct_value.fields["sum"].number_value == 5
    assert resp.task.finished_at.seconds > 0
    assert len(gw.gateway.waiters) == 0


async def test_wait_returns_at_once_when_final(gw: GatewayEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    from taskyard.gateway import service as gateway_service

    # Any re-read a minute away, the wait's limit half that: only its first read answers within 10 s.
    monkeypatch.setattr(gateway_service, "FIRST_RECHECK_UNREAD", 60.0)
    monkeypatch.setattr(gateway_service, "WAIT_RECHECK", 60.0)
    task_id = await _submit(gw)
    gw.backend.set_state(task_id, task_pb2.TASK_STATE_FAILURE)
    # As if the task had been submitted through another gateway: it reads first.
    gw.gateway.waiters.stream_gap()
    resp = await asyncio.wait_for(gw.stub.WaitTask(_wait_req(task_id, 30)), 10)
    assert not resp.timed_out and resp.task.state == task_pb2.TASK_STATE_FAILURE


async def test_a_lost_outcome_event_is_caught_by_an_early_reread(
    gw: GatewayEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    from taskyard.gateway import service as gateway_service

    # The later re-reads a minute away, the wait's limit half that: within 10 s, only the early one answers.
    monkeypatch.setattr(gateway_service, "WAIT_RECHECK", 60.0)
    task_id = await _submit(gw)
    # Final in the store, but its event never arrives.
    gw.backend.set_state(task_id, task_pb2.TASK_STATE_SUCCESS, result_json=b"5")
    resp = await asyncio.wait_for(gw.stub.WaitTask(_wait_req(task_id, 30)), 10)
    assert not resp.timed_out and resp.task.state == task_pb2.TASK_STATE_SUCCESS


async def test_wait_times_out(gw: GatewayEnv) -> None:
    task_id = await _submit(gw)
    waiting = asyncio.ensure_future(gw.stub.WaitTask(_wait_req(task_id, 2.0)))
    await _until_waiting(gw)
    # Not before its time, measured on the gateway's own clock: a wait of a quarter as
    # long, begun after it, times out first (one that ignored or misread its timeout would
    # not). The margin covers a loaded machine's delay in starting the second wait.
    ruler = await asyncio.wait_for(gw.stub.WaitTask(_wait_req(task_id, 0.5)), 10)
    assert ruler.timed_out and not waiting.done()
    resp = await asyncio.wait_for(waiting, 10)
    assert resp.timed_out and resp.task.state == task_pb2.TASK_STATE_QUEUED


async def test_wait_answers_before_the_client_deadline(gw: GatewayEnv) -> None:
    task_id = await _submit(gw)
    resp = await gw.stub.WaitTask(task_service_pb2.WaitTaskRequest(id=task_id), timeout=0.8)
    assert resp.timed_out


async def test_wait_validation(gw: GatewayEnv) -> None:
    task_id = await _submit(gw)
    for seconds in (301, -1):
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await gw.stub.WaitTask(_wait_req(task_id, seconds))
        assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await gw.stub.WaitTask(_wait_req("0190a6f4-0000-7000-8000-000000000000", 1))
    assert exc.value.code() == grpc.StatusCode.NOT_FOUND
    assert len(gw.gateway.waiters) == 0


async def test_get_and_list_pages(gw: GatewayEnv) -> None:
    ids = [await _submit(gw) for _ in range(5)]
    got = await gw.stub.GetTask(task_service_pb2.GetTaskRequest(id=ids[0].upper()))
    assert got.task.id == ids[0]
    seen: list[str] = []
    token = ""
    pages = 0
    while True:
        page = await gw.stub.ListTasks(task_service_pb2.ListTasksRequest(page_size=2, page_token=token))
        seen.extend(t.id for t in page.tasks)
        pages += 1
        token = page.next_page_token
        if not token:
            break
    assert pages == 3 and sorted(seen) == sorted(ids)
    req, *_ = gw.backend.store_asked(contract.STORE_LIST)
    assert req.limit == 2
    await gw.stub.ListTasks(task_service_pb2.ListTasksRequest())
    assert gw.backend.store_asked(contract.STORE_LIST)[-1].limit == 100


def _final(task_id: str) -> event_pb2.Event:
    return event_pb2.Event(
        type="task.succeeded",
        task_id=task_id,
        state=task_pb2.TASK_STATE_SUCCESS,
        record=task_record_pb2.TaskRecord(
            id=task_id, name="add", state=task_pb2.TASK_STATE_SUCCESS, result_json=b"5", attempt=1
        ),
    )


def _store_gets(gw: GatewayEnv) -> int:
    return len(gw.backend.store_asked(contract.STORE_GET))


async def test_waiting_on_a_task_submitted_here_reads_nothing_from_the_store(gw: GatewayEnv) -> None:
    task_id = await _submit(gw)
    before = _store_gets(gw)
    waiting = asyncio.ensure_future(gw.stub.WaitTask(_wait_req(task_id, 20)))
    await _until_waiting(gw)
    await gw.backend.publish(_final(task_id))
    resp = await asyncio.wait_for(waiting, 5)
    assert resp.task.state == task_pb2.TASK_STATE_SUCCESS and resp.task.result.number_value == 5
    assert _store_gets(gw) == before, "the final record rode on the event; no read was needed"


async def test_an_outcome_that_came_before_the_wait_is_not_missed(gw: GatewayEnv) -> None:
    task_id = await _submit(gw)
    await gw.backend.publish(_final(task_id))
    await wait_until_async(
        lambda: gw.gateway.waiters.recent_final(task_id), 5, "the gateway to see the final event"
    )
    before = _store_gets(gw)
    resp = await asyncio.wait_for(gw.stub.WaitTask(_wait_req(task_id, 20)), 5)
    assert resp.task.state == task_pb2.TASK_STATE_SUCCESS and not resp.timed_out
    assert _store_gets(gw) == before


async def test_a_late_failure_of_a_retried_task_is_checked_against_the_row(gw: GatewayEnv) -> None:
    """A task submitted here failed and was retried (through another gateway) before
    this one's stream showed the failure: that failure reaches a wait which read
    nothing, and answers only if the row still says so."""
    task_id = await _submit(gw)
    row = gw.backend.tasks[task_id]
    row.state, row.attempt = task_pb2.TASK_STATE_QUEUED, 2
    before = _store_gets(gw)
    waiting = asyncio.ensure_future(gw.stub.WaitTask(_wait_req(task_id, 20)))
    await _until_waiting(gw)
    failed = task_pb2.TASK_STATE_FAILURE
    await gw.backend.publish(
        event_pb2.Event(
            type="task.failed",
            task_id=task_id,
            state=failed,
            attempt=1,
            record=task_record_pb2.TaskRecord(id=task_id, name="add", state=failed, attempt=1),
        )
    )
    await wait_until_async(lambda: _store_gets(gw) > before, 5, "the wait to read the row")
    gw.backend.set_state(task_id, task_pb2.TASK_STATE_SUCCESS, result_json=b"5")
    final = _final(task_id)
    final.attempt = final.record.attempt = 2
    await gw.backend.publish(final)
    resp = await asyncio.wait_for(waiting, 5)
    assert (resp.task.state, resp.task.attempt) == (task_pb2.TASK_STATE_SUCCESS, 2)
    assert not resp.timed_out


def test_a_gap_in_the_event_stream_forgets_what_was_unfinished() -> None:
    waiters = Waiters()
    waiters.submitted(["a", "b"], losses=waiters.losses)
    assert waiters.known_unfinished("a")
    waiters.stream_gap()
    assert not waiters.known_unfinished("a") and not waiters.known_unfinished("b")


async def test_a_wait_that_reads_its_task_final_first_still_returns_the_trip(
    gw: GatewayEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    from taskyard.core import hops
    from taskyard.gateway import service as gateway_service

    monkeypatch.setattr(gateway_service, "FIRST_RECHECK_UNREAD", 0.05)
    task_id = await _submit(gw)
    call = gw.stub.WaitTask(_wait_req(task_id, 10))
    await _until_waiting(gw)
    # Final in the store before its event reaches this gateway (a loaded machine).
    reads = _store_gets(gw)
    gw.backend.set_state(task_id, task_pb2.TASK_STATE_SUCCESS)
    # Its re-read asked for the task once it was final: the read finds it final first.
    await wait_until_async(
        lambda: any(task_id in req.ids for req in gw.backend.store_asked(contract.STORE_GET)[reads:]),
        5,
        "the wait's re-read of its task",
    )
    record = task_record_pb2.TaskRecord(id=task_id, name="add", state=task_pb2.TASK_STATE_SUCCESS)
    record.hops.add(hop="store.committed", at_ns=1)
    await gw.backend.publish(
        event_pb2.Event(
            type="task.succeeded", task_id=task_id, state=task_pb2.TASK_STATE_SUCCESS, record=record
        )
    )
    resp = await call
    trailing = await call.trailing_metadata()
    assert resp.task.state == task_pb2.TASK_STATE_SUCCESS
    assert hops.from_text(str(trailing.get(hops.METADATA_KEY)))[0][0] == "store.committed"
