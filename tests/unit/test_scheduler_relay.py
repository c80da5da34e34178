"""The scheduler passes records on as bytes: a submission goes to the store as the
InsertTasksRequest it already is on the wire, a lease reply goes to the pool as the
Dispatch it already is, and only heads (views_pb2) are parsed, when something reads
them. Checked here on the bytes that leave, against what the full messages say."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any, cast

import pynng
import pytest

from taskyard.bus.v1 import (
    dispatch_pb2,
    envelope_pb2,
    lanes_pb2,
    leases_pb2,
    task_record_pb2,
    tasks_pb2,
    views_pb2,
)
from taskyard.core import contract, roles, rpc, transport
from taskyard.core.priority import Priority
from taskyard.core.states import TaskState
from taskyard.scheduler import dispatcher as dispatcher_mod
from taskyard.scheduler.dispatcher import Dispatcher
from taskyard.scheduler.flow import Flow
from taskyard.scheduler.lanes import Lanes, Ref
from taskyard.scheduler.pools import Pool
from taskyard.scheduler.service import Scheduler

QUEUED = TaskState.QUEUED.value
SCHEDULED = TaskState.SCHEDULED.value
ASSIGNED = TaskState.ASSIGNED.value


def _record(
    task_id: str, *, state: int = QUEUED, name: str = "add", **fields: Any
) -> task_record_pb2.TaskRecord:
    return task_record_pb2.TaskRecord(
        id=task_id,
        name=name,
        args_json=b'[1, "two"]',
        kwargs_json=b'{"x": 3}',
        priority=2,  # type: ignore[arg-type]
        queue="default",
        state=state,  # type: ignore[arg-type]
        attempt=1,
        created_at_us=1_700_000_000_000_000,
        trace_headers={"traceparent": "00-abc-def-01"},
        labels={"team": "core"},
        **fields,
    )


def _inserted(record: task_record_pb2.TaskRecord, *, created: bool = True) -> tasks_pb2.InsertedTask:
    return tasks_pb2.InsertedTask(
        id=record.id,
        state=record.state,
        created=created,
        priority=record.priority,
        name=record.name,
        queue=record.queue,
    )


class _Store:
    """The store side of request_raw: keeps what was sent, answers with set bytes."""

    def __init__(self, reply: bytes) -> None:
        self.reply = reply
        self.sent: list[tuple[contract.Method[Any, Any], bytes]] = []

    async def call_raw(self, method: contract.Method[Any, Any], request: Any, **_: Any) -> bytes:
        self.sent.append((method, request if isinstance(request, bytes) else request.SerializeToString()))
        return self.reply


class _Timers:
    def __init__(self) -> None:
        self.added: list[tuple[str, int]] = []

    def add_all(self, items: list[tuple[str, int]]) -> int:
        self.added.extend(items)
        return len(items)


class _PairSocket:
    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.arrived = asyncio.Event()

    async def asend(self, data: bytes) -> None:
        self.sent.append(data)
        self.arrived.set()


def _pool(capacity: int = 8) -> Pool:
    return Pool(
        pool_id="pool-1",
        pair_address="ipc:///unused",
        names=frozenset({"add"}),
        capacity=capacity,
        socket=cast(Any, _PairSocket()),
    )


def _scheduler(store: _Store, lanes: Lanes, pools: list[Pool], term: int = 0) -> tuple[Scheduler, _Timers]:
    """A Scheduler with only what _on_submit uses (no sockets)."""
    sched = Scheduler.__new__(Scheduler)
    sched.term = term
    sched._term_field = tasks_pb2.InsertTasksRequest(lease_term=term).SerializeToString()
    registry = cast(Any, type("Registry", (), {})())
    registry.pools = {p.pool_id: p for p in pools}
    sched.lanes = lanes
    sched.store = cast(Any, store)
    sched._lease_ms = 30_000
    sched.flow = Flow(lanes, cast(Any, store), wake=lambda: None, term=term)
    sched.flow.loaded.set()  # the limits were read (none)
    sched.dispatcher = Dispatcher(
        lanes, registry, cast(Any, store), lease_ms=30_000, term=term, flow=sched.flow
    )
    timers = _Timers()
    sched.timers = cast(Any, timers)
    return sched, timers


def _busy_lanes() -> Lanes:
    """Something already waits, so the fast path is closed."""
    lanes = Lanes()
    lanes.push(Ref(id="older", name="add", priority=Priority.NORMAL))
    return lanes


async def test_a_submission_goes_to_the_store_byte_for_byte() -> None:
    queued, later = _record("q1"), _record("s1", state=SCHEDULED, run_at_us=1_900_000_000_000_000)
    payload = dispatch_pb2.SubmitRequest(tasks=[queued, later]).SerializeToString()
    reply = tasks_pb2.InsertTasksReply(tasks=[_inserted(queued), _inserted(later)]).SerializeToString()
    store = _Store(reply)
    lanes = _busy_lanes()
    sched, timers = _scheduler(store, lanes, [_pool()])

    answer = await sched._on_submit(payload, envelope_pb2.Envelope())

    assert store.sent == [(contract.STORE_INSERT, payload)]
    assert list(contract.STORE_INSERT.request.FromString(store.sent[0][1]).tasks) == [queued, later]
    # No leased records: the store's reply is the gateway's SubmitReply as it is.
    assert answer == reply
    assert list(dispatch_pb2.SubmitReply.FromString(answer).tasks) == [_inserted(queued), _inserted(later)]
    assert "q1" in lanes and "s1" not in lanes
    assert timers.added == [("s1", later.run_at_us)]


async def test_every_insert_names_the_term_it_was_submitted_in() -> None:
    queued = _record("q1")
    payload = dispatch_pb2.SubmitRequest(tasks=[queued]).SerializeToString()
    store = _Store(tasks_pb2.InsertTasksReply(tasks=[_inserted(queued)]).SerializeToString())
    sched, _ = _scheduler(store, _busy_lanes(), [_pool()], term=3)  # no fast path: no lease asked
    await sched._on_submit(payload, envelope_pb2.Envelope())
    insert = tasks_pb2.InsertTasksRequest.FromString(store.sent[0][1])
    assert list(insert.tasks) == [queued] and insert.lease_term == 3 and not insert.leases


async def test_only_created_tasks_are_queued() -> None:
    fresh, repeated = _record("new"), _record("old")
    payload = dispatch_pb2.SubmitRequest(tasks=[fresh, repeated]).SerializeToString()
    reply = tasks_pb2.InsertTasksReply(tasks=[_inserted(fresh), _inserted(repeated, created=False)])
    lanes = _busy_lanes()
    sched, _ = _scheduler(_Store(reply.SerializeToString()), lanes, [_pool()])
    await sched._on_submit(payload, envelope_pb2.Envelope())
    assert "new" in lanes and "old" not in lanes


async def test_fast_path_fields_merge_into_the_forwarded_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dispatcher_mod, "BACKUP_DELAY", 0.01)
    mine, other = _record("mine"), _record("other", name="not-served")
    payload = dispatch_pb2.SubmitRequest(tasks=[mine, other]).SerializeToString()
    leased = task_record_pb2.TaskRecord()
    leased.CopyFrom(mine)
    leased.state = ASSIGNED  # type: ignore[assignment]
    leased.lease_token = "tok"
    leased.pool_id = "pool-1"
    inserted = [tasks_pb2.InsertedTask(id="mine", state=ASSIGNED, created=True, name="add"), _inserted(other)]  # type: ignore[arg-type]
    reply = tasks_pb2.InsertTasksReply(tasks=inserted, leased=[leased])
    store = _Store(reply.SerializeToString())
    pool = _pool()
    sched, _ = _scheduler(store, Lanes(), [pool])

    answer = await sched._on_submit(payload, envelope_pb2.Envelope())

    insert = tasks_pb2.InsertTasksRequest.FromString(store.sent[0][1])
    assert list(insert.tasks) == [mine, other]
    assert insert.pool_id == "pool-1" and insert.lease_ms == 30_000
    assert [lease.task_id for lease in insert.leases] == ["mine"]
    assert list(pool.inflight) == ["mine"]
    # The gateway gets the InsertedTasks only, not the leased records.
    assert answer == dispatch_pb2.SubmitReply(tasks=inserted).SerializeToString()
    # The delayed PAIR copy carries the whole leased record, payload included.
    socket = cast(_PairSocket, pool.socket)
    await asyncio.wait_for(socket.arrived.wait(), 5)
    copy = contract.DISPATCH.open(socket.sent[0])
    assert copy is not None and list(copy.tasks) == [leased]


async def test_sampled_records_get_the_scheduler_stamps_and_keep_every_field() -> None:
    sampled, plain = _record("sampled"), _record("plain")
    sampled.hops.add(hop="gateway.received", at_ns=1)
    payload = dispatch_pb2.SubmitRequest(tasks=[sampled, plain]).SerializeToString()
    reply = tasks_pb2.InsertTasksReply(tasks=[_inserted(sampled), _inserted(plain)])
    store = _Store(reply.SerializeToString())
    sched, _ = _scheduler(store, _busy_lanes(), [_pool()])

    await sched._on_submit(payload, envelope_pb2.Envelope())

    sent = list(tasks_pb2.InsertTasksRequest.FromString(store.sent[0][1]).tasks)
    assert [h.hop for h in sent[0].hops] == ["gateway.received", "scheduler.received", "scheduler.sent"]
    del sent[0].hops[1:]
    assert sent == [sampled, plain]


async def test_the_hops_tag_inside_a_payload_changes_nothing() -> None:
    # b"\xba\x02" in the args: the submission is parsed as heads, but no record is sampled.
    record = _record("x")
    record.args_json = b'["\xba\x02"]'
    payload = dispatch_pb2.SubmitRequest(tasks=[record]).SerializeToString()
    store = _Store(tasks_pb2.InsertTasksReply(tasks=[_inserted(record)]).SerializeToString())
    sched, _ = _scheduler(store, _busy_lanes(), [_pool()])
    # From a gateway, whose records a lane relays unread (scheduler/payloads.py).
    role = rpc._SENDER_ROLE.set(roles.GATEWAY)
    try:
        await sched._on_submit(payload, envelope_pb2.Envelope())
    finally:
        rpc._SENDER_ROLE.reset(role)
    assert store.sent[0][1] == payload


async def test_a_lease_reply_goes_to_the_pool_as_it_came() -> None:
    lanes = Lanes()
    for task_id in ("a", "b", "c"):
        lanes.push(Ref(id=task_id, name="add", priority=Priority.NORMAL))
    records = [_record(i, state=ASSIGNED, lease_token=f"tok-{i}") for i in ("a", "c")]
    raw = leases_pb2.LeaseTasksReply(tasks=records).SerializeToString()
    store = _Store(raw)
    pool = _pool()
    registry = cast(Any, type("Registry", (), {})())
    registry.pools = {pool.pool_id: pool}
    d = Dispatcher(lanes, registry, cast(Any, store), lease_ms=30_000, token_prefix="p1-")
    d.dispatch_once()
    await asyncio.gather(*d._inflight)

    request = leases_pb2.LeaseTasksRequest.FromString(store.sent[0][1])
    assert [lease.task_id for lease in request.leases] == ["a", "b", "c"]
    tokens = [lease.lease_token for lease in request.leases]
    assert len(set(tokens)) == 3 and all(t.startswith("p1-") and len(t) == 3 + 16 for t in tokens)
    socket = cast(_PairSocket, pool.socket)
    env = transport.decode(socket.sent[0])
    copy = contract.DISPATCH.read(env)
    assert copy is not None and env.payload == raw
    assert list(copy.tasks) == records
    # "b" was refused (cancelled meanwhile): its slot is free again.
    assert sorted(pool.inflight) == ["a", "c"] and d.dispatched == 2


def test_dispatch_payload_of_heads_is_the_full_dispatch() -> None:
    records = [_record("a", lease_token="t1"), _record("b", lease_token="t2")]
    full = dispatch_pb2.Dispatch(tasks=records).SerializeToString()
    heads = views_pb2.TaskRecordHeads.FromString(full).tasks
    assert dispatch_pb2.Dispatch.FromString(dispatcher_mod.dispatch_payload(heads)) == dispatch_pb2.Dispatch(
        tasks=records
    )
    assert dispatcher_mod.dispatch_payload(records) == full


def test_refs_take_their_priority_from_the_wire_value() -> None:
    for wire, expected in ((0, Priority.NORMAL), (1, Priority.CRITICAL), (4, Priority.LOW)):
        ref = dispatcher_mod.ref_of(lanes_pb2.QueuedRef(id="x", name="n", priority=wire, queue="q"))  # type: ignore[arg-type]
        assert ref.priority is expected
    with pytest.raises(ValueError):
        dispatcher_mod.ref_of(lanes_pb2.QueuedRef(id="x", priority=9))  # type: ignore[arg-type]


# --- transport: raw routes and raw replies -------------------------------------


async def test_raw_route_and_raw_request(tmp_path: Path) -> None:
    address = f"ipc://{tmp_path / 'raw'}.sock"
    seen: list[bytes] = []

    async def handler(payload: bytes, env: envelope_pb2.Envelope) -> bytes:
        seen.append(payload)
        tasks = dispatch_pb2.SubmitRequest.FromString(payload).tasks
        return dispatch_pb2.SubmitReply(
            tasks=[tasks_pb2.InsertedTask(id=t.id) for t in tasks]
        ).SerializeToString()

    responder = rpc.Responder(
        address,
        [rpc.serve_raw(contract.SUBMIT, handler)],
        max_message_bytes=1 << 16,
        concurrency=2,
    )
    serving = asyncio.create_task(responder.serve())
    requester = rpc.Requester(address, max_message_bytes=1 << 16, timeout=5)
    try:
        request = dispatch_pb2.SubmitRequest(tasks=[_record("a")])
        data = request.SerializeToString()
        expected = dispatch_pb2.SubmitReply(tasks=[tasks_pb2.InsertedTask(id="a")])
        got = await asyncio.wait_for(requester.call_raw(contract.SUBMIT, request), 10)
        assert seen == [data] and got == expected.SerializeToString()
        # call() takes a serialized message as the request too.
        again = await asyncio.wait_for(requester.call(contract.SUBMIT, data), 10)
        assert seen == [data, data] and again == expected
    finally:
        requester.close()
        responder.close()
        with contextlib.suppress(asyncio.CancelledError, pynng.NNGException):
            await asyncio.wait_for(serving, 5)
