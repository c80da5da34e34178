# mypy: disable-error-code="arg-type"
"""Task logs and context in the result-store (real PostgreSQL, in-process store)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import asyncpg
import pytest

from taskyard.bus.v1 import logs_pb2, tasks_pb2
from taskyard.bus.v1 import task_record_pb2 as tr
from taskyard.core import errors, ids

pytestmark = pytest.mark.asyncio


async def new_task(store: Any) -> str:
    tid = ids.new_task_id()
    await store.insert(
        tasks_pb2.InsertTasksRequest(tasks=[tr.TaskRecord(id=tid, name="add", args_json=b"[]")])
    )
    return tid


def lines(tid: str, start: int, n: int, attempt: int = 1) -> list[logs_pb2.LogLine]:
    return [
        logs_pb2.LogLine(task_id=tid, attempt=attempt, at_us=1, type="info", message=f"line {i}")
        for i in range(start, start + n)
    ]


async def all_logs(store: Any, tid: str) -> list[Any]:
    out: list[Any] = []
    offset = 0
    while True:
        page = await store.ops.read_logs(logs_pb2.GetLogsRequest(task_id=tid, from_offset=offset, limit=1000))
        out.extend(page.logs)
        if not page.logs:
            return out
        offset = page.next_offset


async def test_concurrent_batches_get_dense_ordered_offsets(result_store: Any) -> None:
    a, b = await new_task(result_store), await new_task(result_store)
    # 20 batches racing for two tasks: each task's lines keep their order, offsets dense.
    batches = [logs_pb2.LogBatch(lines=lines(a, i * 50, 50) + lines(b, i * 50, 50)) for i in range(20)]
    replies = await asyncio.gather(*(result_store.ops.write_logs(x) for x in batches))
    assert sum(r.stored for r in replies) == 2000
    for tid in (a, b):
        got = await all_logs(result_store, tid)
        assert [x.offset for x in got] == list(range(1000))
        assert [x.message for x in got] == [f"line {i}" for i in range(1000)]


async def test_events_carry_the_log_seq(result_store: Any) -> None:
    tid = await new_task(result_store)
    seen: list[Any] = []
    result_store.publisher.listeners.append(lambda batch: seen.extend(batch.events))
    await result_store.ops.write_logs(logs_pb2.LogBatch(lines=lines(tid, 0, 3)))
    logs_events = [e for e in seen if e.type == "task.log"]
    assert [(e.task_id, e.log_seq) for e in logs_events] == [(tid, 3)]


async def test_cap_per_task_drops_with_one_marker(result_store: Any, store_settings: Any) -> None:
    from taskyard.result_store.writes import logs

    tid = await new_task(result_store)
    apply = logs.make_applier(max_lines=5)
    from taskyard.result_store.appliers import Db

    async with result_store.pool.acquire() as conn:
        db = Db(conn, result_store.stats)

        async def reply(batch: logs_pb2.LogBatch) -> logs_pb2.LogBatchReply:
            (got,) = (await apply(db, [batch])).replies
            assert isinstance(got, logs_pb2.LogBatchReply)
            return got

        out = await reply(logs_pb2.LogBatch(lines=lines(tid, 0, 3)))
        assert out.stored == 3
        out = await reply(logs_pb2.LogBatch(lines=lines(tid, 3, 4)))
        assert out.stored == 3 and out.dropped == 2  # 2 lines + marker
        out = await reply(logs_pb2.LogBatch(lines=lines(tid, 7, 4)))
        assert out.stored == 0 and out.dropped == 4
    got = await all_logs(result_store, tid)
    assert [x.offset for x in got] == list(range(6))
    assert got[-1].type == "warning" and "log truncated" in got[-1].message


async def test_dropped_note_becomes_a_marker_line(result_store: Any) -> None:
    tid = await new_task(result_store)
    await result_store.ops.write_logs(
        logs_pb2.LogBatch(
            lines=lines(tid, 0, 1), dropped=[logs_pb2.DroppedLines(task_id=tid, attempt=1, count=7)]
        )
    )
    got = await all_logs(result_store, tid)
    assert len(got) == 2 and "7 log line(s) dropped" in got[1].message


async def test_unknown_and_malformed_task_ids_are_skipped(result_store: Any) -> None:
    tid = await new_task(result_store)
    reply = await result_store.ops.write_logs(
        logs_pb2.LogBatch(lines=lines(ids.new_task_id(), 0, 2) + lines("nope", 0, 2) + lines(tid, 0, 1))
    )
    assert reply.stored == 1


async def test_context_updates_merge_nested_keys(result_store: Any) -> None:
    tid = await new_task(result_store)

    def patch(*pairs: Any) -> logs_pb2.ContextUpdate:
        return logs_pb2.ContextUpdate(task_id=tid, attempt=1, patch_json=json.dumps(list(pairs)).encode())

    await result_store.ops.write_logs(logs_pb2.LogBatch(context=[patch([["a", "b", "c"], 1], [["x"], "y"])]))
    await result_store.ops.write_logs(
        logs_pb2.LogBatch(
            context=[patch([["a", "b", "d"], [1, 2]]), patch([["progress"], {"fraction": 0.5}])]
        )
    )
    # A superseded attempt's update is ignored.
    await result_store.ops.write_logs(
        logs_pb2.LogBatch(
            context=[logs_pb2.ContextUpdate(task_id=tid, attempt=0, patch_json=b'[[["x"], "stale"]]')]
        )
    )
    reply = await result_store.get(tasks_pb2.GetTasksRequest(ids=[tid]))
    assert json.loads(reply.tasks[0].context_json) == {
        "a": {"b": {"c": 1, "d": [1, 2]}},
        "x": "y",
        "progress": {"fraction": 0.5},
    }


async def test_read_logs_pages_and_reports_final(result_store: Any) -> None:
    tid = await new_task(result_store)
    await result_store.ops.write_logs(logs_pb2.LogBatch(lines=lines(tid, 0, 5)))
    page = await result_store.ops.read_logs(logs_pb2.GetLogsRequest(task_id=tid, from_offset=2, limit=2))
    assert [x.offset for x in page.logs] == [2, 3] and page.next_offset == 4
    assert page.found and not page.final and page.log_seq == 5
    missing = await result_store.ops.read_logs(logs_pb2.GetLogsRequest(task_id=ids.new_task_id()))
    assert not missing.found
    for bad in (
        logs_pb2.GetLogsRequest(task_id="x"),
        logs_pb2.GetLogsRequest(task_id=tid, limit=1001),
        logs_pb2.GetLogsRequest(task_id=tid, from_offset=-1),
    ):
        with pytest.raises(errors.TaskyardError) as info:
            await result_store.ops.read_logs(bad)
        assert info.value.code.name == "INVALID_ARGUMENT"


async def test_logs_go_with_the_task(result_store: Any, store_settings: Any) -> None:
    tid = await new_task(result_store)
    await result_store.ops.write_logs(logs_pb2.LogBatch(lines=lines(tid, 0, 2)))
    conn = await asyncpg.connect(store_settings.database_url)
    try:
        await conn.execute("DELETE FROM tasks WHERE id = $1", tid)
        assert await conn.fetchval("SELECT count(*) FROM task_logs WHERE task_id = $1", tid) == 0
    finally:
        await conn.close()


async def test_a_batchs_lines_and_context_stand_or_fall_together(result_store: Any) -> None:
    """A batch that writes lines and a context update runs as one transaction: a
    context the database refuses leaves no line behind (a resent batch would
    otherwise store its lines twice)."""
    rec = tr.TaskRecord(id=ids.new_task_id(), name="add", root_id="")
    rec.root_id = rec.id
    await result_store.insert(tasks_pb2.InsertTasksRequest(tasks=[rec]))
    batch = logs_pb2.LogBatch(
        lines=[logs_pb2.LogLine(task_id=rec.id, attempt=1, message="hello", at_us=1)],
        context=[logs_pb2.ContextUpdate(task_id=rec.id, attempt=1, patch_json=b'[[["k"], "a\\u0000b"]]')],
    )
    with pytest.raises(errors.TaskyardError):
        await result_store.ops.write_logs(batch)
    stored = await result_store.pool.fetchval("SELECT count(*) FROM task_logs WHERE task_id = $1", rec.id)
    assert stored == 0
