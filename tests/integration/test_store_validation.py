"""The store refuses what the gateway refuses, with the same rules (core.validation):
whoever inserts over the bus, nothing is stored that the edge would refuse."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import asyncpg
import pytest
from google.protobuf import json_format
from support.waiting import wait_until_async

from taskyard.bus.v1 import envelope_pb2, pools_pb2, queues_pb2, schedule_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import codec, contract, errors, ids, payload, rpc
from taskyard.core.config import Settings
from taskyard.result_store.service import serve
from taskyard.v1 import limit_pb2, task_pb2
from taskyard.v1 import schedule_pb2 as pub

pytestmark = pytest.mark.asyncio
K = envelope_pb2
DAY_US = 24 * 3600 * 1_000_000
LIMITS = codec.Limits.from_settings(Settings())


@pytest.fixture
async def bus(store_settings: Any) -> Any:
    """A store process's REP socket (in this process), and a requester to it."""
    stop = asyncio.Event()
    served = asyncio.create_task(serve(store_settings, stop))
    req = rpc.Requester(store_settings.store_address, max_message_bytes=16 << 20, timeout=10)

    async def answers() -> bool:
        try:
            await req.call(contract.STORE_TASK_NAMES, pools_pb2.TaskNamesRequest(), timeout=0.5)
        except errors.TaskyardError:
            if served.done():
                served.result()  # it failed to start: its error, not a timeout
            return False
        return True

    await wait_until_async(answers, 10, "the store to answer")
    try:
        yield req
    finally:
        req.close()
        stop.set()
        await asyncio.wait_for(served, 10)


async def _insert(req: Any, *records: tr.TaskRecord) -> tasks_pb2.InsertTasksReply:
    reply: tasks_pb2.InsertTasksReply = await req.call(
        contract.STORE_INSERT, tasks_pb2.InsertTasksRequest(tasks=records)
    )
    return reply


async def _refused(req: Any, *records: tr.TaskRecord) -> errors.TaskyardError:
    with pytest.raises(errors.TaskyardError) as info:
        await _insert(req, *records)
    assert info.value.code is errors.Code.INVALID_ARGUMENT
    return info.value


async def _count(req: Any) -> int:
    reply = await req.call(contract.STORE_LIST, tasks_pb2.ListTasksRequest(limit=1000))
    return len(reply.tasks)


async def test_an_insert_over_the_bus_with_a_name_never_declared_is_refused(bus: Any) -> None:
    err = await _refused(bus, tr.TaskRecord(id=ids.new_task_id(), name="never_declared"))
    assert err.reason == "UNKNOWN_TASK_NAME"
    assert [v.field for v in err.violations] == ["tasks[0].name"]
    assert await _count(bus) == 0
    # A pool declares it (its heartbeat): accepted from then on, even once the pool is gone.
    await bus.call(
        contract.STORE_HEARTBEAT,
        pools_pb2.HeartbeatRequest(pool_id="p-gone", is_running=False, task_names=["never_declared"]),
    )
    reply = await _insert(bus, tr.TaskRecord(id=ids.new_task_id(), name="never_declared"))
    assert reply.tasks[0].created
    names = await bus.call(contract.STORE_TASK_NAMES, pools_pb2.TaskNamesRequest())
    assert "never_declared" in names.names
    live = await bus.call(contract.STORE_TASK_NAMES, pools_pb2.TaskNamesRequest(max_age_ms=60_000))
    assert "never_declared" not in live.names  # no running pool serves it


def _spec(**fields: Any) -> task_pb2.TaskSpec:
    spec = task_pb2.TaskSpec(name="add")
    json_format.ParseDict(fields, spec)
    return spec


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def _ahead(days: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + days * 86400))


def _set(**values: Any) -> Callable[[tr.TaskRecord], None]:
    def apply(rec: tr.TaskRecord) -> None:
        for k, v in values.items():
            if k in ("labels", "trace_headers"):
                getattr(rec, k).update(v)
            elif k == "depends_on":
                rec.depends_on.extend(v)
            else:
                setattr(rec, k, v)

    return apply


