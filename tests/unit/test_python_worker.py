"""The Python worker over the public protocol (taskyard.client.worker) against a stand-in
for the gateway's side of WorkerService (tests/support/worker_gateway.py): the order of
its messages, its outcomes, cancels, revokes, timeouts, drain, heartbeats, refusal and
reconnection, and its slots. (Against a live suite: the worker conformance scenarios,
tests/acceptance/test_worker_conformance.py.)"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import re
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from support.worker_gateway import TOKEN, WAIT, FakeGateway, Stream, attempt, ref, serving

from taskyard.client import TaskyardError, worker_session, worker_tracing
from taskyard.client.worker import AttemptContext, Fatal, RetryAfter, Worker

pytestmark = pytest.mark.timeout(60)


@contextlib.asynccontextmanager
async def running(worker: Worker, gateway: FakeGateway) -> AsyncIterator[tuple[Stream, asyncio.Task[None]]]:
    """The worker connected to the fake: its stream, and the task of its run()."""
    ready: asyncio.Queue[str] = asyncio.Queue()
    runner = asyncio.create_task(worker.run(ready=ready.put_nowait))
    try:
        stream = await gateway.next_stream()
        assert await asyncio.wait_for(ready.get(), WAIT) == stream.worker_id
        yield stream, runner
    finally:
        runner.cancel()
        with contextlib.suppress(BaseException):
            await runner


def make_worker(target: str, **options: Any) -> Worker:
    worker = Worker(target, token=TOKEN, **options)

    @worker.task
    async def echo(ctx: AttemptContext, value: Any) -> Any:
        return value

    return worker


async def test_hello_declares_the_tasks_and_the_welcome_makes_it_ready() -> None:
    gateway = FakeGateway()
    async with serving(gateway) as target:
        worker = Worker(target, token=TOKEN, slots=3, name="billing-py")

        @worker.task(name="billing.charge", timeout=90, max_retries=2, rate_limit="10/s", concurrency=4)
        async def charge(ctx: AttemptContext, customer: str) -> None:
            return None

        @worker.task(limit_key="customer")
        def report(ctx: AttemptContext) -> None:
            return None

        async with running(worker, gateway) as (stream, _):
            hello = stream.hello
            assert (hello.worker_name, hello.slots) == ("billing-py", 3)
            assert hello.sdk.startswith("python/")
            first, second = hello.tasks
            assert first.name == "billing.charge" and first.timeout.seconds == 90
            assert first.HasField("max_retries") and first.max_retries == 2
            assert (first.rate_limit, first.concurrency) == ("10/s", 4)
            assert second.name == "report" and not second.HasField("max_retries")
            assert not second.HasField("timeout") and second.limit_key == "customer"
            assert stream.metadata["authorization"] == f"Bearer {TOKEN}"
            assert worker.worker_id == stream.worker_id


async def test_an_attempt_is_started_then_reported_with_its_result() -> None:
    gateway = FakeGateway()
    async with serving(gateway) as target:
        worker = make_worker(target)
        async with running(worker, gateway) as (stream, _):
            a = attempt("t1", "echo", {"a": [1, "x"]})
            stream.attempts(a)
            assert (await stream.expect("started")).ref == ref(a)
            outcome = await stream.expect("outcome")
            assert outcome.ref == ref(a) and not outcome.cancelled
            assert outcome.result.struct_value["a"][1] == "x"


async def test_failures_are_retryable_unless_fatal_and_retry_after_sets_the_wait() -> None:
    gateway = FakeGateway()
    async with serving(gateway) as target:
        worker = Worker(target, token=TOKEN)

        @worker.task
        async def broken(ctx: AttemptContext, kind: str) -> None:
            if kind == "fatal":
                raise Fatal("no")
            if kind == "later":
                try:
                    raise ConnectionError("busy")
                except ConnectionError as err:
                    raise RetryAfter(7.5) from err
            raise ValueError(f"bad {kind}")

        async with running(worker, gateway) as (stream, _):
            for kind in ("plain", "fatal", "later"):
                stream.attempts(attempt(kind, "broken", kind))
                await stream.expect("started")
                failure = (await stream.expect("outcome")).failure
                if kind == "plain":
                    assert (failure.type, failure.message, failure.retryable) == (
                        "ValueError",
                        "bad plain",
                        True,
                    )
                    assert "raise ValueError" in failure.traceback
                    assert not failure.HasField("retry_delay")
                elif kind == "fatal":
                    assert (failure.type, failure.message, failure.retryable) == ("Fatal", "no", False)
                else:
                    assert (failure.type, failure.message, failure.retryable) == (
                        "ConnectionError",
                        "busy",
                        True,
                    )
                    assert failure.retry_delay.ToMilliseconds() == 7500


async def test_a_result_that_is_not_json_or_too_large_fails_without_retry() -> None:
    gateway = FakeGateway(max_result_bytes=100)
    async with serving(gateway) as target:
        worker = make_worker(target)
        async with running(worker, gateway) as (stream, _):
            stream.attempts(attempt("big", "echo", "x" * 200))
            await stream.expect("started")
            failure = (await stream.expect("outcome")).failure
            assert (failure.type, failure.retryable) == ("ResultTooLarge", False)


async def test_a_cancel_sets_the_signal_and_the_outcome_says_cancelled() -> None:
    gateway = FakeGateway()
    async with serving(gateway) as target:
        worker = Worker(target, token=TOKEN)

        @worker.task
        async def wait_for_cancel(ctx: AttemptContext) -> str:
            await ctx.cancelled.wait()
            return ctx.cancelled.reason

        async with running(worker, gateway) as (stream, _):
            a = attempt("c1", "wait_for_cancel")
            stream.attempts(a)
            await stream.expect("started")
            stream.send(cancel={"ref": ref(a), "reason": "asked"})
            outcome = await stream.expect("outcome")
            assert outcome.cancelled and outcome.result.string_value == "cancelled"


async def test_a_revoked_attempt_frees_its_slot_at_once_and_its_late_outcome_is_still_sent() -> None:
    gateway = FakeGateway()
    gate = threading.Event()
    async with serving(gateway) as target:
        worker = make_worker(target, slots=1)

        @worker.task
        def stubborn(ctx: AttemptContext) -> str:
            gate.wait(WAIT)  # ignores the cancel
            return "done"

        async with running(worker, gateway) as (stream, _):
            first = attempt("s1", "stubborn")
            stream.attempts(first)
            await stream.expect("started")
            stream.send(cancel={"ref": ref(first)})
            stream.send(revoke={"ref": ref(first), "reason": "cancel not honoured"})
            second = attempt("e1", "echo", 1)
            stream.attempts(second)  # the one slot is free again
            assert (await stream.expect("started")).ref == ref(second)
            assert (await stream.expect("outcome")).ref == ref(second)
            gate.set()
            late = await stream.expect("outcome")
            assert late.ref == ref(first) and late.cancelled and late.result.string_value == "done"
            stream.send(refused={"ref": ref(first), "reason": "revoked"})


async def test_an_async_body_is_cancelled_at_its_deadline_and_fails_with_timeout() -> None:
    gateway = FakeGateway()
    async with serving(gateway) as target:
        worker = Worker(target, token=TOKEN)

        @worker.task
        async def forever(ctx: AttemptContext) -> None:
            await asyncio.Event().wait()

        async with running(worker, gateway) as (stream, _):
            stream.attempts(attempt("d1", "forever", deadline_in=0.2))
            await stream.expect("started")
            failure = (await stream.expect("outcome")).failure
            assert (failure.type, failure.retryable) == ("TimeoutError", True)


async def test_logs_and_progress_go_between_start_and_outcome_in_order() -> None:
    gateway = FakeGateway()
    async with serving(gateway) as target:
        worker = Worker(target, token=TOKEN)

        @worker.task
        def chatty(ctx: AttemptContext) -> str:  # a thread's lines, too
            for word in ("one", "two", "three"):
                ctx.log(word)
            ctx.progress(0.5, "half")
            ctx.log("oops", level="warning")
            return "ok"

        async with running(worker, gateway) as (stream, _):
            a = attempt("l1", "chatty")
            stream.attempts(a)
            await stream.expect("started")
            lines = await stream.expect("logs")
            assert lines.ref == ref(a)
            assert [(x.level, x.message) for x in lines.lines] == [
                ("info", "one"),
                ("info", "two"),
                ("info", "three"),
            ]
            progress = await stream.expect("progress")
            assert (progress.fraction, progress.message) == (0.5, "half")
            assert [x.message for x in (await stream.expect("logs")).lines] == ["oops"]
            assert (await stream.expect("outcome")).result.string_value == "ok"


async def test_starts_and_outcomes_queued_together_go_as_one_reports_after_the_lines_before_them() -> None:
    gateway = FakeGateway()
    async with serving(gateway) as target:
        worker = Worker(target, token=TOKEN, slots=3)

        @worker.task
        async def quick(ctx: AttemptContext, talk: bool) -> None:
            if talk:
                ctx.log("before its outcome")

        async with running(worker, gateway) as (stream, _):
            # One Attempts: the three start in one turn of the loop, before the writer takes
            # the first start; their bodies end in one turn too, the first with a line.
            stream.attempts(
                attempt("r1", "quick", True), attempt("r2", "quick", False), attempt("r3", "quick", False)
            )
            assert [(await stream.expect("started")).ref.task_id for _ in range(3)] == ["r1", "r2", "r3"]
            assert [x.message for x in (await stream.expect("logs")).lines] == ["before its outcome"]
            assert [(await stream.expect("outcome")).ref.task_id for _ in range(3)] == ["r1", "r2", "r3"]
            wire = [m for m in stream.wire if m.WhichOneof("message") != "heartbeat"]
            assert [m.WhichOneof("message") for m in wire] == ["reports", "logs", "reports"]
            assert (len(wire[0].reports.started), len(wire[0].reports.outcomes)) == (3, 0)
            assert (len(wire[2].reports.started), len(wire[2].reports.outcomes)) == (0, 3)


async def test_a_child_is_submitted_with_this_task_as_its_parent() -> None:
    gateway = FakeGateway()
    async with serving(gateway) as target:
        worker = make_worker(target)

        @worker.task
        async def parent(ctx: AttemptContext, value: str) -> str:
            return await ctx.submit_child("echo", value)

        async with running(worker, gateway) as (stream, _):
            stream.attempts(attempt("p1", "parent", "hi"))
            await stream.expect("started")
            assert (await stream.expect("outcome")).result.string_value == "child-1"
            (child,) = gateway.submitted
            assert (child.name, child.parent_id, child.args[0]) == ("echo", "p1", "hi")


async def test_heartbeats_go_out_every_interval_the_welcome_names() -> None:
    gateway = FakeGateway(heartbeat=0.05)
    async with serving(gateway) as target, running(make_worker(target), gateway) as (stream, _):
        for _ in range(3):
            await stream.expect("heartbeat")


async def test_stop_drains_finishes_the_running_attempt_then_half_closes() -> None:
    gateway = FakeGateway()
    release = asyncio.Event()
    async with serving(gateway) as target:
        worker = Worker(target, token=TOKEN)

        @worker.task
        async def slow(ctx: AttemptContext) -> int:
            await release.wait()
            return 1

        async with running(worker, gateway) as (stream, runner):
            stream.attempts(attempt("r1", "slow"))
            await stream.expect("started")
            worker.stop()
            await stream.expect("drain")
            release.set()
            assert (await stream.expect("outcome")).result.number_value == 1
            assert await stream.next() is None  # the half-close
            assert not runner.done()  # it waits for the gateway to end the stream
            stream.end()
            await asyncio.wait_for(runner, WAIT)


async def test_a_wrong_token_ends_run_with_unauthenticated() -> None:
    gateway = FakeGateway()
    async with serving(gateway) as target:
        worker = Worker(target, token="wrong-token-0123456789")
        worker.task(name="noop")(lambda ctx: None)
        with pytest.raises(TaskyardError) as raised:
            await asyncio.wait_for(worker.run(), WAIT)
        assert raised.value.code == grpc.StatusCode.UNAUTHENTICATED


async def test_a_broken_stream_abandons_its_attempts_and_connects_again() -> None:
    gateway = FakeGateway()
    began, stopped = asyncio.Event(), asyncio.Event()
    async with serving(gateway) as target:
        worker = Worker(target, token=TOKEN)

        @worker.task
        async def hang(ctx: AttemptContext) -> None:
            try:
                began.set()
                await asyncio.Event().wait()
            finally:
                stopped.set()

        async with running(worker, gateway) as (stream, _):
            stream.attempts(attempt("b1", "hang"))
            await stream.expect("started")
            # The body is in its try (a task cancelled before its first step never gets
            # there: its finally would not run, and nothing would be left to stop).
            await asyncio.wait_for(began.wait(), WAIT)
            stream.end(grpc.StatusCode.UNAVAILABLE, "gateway stopping")
            again = await gateway.next_stream()
            await asyncio.wait_for(stopped.wait(), WAIT)
            assert again.hello.tasks[0].name == "hang"
            again.attempts(attempt("b2", "hang"))
            assert (await again.expect("started")).ref.task_id == "b2"  # nothing of b1 on the new stream
            assert worker.worker_id == again.worker_id  # its Welcome came before the attempt


async def test_slots_bound_the_attempts_running_at_once() -> None:
    gateway = FakeGateway()
    running_now, most = 0, 0
    turns: asyncio.Queue[asyncio.Event] = asyncio.Queue()
    async with serving(gateway) as target:
        worker = Worker(target, token=TOKEN, slots=2)

        @worker.task
        async def hold(ctx: AttemptContext) -> None:
            nonlocal running_now, most
            running_now += 1
            most = max(most, running_now)
            turn = asyncio.Event()
            turns.put_nowait(turn)
            await turn.wait()
            running_now -= 1

        async with running(worker, gateway) as (stream, _):
            stream.attempts(*(attempt(f"h{i}", "hold") for i in range(5)))  # more than its slots
            held = [await asyncio.wait_for(turns.get(), WAIT) for _ in range(2)]
            for _ in range(3):  # each one that ends lets the next one in
                held.pop(0).set()
                held.append(await asyncio.wait_for(turns.get(), WAIT))
            for turn in held:
                turn.set()
            outcomes: set[str] = set()
            while len(outcomes) < 5:
                msg = await stream.next()
                assert msg is not None
                if msg.WhichOneof("message") == "outcome":
                    outcomes.add(msg.outcome.ref.task_id)
            assert most == 2


def test_registration_refuses_bad_names_twice_the_same_name_and_bad_slots() -> None:
    worker = Worker("127.0.0.1:1", token="")
    worker.task(name="ok.name:1-x")(lambda ctx: None)
    with pytest.raises(ValueError, match="registered"):
        worker.task(name="ok.name:1-x")(lambda ctx: None)
    with pytest.raises(ValueError, match="letters"):
        worker.task(name="no spaces")(lambda ctx: None)
    with pytest.raises(ValueError, match="slots"):
        Worker("127.0.0.1:1", slots=0)
    with pytest.raises(ValueError, match="timeout"):
        worker.task(name="t", timeout=0)(lambda ctx: None)


def _guide_block() -> str:
    text = (Path(__file__).resolve().parents[2] / "docs/python-client.md").read_text()
    section = text[text.index("\n## Workers over the public protocol\n") :].split("\n## ", 2)[1]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found, "the guide's worker section has no python block"
    return found.group(1)


def test_the_guides_worker_registers_its_functions_as_written() -> None:
    block = _guide_block()
    assert block.rstrip().endswith("asyncio.run(main())")
    scope: dict[str, Any] = {}
    exec(block.rstrip().removesuffix("asyncio.run(main())"), scope)  # all but running it
    worker: Worker = scope["worker"]
    assert (worker.target, worker.slots, worker.name) == ("gw.example.com:50051", 8, "billing-py")
    charge, report = worker.declarations
    assert (charge.name, charge.timeout, charge.max_retries) == (
        "billing.charge",
        datetime.timedelta(seconds=60),
        3,
    )
    assert (charge.concurrency, charge.limit_key) == (10, "customer")
    assert (report.name, report.timeout, report.max_retries) == ("report", None, None)


TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
PARENT_SPAN = "b7ad6b7169203331"


async def test_the_attempt_span_continues_the_tasks_trace_and_its_child_continues_the_span(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(worker_tracing, "_tracer", lambda: provider.get_tracer("test"))
    gateway = FakeGateway()
    async with serving(gateway) as target:
        worker = make_worker(target)

        @worker.task
        async def traced(ctx: AttemptContext, fail: bool) -> str:
            if fail:
                raise ValueError("no")
            return await ctx.submit_child("echo", 1)

        async with running(worker, gateway) as (stream, _):
            for task_id, fail in (("tr1", False), ("tr2", True)):
                a = attempt(task_id, "traced", fail)
                a.trace_headers["traceparent"] = f"00-{TRACE_ID}-{PARENT_SPAN}-01"
                stream.attempts(a)
                await stream.expect("started")
                await stream.expect("outcome")
    ok, failed = exporter.get_finished_spans()
    for span, task_id in ((ok, "tr1"), (failed, "tr2")):
        assert span.name == "process traced" and span.kind == SpanKind.CONSUMER
        assert span.parent is not None and f"{span.parent.span_id:016x}" == PARENT_SPAN
        assert f"{span.context.trace_id:032x}" == TRACE_ID
        assert span.attributes is not None
        assert (span.attributes["taskyard.task_id"], span.attributes["taskyard.attempt"]) == (task_id, 1)
    assert ok.status.status_code == StatusCode.OK
    assert failed.status.status_code == StatusCode.ERROR
    (child,) = gateway.submit_metadata
    assert child["traceparent"] == f"00-{TRACE_ID}-{ok.context.span_id:016x}-01"


async def test_log_batches_stay_within_half_the_gateways_largest_message() -> None:
    gateway = FakeGateway(max_message_bytes=64 * 1024)
    async with serving(gateway) as target:
        worker = Worker(target, token=TOKEN)

        @worker.task
        async def loud(ctx: AttemptContext) -> None:
            for i in range(20):
                ctx.log(f"{i} " + "x" * 10_000)

        async with running(worker, gateway) as (stream, _):
            stream.attempts(attempt("big-logs", "loud"))
            await stream.expect("started")
            seen: list[str] = []
            while (msg := await stream.next()) is not None and msg.WhichOneof("message") == "logs":
                assert msg.ByteSize() <= 32 * 1024
                seen += [line.message.split()[0] for line in msg.logs.lines]
            assert msg is not None and msg.WhichOneof("message") == "outcome"
            assert seen == [str(i) for i in range(20)]


async def test_a_gateway_that_sends_no_welcome_is_left_for_a_new_stream(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(worker_session, "WELCOME_SECONDS", 0.2)
    gateway = FakeGateway(unanswered=1)
    async with serving(gateway) as target, running(make_worker(target), gateway) as (stream, _):
        assert gateway.hellos == 2
        stream.attempts(attempt("w1", "echo", 1))
        await stream.expect("started")
