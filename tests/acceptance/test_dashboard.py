"""The web dashboard in a real browser (Debian's chromium driven by Playwright) against
a real cluster with tokens: tasks appear and finish live, logs stream while a task
runs, cancel and pause work from the page, and a read-only token is refused both.

With TASKYARD_UPDATE_SCREENSHOTS=1 the run rewrites docs/images/dashboard-*.png
(``make screenshots``); otherwise the screenshots go to the test's tmp dir."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import hashlib
import re
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2
from playwright.sync_api import ConsoleMessage, Page, expect, sync_playwright
from support import ports
from support.chromium import CHROMIUM, CHROMIUM_ARGS, require_chromium, screenshot
from support.cluster import Cluster
from support.waiting import wait_until

from taskyard.v1 import (
    queue_service_pb2,
    queue_service_pb2_grpc,
    schedule_pb2,
    schedule_service_pb2,
    schedule_service_pb2_grpc,
    task_pb2,
    task_service_pb2,
    task_service_pb2_grpc,
)

pytestmark = pytest.mark.timeout(180)

VIEWPORT = {"width": 1280, "height": 800}
S = task_pb2.TaskState


@dataclasses.dataclass
class Dashboard:
    cluster: Cluster
    url: str
    admin: str
    reader: str
    channel: grpc.Channel

    def auth(self, token: str | None = None) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {token or self.admin}"),)

    @property
    def tasks(self) -> Any:
        return task_service_pb2_grpc.TaskServiceStub(self.channel)

    @property
    def queues(self) -> Any:
        return queue_service_pb2_grpc.QueueServiceStub(self.channel)

    def submit(self, name: str, *args: Any, queue: str = "", **kwargs: Any) -> str:
        spec = task_pb2.TaskSpec(name=name, queue=queue)
        spec.args.extend(args)
        if kwargs:
            spec.kwargs.update(kwargs)
        reply = self.tasks.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec), metadata=self.auth())
        return str(reply.task.id)

    def task(self, task_id: str) -> task_pb2.Task:
        return self.tasks.GetTask(task_service_pb2.GetTaskRequest(id=task_id), metadata=self.auth()).task

    def wait_state(self, task_id: str, state: int, timeout: float = 30) -> task_pb2.Task:
        def reached() -> task_pb2.Task | None:
            task = self.task(task_id)
            return task if task.state == state else None

        return wait_until(
            reached,
            timeout,
            lambda: f"task {task_id} in {S.Name(state)}, it is {S.Name(self.task(task_id).state)}",
        )

    def queue(self, name: str) -> queue_service_pb2.QueueInfo | None:
        status = self.queues.GetQueueStatus(queue_service_pb2.GetQueueStatusRequest(), metadata=self.auth())
        return {q.name: q for q in status.queues}.get(name)


@pytest.fixture
def dashboard(cluster_factory: Callable[..., Cluster], tmp_path: Path) -> Iterator[Dashboard]:
    admin, reader = (f"{who}-{secrets.token_urlsafe(24)}" for who in ("adm", "rd"))
    tokens = tmp_path / "tokens"
    tokens.write_text(
        f"sha256:{hashlib.sha256(admin.encode()).hexdigest()}  admin  ops\n{reader}  read  viewer\n"
    )
    port = ports.free_port()
    cluster = cluster_factory(
        start=False, http_port=port, grpc_tokens_file=str(tokens), workers=1, concurrency=4
    )
    cluster.start()
    channel = grpc.insecure_channel(cluster.target)
    d = Dashboard(
        cluster=cluster, url=f"http://127.0.0.1:{port}/", admin=admin, reader=reader, channel=channel
    )

    def ready() -> bool:
        try:
            d.submit("noop")
        except grpc.RpcError as exc:
            if exc.code() not in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNAVAILABLE):
                raise
            return False
        return True

    wait_until(ready, 45, lambda: f"a pool serving 'noop'\n{cluster.logs_tail()}")
    try:
        yield d
    finally:
        channel.close()


@dataclasses.dataclass
class Browser:
    page: Page
    errors: list[str]

    def use_token(self, token: str) -> None:
        self.page.get_by_label("Token").fill(token)
        self.page.get_by_role("button", name="Use", exact=True).click()

    def go(self, url: str) -> None:
        self.page.goto(url)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    with chromium(tmp_path) as opened:
        yield opened


@contextlib.contextmanager
def chromium(tmp_path: Path, **options: Any) -> Iterator[Browser]:
    """A page in Debian's chromium; ``options`` for its context (timezone_id, locale)."""
    require_chromium()
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            viewport=VIEWPORT,  # type: ignore[arg-type]
            **options,
        )
        page = context.new_page()
        errors: list[str] = []

        def on_console(message: ConsoleMessage) -> None:
            if message.type == "error":
                errors.append(message.text)

        page.on("console", on_console)
        page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
        try:
            yield Browser(page=page, errors=errors)
        finally:
            context.close()


