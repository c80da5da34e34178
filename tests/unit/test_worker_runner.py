"""The worker's execution core (Runner) in-process: results, failures, timeouts, stop."""

from __future__ import annotations

import asyncio
import functools
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.fake_scheduler import make_record

from taskyard.bus.v1 import task_record_pb2
from taskyard.worker_pool import attempts, registry, task
from taskyard.worker_pool.worker import Runner

registry.load_modules(["taskyard.examples"])


@pytest.fixture
def extra_tasks() -> Iterator[threading.Event]:
    release = threading.Event()

    @task(name="unit.unserializable")
    def unserializable() -> object:
        return object()

    @task(name="unit.nan")
    def nan() -> float:
        return float("nan")

    @task(name="unit.nul")
    def nul() -> str:
        return "a\x00b"

    @task(name="unit.raises_timeout")
    async def raises_timeout() -> None:
        raise TimeoutError("my own")

    @task(name="unit.sys_exit")
    def sys_exit() -> None:
        raise SystemExit(3)

    @task(name="unit.blocked", timeout=0.2)
    def blocked() -> str:
        release.wait(10)
        return "done"

    @task(name="unit.thread_name")
    def thread_name() -> str:
        return threading.current_thread().name

    @task(name="unit.body_type_error")
    def body_type_error(x: int) -> None:
        raise TypeError("raised by the body")

    def logged(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)

        return wrapper

    @task(name="unit.wrapped")
    @logged
    def wrapped(x: int) -> None:
        raise TypeError("raised by the body")

    yield release
    release.set()
    names = ("unserializable", "nan", "nul", "raises_timeout", "sys_exit", "blocked", "thread_name")
    for name in (*names, "body_type_error", "wrapped"):
        registry.unregister(f"unit.{name}")


async def run_one(record: task_record_pb2.TaskRecord, **kw: Any) -> Any:
    runner = Runner(
        concurrency=2,
        default_timeout=kw.pop("default_timeout", 30.0),
        max_result_bytes=kw.pop("max_result_bytes", 1024 * 1024),
        worker="w",
    )
    try:
        return await runner.execute(record)
    finally:
        runner.close()


async def test_success_sync_and_async() -> None:
    c = await run_one(make_record("add", 2, 3))
    assert c.success and c.result_json == b"5"
    c = await run_one(make_record("async_add", 2, 3))
    assert c.success and json.loads(c.result_json) == 5
    c = await run_one(make_record("echo", [1], {"a": None}, key="ü"))
    assert json.loads(c.result_json) == {"args": [[1], {"a": None}], "kwargs": {"key": "ü"}}


async def test_sync_runs_in_a_thread(extra_tasks: threading.Event) -> None:
    c = await run_one(make_record("unit.thread_name"))
    assert json.loads(c.result_json).startswith("taskyard-task")


async def test_exception() -> None:
    c = await run_one(make_record("fail", "nope", attempt=3))
    assert not c.success and c.retryable
    assert (c.failure.type, c.failure.message, c.failure.attempt) == ("ValueError", "nope", 3)
    assert "ValueError: nope" in c.failure.traceback


@pytest.mark.parametrize("name", ["unit.unserializable", "unit.nan", "unit.nul"])
async def test_result_must_be_storable_json(extra_tasks: threading.Event, name: str) -> None:
    c = await run_one(make_record(name))
    assert not c.success and c.failure.type == "TypeError"


async def test_a_result_over_the_cap_fails_without_retry() -> None:
    c = await run_one(make_record("echo", "x" * 100), max_result_bytes=64)
    assert not c.success and not c.retryable
    assert c.failure.type == "ResultTooLarge" and "TASKYARD_MAX_RESULT_BYTES" in c.failure.message
    assert (await run_one(make_record("echo", "x"), max_result_bytes=64)).success


def test_a_result_nested_too_deep_fails_without_retry() -> None:
    deep: Any = 1
    for _ in range(40):
        deep = (deep,)  # tuples become JSON lists: they nest too
    with pytest.raises(attempts.ResultTooDeep):
        attempts.encode_result(deep)
    for _ in range(5000):  # past Python's own encoder
        deep = [deep]
    with pytest.raises(attempts.ResultTooDeep):
        attempts.encode_result(deep)
    shallow: Any = [[1]] * 1000
    assert attempts.encode_result(shallow).startswith(b"[[1],")


def test_encode_result_nul_detection() -> None:
    assert attempts.encode_result("a\\u0000b") == b'"a\\\\u0000b"'  # a literal backslash is fine
    with pytest.raises(TypeError):
        attempts.encode_result({"k": ["x\x00"]})


async def test_bad_arguments_and_unknown_names() -> None:
    rec = make_record("add")
    rec.args_json = b"{not json"
    c = await run_one(rec)
    assert not c.success and not c.retryable and c.failure.type == "InvalidArguments"
    rec = make_record("add")
    rec.args_json = b'{"a": 1}'
    c = await run_one(rec)
    assert c.failure.type == "InvalidArguments"
    c = await run_one(make_record("missing"))
    assert c.failure.type == "NotRegistered" and not c.retryable