def _later(idempotency_key: str = "", **days: int) -> Callable[[tr.TaskRecord], None]:
    """Set times ``days`` after the record's acceptance."""

    def apply(rec: tr.TaskRecord) -> None:
        if idempotency_key:
            rec.idempotency_key = idempotency_key
        for k, n in days.items():
            setattr(rec, k, rec.created_at_us + n * DAY_US)

    return apply


# (spec the gateway refuses, the same breach written into a record, public field,
# record field, reason)
CASES: list[tuple[dict[str, Any], Callable[[tr.TaskRecord], None], str, str, str]] = [
    ({"name": "nope"}, _set(name="nope"), "name", "name", "UNKNOWN_TASK_NAME"),
    ({"name": "a" * 256}, _set(name="a" * 256), "name", "name", "INVALID_ARGUMENT"),
    (
        {"args": _nested(40)},
        _set(args_json=json.dumps(_nested(40)).encode()),
        "args",
        "args_json",
        "PAYLOAD_TOO_DEEP",
    ),
    (
        {"kwargs": {"k": _nested(40)}},
        _set(kwargs_json=json.dumps({"k": _nested(40)}).encode()),
        "kwargs",
        "kwargs_json",
        "PAYLOAD_TOO_DEEP",
    ),
    ({"args": ["a\u0000"]}, _set(args_json=b'["a\\u0000"]'), "args[0]", "args_json[0]", "NUL_CHARACTER"),
    (
        {"kwargs": {"k\u0000": 1}},
        _set(kwargs_json=b'{"k\\u0000":1}'),
        'kwargs["k\\u0000"]',
        'kwargs_json["k\\u0000"]',
        "NUL_CHARACTER",
    ),
    (
        {"args": ["x" * (LIMITS.max_payload_bytes + 1)]},
        _set(args_json=json.dumps(["x" * (LIMITS.max_payload_bytes + 1)]).encode()),
        "args",
        "args_json",
        "PAYLOAD_TOO_LARGE",
    ),
    ({"priority": 9}, _set(priority=9), "priority", "priority", "INVALID_ARGUMENT"),
    ({"queue": "q\u0000"}, _set(queue="q\u0000"), "queue", "queue", "NUL_CHARACTER"),
    ({"queue": "q" * 256}, _set(queue="q" * 256), "queue", "queue", "INVALID_ARGUMENT"),
    ({"timeout": "90000s"}, _set(timeout_ms=90_000_000), "timeout", "timeout_ms", "INVALID_ARGUMENT"),
    ({"maxRetries": 101}, _set(max_retries=101), "max_retries", "max_retries", "INVALID_ARGUMENT"),
    ({"requestId": "r" * 256}, _set(request_id="r" * 256), "request_id", "request_id", "INVALID_ARGUMENT"),
    ({"parentId": "nope"}, _set(parent_id="nope"), "parent_id", "parent_id", "INVALID_ARGUMENT"),
    (
        {"labels": {f"k{i}": "v" for i in range(65)}},
        _set(labels={f"k{i}": "v" for i in range(65)}),
        "labels",
        "labels",
        "INVALID_ARGUMENT",
    ),
    ({"labels": {"k": "v\u0000"}}, _set(labels={"k": "v\u0000"}), "labels.k", "labels.k", "NUL_CHARACTER"),
    (
        {"dependsOn": [ids.new_task_id() for _ in range(101)]},
        _set(depends_on=[ids.new_task_id() for _ in range(101)]),
        "depends_on",
        "depends_on",
        "INVALID_ARGUMENT",
    ),
    (
        {"dependsOn": ["nope"]},
        _set(depends_on=["nope"]),
        "depends_on[0]",
        "depends_on[0]",
        "INVALID_ARGUMENT",
    ),
    ({"eta": _ahead(400)}, _later(run_at_us=400), "eta", "run_at_us", "INVALID_ARGUMENT"),
    (
        {"idempotencyKey": "k", "idempotencyWindow": f"{31 * 86400}s"},
        _later(idempotency_expires_at_us=31, idempotency_key="k"),
        "idempotency_window",
        "idempotency_expires_at_us",
        "INVALID_ARGUMENT",
    ),
]