def make_schedule(d: Dashboard) -> None:
    stub = schedule_service_pb2_grpc.ScheduleServiceStub(d.channel)
    for name, every in (("hourly-report", 3600), ("minute-noop", 60)):
        schedule = schedule_pb2.Schedule(
            name=name,
            task=task_pb2.TaskSpec(name="report" if name == "hourly-report" else "noop"),
            interval=duration_pb2.Duration(seconds=every),
        )
        stub.CreateSchedule(schedule_service_pb2.CreateScheduleRequest(schedule=schedule), metadata=d.auth())


def test_tasks_appear_finish_and_stream_logs_live(
    dashboard: Dashboard, browser: Browser, tmp_path: Path
) -> None:
    d, page = dashboard, browser.page
    browser.go(d.url + "#/tasks")
    browser.use_token(d.admin)
    expect(page.locator("#tasks tbody tr").first).to_be_visible()
    page.evaluate("window.__notReloaded = true")

    quick = d.submit("chatty", 5)
    row = page.locator(f'#tasks tr[data-task-id="{quick}"]')
    expect(row).to_be_visible(timeout=1000)
    expect(row.locator('[data-state="SUCCESS"]')).to_be_visible(timeout=30_000)
    assert page.evaluate("window.__notReloaded") is True

    row.get_by_role("link", name="chatty").click()
    expect(page.locator("#result")).to_contain_text("5")
    expect(page.locator("#logs")).to_contain_text("line 4")

    # A slower one, watched from its page while it writes: lines arrive before it is done.
    slow = d.submit("chatty", 40, batch=1, pause=0.1)
    page.goto(f"{d.url}#/tasks/{slow}")
    page.evaluate("window.__notReloaded = true")
    logs = page.locator("#logs")
    expect(logs).to_contain_text("line 2", timeout=15_000)
    seen_early = logs.locator(".log").count()
    assert d.task(slow).state != S.TASK_STATE_SUCCESS or seen_early < 40, "no line was seen while it ran"
    expect(logs).to_contain_text("line 39", timeout=30_000)
    expect(page.locator('h1 [data-state="SUCCESS"]')).to_be_visible(timeout=30_000)
    expect(page.locator("#result")).to_contain_text("40")
    expect(page.locator("#progress")).to_contain_text("100%")
    assert page.evaluate("window.__notReloaded") is True
    screenshot(page, "task", tmp_path)

    for _ in range(3):
        d.submit("add", 2, 3)
    d.submit("fail", "a failure for the screenshot")
    page.goto(d.url + "#/tasks")
    expect(page.locator("#tasks tbody tr")).to_have_count(7)  # 2 chatty, 3 add, 1 fail, 1 noop probe
    expect(page.locator('#tasks [data-state="FAILURE"]')).to_be_visible(timeout=30_000)
    screenshot(page, "tasks", tmp_path)

    page.goto(d.url + "#/overview")
    expect(page.locator(".pool")).to_have_count(1)
    expect(page.locator("#live")).to_have_text("live")
    burst = [d.submit("chatty", 20, batch=5, pause=0.05) for _ in range(12)]
    d.wait_state(burst[-1], S.TASK_STATE_SUCCESS)
    expect(page.locator(".chart .bar.filled").first).to_be_attached()
    # 2 chatty, 3 add, the noop of the readiness probe, the burst of 12.
    expect(page.locator('#queues tr[data-queue="default"] [data-count="succeeded"]')).to_have_text("18")
    screenshot(page, "overview", tmp_path)

    make_schedule(d)
    page.goto(d.url + "#/schedules")
    expect(page.locator('#schedules tr[data-schedule="hourly-report"]')).to_be_visible()
    screenshot(page, "schedules", tmp_path)
    assert browser.errors == []