@pytest.mark.parametrize(
    ("name", "args", "kwargs", "refusal"),
    [
        ("add", [1], {}, "missing a required argument: 'b'"),
        ("async_add", [1, 2, 3], {}, "too many positional arguments"),
        ("add", [1, 2], {"c": 3}, "got an unexpected keyword argument 'c'"),
    ],
)
async def test_arguments_that_do_not_fit_the_signature_fail_at_once(
    name: str, args: list[Any], kwargs: dict[str, Any], refusal: str
) -> None:
    c = await run_one(make_record(name, *args, **kwargs))
    assert not c.success and not c.retryable
    assert c.failure.type == "TypeError"
    assert c.failure.message == f"arguments do not fit {name}(a, b): {refusal}"


async def test_a_type_error_raised_by_the_body_is_still_retried(extra_tasks: threading.Event) -> None:
    c = await run_one(make_record("unit.body_type_error", 1))
    assert not c.success and c.retryable
    assert (c.failure.type, c.failure.message) == ("TypeError", "raised by the body")
    # A decorated task's body is the function it wraps: its own TypeError is retried too.
    c = await run_one(make_record("unit.wrapped", 1))
    assert c.retryable and c.failure.message == "raised by the body"
    c = await run_one(make_record("unit.wrapped"))
    assert not c.retryable and "missing a required argument: 'x'" in c.failure.message


async def test_async_timeout_uses_record_then_default() -> None:
    # The body sleeps 10 s: a TimeoutError is the record's 100 ms.
    c = await run_one(make_record("sleep", 10, timeout_ms=100))
    assert c.failure.type == "TimeoutError" and "0.1s" in c.failure.message
    c = await run_one(make_record("sleep", 10), default_timeout=0.1)
    assert c.failure.type == "TimeoutError" and "0.1s" in c.failure.message


async def test_timeout_error_raised_by_the_task_is_its_own(extra_tasks: threading.Event) -> None:
    c = await run_one(make_record("unit.raises_timeout"))
    assert c.failure.type == "TimeoutError" and c.failure.message == "my own"


async def test_system_exit_in_a_task_fails_the_attempt_only(extra_tasks: threading.Event) -> None:
    c = await run_one(make_record("unit.sys_exit"))
    assert not c.success and c.failure.type == "SystemExit"


async def test_sync_timeout_from_the_task_definition(extra_tasks: threading.Event) -> None:
    runner = Runner(concurrency=1, default_timeout=30, worker="w")
    try:
        c = await runner.execute(make_record("unit.blocked"))
        assert c.failure.type == "TimeoutError"
        # concurrency=1 and the only thread is stuck: a fresh executor still runs sync work.
        c = await asyncio.wait_for(runner.execute(make_record("add", 1, 2)), 2)
        assert c.result_json == b"3"
    finally:
        extra_tasks.set()
        runner.close()


async def test_runner_reports_and_limits_concurrency() -> None:
    changes: list[int] = []
    loop = asyncio.get_running_loop()

    def on_change() -> None:  # a flusher, as in the worker process: next loop iteration
        changes.append(1)
        loop.call_soon(runner.notify_flushed)

    runner = Runner(concurrency=2, default_timeout=30, worker="w0", on_change=on_change)
    recs = [make_record("sleep", 0.2) for _ in range(3)]
    for r in recs:
        runner.submit(r)
    runner.submit(recs[0])  # duplicate delivery: ignored
    for _ in range(5):
        await asyncio.sleep(0)
    assert len(runner.started) == 2 and len(runner.tasks) == 3
    await asyncio.wait(list(runner.tasks.values()))
    report = runner.take_report()
    assert report is not None
    assert [r.task_id for r in report.started] == [r.id for r in recs]  # third started after a slot freed
    assert {c.ref.task_id for c in report.completed} == {r.id for r in recs}
    assert all(c.ref.worker_id == "w0" and c.ref.lease_token for c in report.completed)
    assert runner.take_report() is None and changes
    runner.close()


async def test_stop_releases_started_and_waiting_attempts() -> None:
    runner = Runner(concurrency=1, default_timeout=30, worker="w")
    running, waiting = make_record("sleep", 30), make_record("sleep", 30)
    runner.submit(running)
    runner.submit(waiting)
    for _ in range(3):
        await asyncio.sleep(0)
    await runner.stop(grace=2)
    report = runner.take_report()
    assert report is not None
    released = {r.ref.task_id: r.resume_requested for r in report.released}
    assert released == {running.id: True, waiting.id: False}
    runner.submit(make_record("add", 1, 1))  # after stop: released at once
    assert runner.take_report().released[0].resume_requested is False  # type: ignore[union-attr]
    runner.close()