@pytest.mark.parametrize(("spec", "breach", "public", "field", "reason"), CASES, ids=[c[3] for c in CASES])
async def test_the_store_refuses_what_the_gateway_refuses(
    result_store: Any,
    spec: dict[str, Any],
    breach: Callable[[tr.TaskRecord], None],
    public: str,
    field: str,
    reason: str,
) -> None:
    with pytest.raises(errors.TaskyardError) as edge:
        codec.build_records([_spec(**spec)], known_names={"add"}, limits=LIMITS, field="task", single=True)
    assert [(v.field, getattr(v, "reason", "")) for v in edge.value.violations] == [
        (f"task.{public}", reason)
    ]

    # A record as a gateway builds it passes; the same breach written into it does not.
    (rec,) = codec.build_records([_spec()], known_names={"add"}, limits=LIMITS, field="task", single=True)
    breach(rec)
    with pytest.raises(errors.TaskyardError) as store:
        await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[rec]))
    assert store.value.code is errors.Code.INVALID_ARGUMENT
    assert [(v.field, getattr(v, "reason", "")) for v in store.value.violations] == [
        (f"tasks[0].{field}", reason)
    ]
    page = await result_store.list(tasks_pb2.ListTasksRequest(limit=10))
    assert not page.tasks  # nothing of a refused request is written


async def test_records_the_edge_cannot_build_are_refused_too(result_store: Any) -> None:
    bad = [
        tr.TaskRecord(id=ids.new_task_id(), name="add", args_json=b"[1,"),
        tr.TaskRecord(id=ids.new_task_id(), name="add", args_json=b'{"not":"a list"}'),
        tr.TaskRecord(id=ids.new_task_id(), name="add", kwargs_json=b"[1]"),
        tr.TaskRecord(id=ids.new_task_id(), name="add", args_json=b"[NaN]"),
        tr.TaskRecord(id=ids.new_task_id(), name="add", args_json=b"\xff"),
        tr.TaskRecord(id=ids.new_task_id(), name="add", timeout_ms=-5),
        tr.TaskRecord(id=ids.new_task_id(), name="add", trace_headers={"traceparent": "t\u0000"}),
    ]
    with pytest.raises(errors.TaskyardError) as info:
        await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=bad))
    assert [v.field for v in info.value.violations] == [
        "tasks[0].args_json",
        "tasks[1].args_json",
        "tasks[2].kwargs_json",
        "tasks[3].args_json",
        "tasks[4].args_json",
        "tasks[5].timeout_ms",
        "tasks[6].trace_headers.traceparent",
    ]
    depth = payload.MAX_NESTING
    ok = tr.TaskRecord(id=ids.new_task_id(), name="add", args_json=json.dumps(_nested(depth)).encode())
    reply = await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[ok]))
    assert reply.tasks[0].created