def test_cancel_and_pause_from_the_page_and_a_read_only_token_cannot(
    dashboard: Dashboard, browser: Browser
) -> None:
    d, page = dashboard, browser.page
    running = d.submit("sleep", 60)
    d.wait_state(running, S.TASK_STATE_RUNNING)
    browser.go(f"{d.url}#/tasks/{running}")
    browser.use_token(d.admin)
    expect(page.locator('h1 [data-state="RUNNING"]')).to_be_visible()
    page.get_by_role("button", name="Cancel task").click()
    expect(page.locator("#notice")).to_contain_text("cancelled")
    cancelled = d.wait_state(running, S.TASK_STATE_CANCELLED)
    assert cancelled.cancel_step != task_pb2.CANCEL_STEP_UNSPECIFIED
    step = task_pb2.CancelStep.Name(cancelled.cancel_step).removeprefix("CANCEL_STEP_").lower()
    expect(page.locator('[data-fact="cancel"]')).to_contain_text(step)

    page.goto(d.url + "#/overview")
    page.get_by_label("Queue", exact=True).fill("held")
    page.get_by_role("button", name="Pause queue", exact=True).click()
    expect(page.locator("#notice")).to_contain_text("queue held paused")
    held = [d.submit("noop", queue="held") for _ in range(3)]
    # Another queue's task runs meanwhile: the held ones are held, not just late.
    d.wait_state(d.submit("add", 1, 2), S.TASK_STATE_SUCCESS)
    assert {d.task(t).state for t in held} == {S.TASK_STATE_QUEUED}
    expect(page.locator('#queues tr[data-queue="held"] .badge.paused')).to_be_visible(timeout=10_000)

    # Read-only: the gateway refuses, the page says so, nothing changes.
    other = d.submit("sleep", 60)
    d.wait_state(other, S.TASK_STATE_RUNNING)
    page.get_by_role("button", name="Forget").click()
    browser.use_token(d.reader)
    page.goto(f"{d.url}#/tasks/{other}")
    expect(page.locator('h1 [data-state="RUNNING"]')).to_be_visible()
    page.get_by_role("button", name="Cancel task").click()
    expect(page.locator("#notice")).to_contain_text("PERMISSION_DENIED")
    assert d.task(other).state == S.TASK_STATE_RUNNING and not d.task(other).cancel_requested

    page.goto(d.url + "#/overview")
    page.get_by_role("button", name="Resume queue held").click()
    expect(page.locator("#notice")).to_contain_text("PERMISSION_DENIED")
    page.get_by_label("Queue", exact=True).fill("default")
    page.get_by_role("button", name="Pause queue", exact=True).click()
    expect(page.locator("#notice")).to_contain_text("PERMISSION_DENIED")
    held_queue, default_queue = d.queue("held"), d.queue("default")
    assert held_queue is not None and held_queue.paused
    assert default_queue is None or not default_queue.paused
    assert {d.task(t).state for t in held} == {S.TASK_STATE_QUEUED}
    # The refusals are answers (403), which chromium logs as failed loads: nothing else.
    assert [e for e in browser.errors if "status of 403" not in e] == []


