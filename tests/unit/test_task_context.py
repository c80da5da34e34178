"""TaskContext and the worker's log buffer (no processes)."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest

from taskyard.bus.v1 import task_record_pb2
from taskyard.worker_pool import TaskContext, context, current_task
from taskyard.worker_pool.tasklogs import LogBuffer, cut_line
from taskyard.worker_pool.worker import Runner


def make(buf: LogBuffer | None = None, **kw: Any) -> TaskContext:
    return TaskContext(task_id="t1", name="n", attempt=2, sink=buf, **kw)


def test_current_outside_a_task_is_a_clear_error() -> None:
    with pytest.raises(context.NotInTaskError, match="only inside a task body"):
        current_task()


def test_set_context_nests_dotted_keys_and_coalesces() -> None:
    buf = LogBuffer()
    ctx = make(buf, context={"a": {"keep": 1}})
    ctx.set_context("a.b.c", 1)
    ctx.set_context("a.b.c", 2)
    ctx.set_context("x", {"y": 1})
    ctx.set_context("x.z", 3)
    assert ctx.get_context() == {"a": {"keep": 1, "b": {"c": 2}}, "x": {"y": 1, "z": 3}}
    assert ctx.get_context("a.b.c") == 2 and ctx.get_context("nope", 5) == 5
    (batch,) = buf.take()
    (update,) = batch.context
    assert json.loads(update.patch_json) == [[["a", "b", "c"], 2], [["x"], {"y": 1}], [["x", "z"], 3]]
    ctx.set_context("x.z", 4)
    ctx.set_context("x", 0)  # supersedes the pending x.z
    (batch,) = buf.take()
    assert json.loads(batch.context[0].patch_json) == [[["x"], 0]]
    for bad in ("", "a..b", ".a"):
        with pytest.raises(ValueError):
            ctx.set_context(bad, 1)
    with pytest.raises(TypeError):
        ctx.set_context("f", float("nan"))


def test_log_logger_and_progress_become_lines() -> None:
    buf = LogBuffer()
    ctx = make(buf)
    ctx.log("hello")
    ctx.logger.warning("n=%d", 3)
    ctx.logger.debug("quiet")
    ctx.progress(0.5, "half")
    with pytest.raises(ValueError):
        ctx.progress(1.5)
    (batch,) = buf.take()
    assert [(x.type, x.message) for x in batch.lines] == [
        ("info", "hello"),
        ("warning", "n=3"),
        ("debug", "quiet"),
        ("progress", "50% half"),
    ]
    assert all(x.task_id == "t1" and x.attempt == 2 for x in batch.lines)
    assert ctx.get_context("progress.fraction") == 0.5


def test_long_lines_are_cut_with_a_marker() -> None:
    assert cut_line("abc", 10) == "abc"
    cut = cut_line("é" * 100, 11)
    assert cut.startswith("é" * 5) and "truncated 190 bytes" in cut
    assert "\x00" not in cut_line("a\x00b", 10)


def test_a_full_buffer_drops_on_the_loop_and_counts() -> None:
    buf = LogBuffer(max_lines=3, block_seconds=0)
    ctx = make(buf)
    for i in range(5):
        ctx.log(f"l{i}")
    (batch,) = buf.take()
    assert [x.message for x in batch.lines] == ["l0", "l1", "l2"]
    assert [(d.task_id, d.attempt, d.count) for d in batch.dropped] == [("t1", 2, 2)]


def test_a_thread_waits_for_room_when_the_buffer_is_full() -> None:
    buf = LogBuffer(max_lines=2, block_seconds=5)
    ctx = make(buf)
    ctx.log("a")
    ctx.log("b")
    t = threading.Thread(target=ctx.log, args=("c",))
    t.start()
    t.join(0.2)
    assert t.is_alive()  # back-pressure: waiting for a flush
    assert [x.message for x in buf.take()[0].lines] == ["a", "b"]
    t.join(5)
    assert [x.message for x in buf.take()[0].lines] == ["c"]


def test_cancel_is_thread_safe_and_calls_back_once() -> None:
    ctx = make()
    calls: list[int] = []
    ctx.on_cancel(lambda: calls.append(1))
    assert not ctx.cancelled
    threads = [threading.Thread(target=ctx._request_cancel) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ctx.cancelled and ctx.wait_cancelled(0) and calls == [1]
    ctx.on_cancel(lambda: calls.append(2))  # already cancelled: at once
    assert calls == [1, 2]


def test_runner_sets_the_context_for_async_and_sync_bodies() -> None:
    from taskyard.worker_pool import registry

    seen: dict[str, Any] = {}

    @registry.task(name="ctx_async_probe")
    async def probe_async() -> str:
        c = current_task()
        c.log("from async")
        return c.task_id

    @registry.task(name="ctx_sync_probe")
    def probe_sync(x: int, ctx: TaskContext) -> int:
        seen["same"] = ctx is current_task()
        ctx.log("from a thread")
        return x * ctx.attempt

    async def run() -> list[Any]:
        buf = LogBuffer()
        runner = Runner(concurrency=2, default_timeout=5, sink=buf)
        try:
            out = []
            for name, args in (("ctx_async_probe", b"[]"), ("ctx_sync_probe", b"[21]")):
                rec = task_record_pb2.TaskRecord(id=f"id-{name}", name=name, attempt=2, args_json=args)
                out.append(await _run(runner, rec))
            out.append([x.message for b in buf.take() for x in b.lines])
            return out
        finally:
            runner.close()

    try:
        a, s, lines = asyncio.run(run())
    finally:
        registry.unregister("ctx_async_probe")
        registry.unregister("ctx_sync_probe")
    assert a.success and json.loads(a.result_json) == "id-ctx_async_probe"
    assert s.success and json.loads(s.result_json) == 42 and seen["same"]
    assert lines == ["from async", "from a thread"]


async def _run(runner: Runner, rec: task_record_pb2.TaskRecord) -> Any:
    runner.submit(rec)
    key = (rec.id, rec.attempt)
    await asyncio.wait_for(asyncio.shield(runner.tasks[key]), 5)
    (done,) = [c for c in runner.report.completed if c.ref.task_id == rec.id]
    return done


def test_logger_formats_like_logging_and_never_raises_into_the_task() -> None:
    buf = LogBuffer()
    ctx = make(buf)
    ctx.logger.info("%(x)s and %(y)s", {"x": 1, "y": "two"})  # the single-mapping form
    ctx.logger.info("%d items", "not a number")  # a bad format
    ctx.logger.info("%s %s", "only one")  # too few arguments
    ctx.logger.info("100%")  # no arguments: no formatting at all
    (batch,) = buf.take()
    msgs = [x.message for x in batch.lines]
    assert msgs[0] == "1 and two"
    assert msgs[1].startswith("%d items ('not a number',) (log formatting failed: TypeError")
    assert msgs[2].startswith("%s %s ('only one',) (log formatting failed: TypeError")
    assert msgs[3] == "100%"