async def test_a_schedule_for_a_name_never_declared_is_refused(bus: Any) -> None:
    schedule = pub.Schedule(name="nightly", task=task_pb2.TaskSpec(name="never_declared"))
    schedule.interval.FromSeconds(60)
    with pytest.raises(errors.TaskyardError) as info:
        await bus.call(
            contract.STORE_SCHEDULE_SAVE,
            schedule_pb2.SaveSchedulesRequest(schedules=[schedule], now_us=time.time_ns() // 1000),
        )
    assert info.value.reason == "UNKNOWN_TASK_NAME"
    assert [v.field for v in info.value.violations] == ["schedule.task.name"]


async def test_a_schedule_run_the_edge_would_refuse_is_not_stored(bus: Any, database_url: str) -> None:
    now = time.time_ns() // 1000
    for name in ("good", "bad"):
        schedule = pub.Schedule(name=name, task=task_pb2.TaskSpec(name="add"))
        schedule.interval.FromSeconds(60)
        await bus.call(
            contract.STORE_SCHEDULE_SAVE,
            schedule_pb2.SaveSchedulesRequest(schedules=[schedule], now_us=now - 120 * 1_000_000),
        )
    # A template changed behind the store's back: its runs would nest too deep.
    conn = await asyncpg.connect(database_url)
    try:
        template = json.dumps({"name": "add", "args": [_nested(40)]})
        await conn.execute("UPDATE schedules SET task = $1::jsonb WHERE name = 'bad'", template)
    finally:
        await conn.close()
    fired = await bus.call(contract.STORE_SCHEDULE_FIRE, schedule_pb2.FireSchedulesRequest(now_us=now))
    assert [r.name for r in fired.records] == ["add"] and await _count(bus) == 1
    good = {s.name: s for s in fired.schedules}["good"]
    assert fired.records[0].schedule_id == good.id
    with pytest.raises(errors.TaskyardError) as info:
        await bus.call(
            contract.STORE_SCHEDULE_FIRE, schedule_pb2.FireSchedulesRequest(now_us=now, trigger="bad")
        )
    assert info.value.code is errors.Code.INVALID_ARGUMENT and info.value.reason == "PAYLOAD_TOO_DEEP"
    assert await _count(bus) == 1


BAD_NAMES = ("", " reports", "reports ", "r\u00e9ports", "a/b", "-lead", "x" * 129, "tab\there", "q\x00")


async def test_queue_and_schedule_names_outside_the_charset_are_refused_by_the_store(bus: Any) -> None:
    """Whoever writes over the bus (a lane, a pool declaring schedules, an admin tool):
    the same names as at the gateway (core/names.py), the same field violations."""
    for queue in BAD_NAMES[1:]:
        rec = tr.TaskRecord(id=ids.new_task_id(), name="add", queue=queue)
        refused = await _refused(bus, rec)
        assert [v.field for v in refused.violations] == ["tasks[0].queue"], queue
        with pytest.raises(errors.TaskyardError) as info:
            await bus.call(
                contract.STORE_QUEUE_OP, queues_pb2.QueueOpRequest(op=queues_pb2.QUEUE_OP_PAUSE, queue=queue)
            )
        assert info.value.code is errors.Code.INVALID_ARGUMENT, queue
        assert [v.field for v in info.value.violations] == ["queue"], queue
    for name in BAD_NAMES:
        schedule = pub.Schedule(name=name, task=task_pb2.TaskSpec(name="add"))
        schedule.interval.FromSeconds(60)
        for declared in (False, True):
            with pytest.raises(errors.TaskyardError) as info:
                await bus.call(
                    contract.STORE_SCHEDULE_SAVE,
                    schedule_pb2.SaveSchedulesRequest(
                        schedules=[schedule], declared=declared, now_us=time.time_ns() // 1000
                    ),
                )
            assert info.value.code is errors.Code.INVALID_ARGUMENT, name
            assert [v.field for v in info.value.violations] == [
                "schedules[0].name" if declared else "schedule.name"
            ], name
    assert await _count(bus) == 0
    # The longest name, and every character the charset has, are stored.
    longest = "Q" + "x" * 127
    fine = tr.TaskRecord(id=ids.new_task_id(), name="add", queue=longest)
    assert (await _insert(bus, fine)).tasks[0].created
    for queue in ("default", "reports.nightly", "tenant-a:emails_2", longest):
        reply = await bus.call(
            contract.STORE_QUEUE_OP, queues_pb2.QueueOpRequest(op=queues_pb2.QUEUE_OP_PAUSE, queue=queue)
        )
        assert reply.queue.name == queue


async def test_a_schedule_run_gets_the_limits_its_task_name_declares(bus: Any) -> None:
    now = time.time_ns() // 1000
    schedule = pub.Schedule(name="billing", task=task_pb2.TaskSpec(name="add"))
    schedule.task.kwargs.update({"customer": "c-7"})
    schedule.interval.FromSeconds(60)
    await bus.call(
        contract.STORE_SCHEDULE_SAVE,
        schedule_pb2.SaveSchedulesRequest(schedules=[schedule], now_us=now - 120 * 1_000_000),
    )
    declared = limit_pb2.Limit(
        name="add.concurrency",
        task_name="add",
        key_argument="customer",
        per_key=True,
        concurrency=limit_pb2.ConcurrencyLimit(max_units=3),
    )
    fired = await bus.call(
        contract.STORE_SCHEDULE_FIRE, schedule_pb2.FireSchedulesRequest(now_us=now, declared=[declared])
    )
    (run,) = fired.records
    assert [(u.limit, u.key) for u in run.flow.uses] == [("add.concurrency", "c-7")]
    (stored,) = (await bus.call(contract.STORE_GET, tasks_pb2.GetTasksRequest(ids=[run.id]))).tasks
    assert [(u.limit, u.key) for u in stored.flow.uses] == [("add.concurrency", "c-7")]