def test_without_auth_a_first_look_shows_the_last_minutes_failures_and_utc_times(
    cluster_factory: Callable[..., Cluster], tmp_path: Path
) -> None:
    port = ports.free_port()
    cluster = cluster_factory(start=False, http_port=port, workers=1, concurrency=2)
    cluster.start()
    url = f"http://127.0.0.1:{port}/"
    channel = grpc.insecure_channel(cluster.target)
    tasks = task_service_pb2_grpc.TaskServiceStub(channel)

    def submitted(name: str, *args: Any, **spec: Any) -> str | None:
        task = task_pb2.TaskSpec(name=name, **spec)
        task.args.extend(args)
        try:
            reply = tasks.SubmitTask(task_service_pb2.SubmitTaskRequest(task=task), timeout=10)
        except grpc.RpcError as exc:
            if exc.code() not in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNAVAILABLE):
                raise
            return None
        return str(reply.task.id)

    done = wait_until(
        lambda: submitted("chatty", 2), 45, lambda: f"a pool serving 'chatty'\n{cluster.logs_tail()}"
    )
    failed = submitted("fail", "on purpose", max_retries=0)
    assert failed is not None
    final = {
        t: tasks.WaitTask(
            task_service_pb2.WaitTaskRequest(id=t, timeout=duration_pb2.Duration(seconds=30)), timeout=40
        ).task
        for t in (done, failed)
    }
    channel.close()
    assert final[done].state == S.TASK_STATE_SUCCESS and final[failed].state == S.TASK_STATE_FAILURE
    record = final[failed]
    # A browser whose own clock is 12-hour and far from UTC: the page must not use it.
    with chromium(tmp_path, timezone_id="Pacific/Honolulu", locale="en-US") as browser:
        page = browser.page
        # The first page this gateway serves: nothing finishes from here on, and the
        # chart shows the tasks that finished before it opened.
        browser.go(url + "#/overview")
        expect(page.locator(".chart .bar.filled").first).to_be_attached()
        # No tokens on this gateway: no token box.
        expect(page.locator("#token-form")).to_be_hidden()

        browser.go(f"{url}#/tasks/{failed}")
        result = page.locator("#result")
        expect(result).to_contain_text("failed: ValueError on purpose")
        expect(result).not_to_contain_text("no result yet")
        created = record.created_at.ToDatetime(tzinfo=dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        expect(page.locator('[data-fact="created"]')).to_have_text(created)
        expect(page.locator('[data-fact="finished"]')).to_have_text(
            re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$")
        )

        browser.go(f"{url}#/tasks/{done}")
        expect(page.locator("#result")).to_contain_text("2")
        when = page.locator("#logs .log .when").first
        expect(when).to_have_text(re.compile(r"^\d\d:\d\d:\d\d\.\d{3} UTC$"))
        assert browser.errors == []


def test_retry_is_offered_for_failures_only_and_an_answer_of_nothing_retried_is_said(
    dashboard: Dashboard, browser: Browser
) -> None:
    """RetryTasks retries FAILURE tasks only (a cancelled task never runs again): the
    page offers it for those alone, and says so when the gateway retried nothing."""
    d, page = dashboard, browser.page
    spec = task_pb2.TaskSpec(name="fail", max_retries=0)
    failed = str(d.tasks.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec), metadata=d.auth()).task.id)
    d.queues.PauseQueue(queue_service_pb2.PauseQueueRequest(queue="held"), metadata=d.auth())
    held = d.submit("noop", queue="held")
    d.tasks.CancelTask(task_service_pb2.CancelTaskRequest(id=held), metadata=d.auth())
    d.wait_state(held, S.TASK_STATE_CANCELLED)
    d.wait_state(failed, S.TASK_STATE_FAILURE)

    browser.go(f"{d.url}#/tasks/{held}")
    browser.use_token(d.admin)
    # The title and the actions are drawn together: once the badge shows, so would a button.
    expect(page.locator('h1 [data-state="CANCELLED"]')).to_be_visible()
    expect(page.get_by_role("button", name="Cancel task")).to_have_count(0)
    expect(page.get_by_role("button", name="Retry task")).to_have_count(0)

    page.goto(f"{d.url}#/tasks/{failed}")
    expect(page.locator('h1 [data-state="FAILURE"]')).to_be_visible()
    page.get_by_role("button", name="Retry task").click()
    expect(page.locator("#notice.ok")).to_contain_text("1 task(s) retried")
    wait_until(
        lambda: (t := d.task(failed)).attempt == 2 and t.state == S.TASK_STATE_FAILURE,
        30,
        "the retried task to fail again",
    )

    page.goto(f"{d.url}#/tasks?state=FAILURE&queue=held")
    page.get_by_role("button", name="Retry these failed tasks").click()
    expect(page.locator("#notice.warn")).to_contain_text("not retried: no failed task matches these filters")
    assert d.task(held).state == S.TASK_STATE_CANCELLED
    assert browser.errors == []
