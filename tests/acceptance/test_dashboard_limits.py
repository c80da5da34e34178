"""Flow control on the dashboard, in a real browser against a real cluster: the
Limits page lists the limits with their numbers and, once tasks use them, their
usage on the leading scheduler (keys and descriptions shown as text, never as
markup); the page of a task a full concurrency limit holds names the limit, the
key and the task holding its unit, that of a task a rate limit holds its next
admission; with the scheduler gone the limits are still
listed, and the page says no scheduler answered. Past 200 limits the page shows
the busiest and says how many it does not show."""

from __future__ import annotations

import re
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

from taskyard.gateway.dashboard import usage
from taskyard.v1 import (
    limit_pb2,
    limit_service_pb2,
    limit_service_pb2_grpc,
    task_pb2,
    task_service_pb2,
    task_service_pb2_grpc,
)

pytestmark = pytest.mark.timeout(180)

S = task_pb2.TaskState
# Markup in every string a user chooses: the page must show it as text.
KEY = '<img src=x onerror="window.__injected = 1">customer:42'
DESCRIPTION = "<b>one</b> export per customer at a time"


def no_markup(page: Page) -> None:
    """The key and the description stayed text: no element was made of them, no script ran."""
    assert page.locator("main img, main b").count() == 0
    assert page.evaluate("window.__injected") is None


@pytest.fixture
def page(tmp_path: Path) -> Iterator[tuple[Page, list[str]]]:
    require_chromium()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            opened = browser.new_page(viewport={"width": 1280, "height": 800})
            errors: list[str] = []

            def on_console(message: ConsoleMessage) -> None:
                if message.type == "error":
                    errors.append(message.text)

            opened.on("console", on_console)
            opened.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
            yield opened, errors
        finally:
            browser.close()


def test_limits_their_usage_and_the_gate_of_a_held_task_live(
    cluster_factory: Callable[..., Cluster], page: tuple[Page, list[str]], tmp_path: Path
) -> None:
    browser, errors = page
    port = ports.free_port()
    cluster = cluster_factory(start=False, http_port=port, workers=1, concurrency=4)
    cluster.start()
    url = f"http://127.0.0.1:{port}/"
    channel = grpc.insecure_channel(cluster.target)
    tasks = task_service_pb2_grpc.TaskServiceStub(channel)
    limits = limit_service_pb2_grpc.LimitServiceStub(channel)

    def submit(name: str, *args: Any, uses: tuple[limit_pb2.LimitUse, ...] = ()) -> str:
        spec = task_pb2.TaskSpec(name=name, limits=uses)
        spec.args.extend(args)
        return str(tasks.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec), timeout=10).task.id)

    def state(task_id: str) -> int:
        return int(tasks.GetTask(task_service_pb2.GetTaskRequest(id=task_id), timeout=10).task.state)

    def serving() -> bool:
        try:
            submit("noop")
        except grpc.RpcError as exc:
            if exc.code() not in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNAVAILABLE):
                raise
            return False
        return True

    wait_until(serving, 45, lambda: f"a pool serving 'noop'\n{cluster.logs_tail()}")
    exports = limit_pb2.Limit(
        name="exports",
        concurrency=limit_pb2.ConcurrencyLimit(max_units=1),
        per_key=True,
        description=DESCRIPTION,
    )
    payments = limit_pb2.Limit(
        name="payments",
        rate=limit_pb2.RateLimit(units=100, period=duration_pb2.Duration(seconds=1), burst=20),
    )
    downstream = limit_pb2.Limit(
        name="downstream",
        per_key=True,
        breaker=limit_pb2.CircuitBreaker(
            failure_threshold=5,
            window=duration_pb2.Duration(seconds=30),
            cool_down=duration_pb2.Duration(seconds=10),
        ),
    )
    for limit in (exports, payments, downstream):
        limits.CreateLimit(limit_service_pb2.CreateLimitRequest(limit=limit), timeout=10)

    browser.goto(url + "#/limits")
    expect(browser.locator('nav a[data-page="limits"]')).to_have_attribute("aria-current", "page")
    row = browser.locator('#limits tr[data-limit="exports"]')
    expect(row.locator('[data-cell="kind"]')).to_have_text("concurrency")
    expect(row.locator('[data-cell="numbers"]')).to_have_text("at most 1 at once")
    expect(row.locator('[data-cell="scope"]')).to_have_text("per key")
    expect(row).to_contain_text(DESCRIPTION)
    rate = browser.locator('#limits tr[data-limit="payments"]')
    expect(rate.locator('[data-cell="numbers"]')).to_have_text("100 per 1 s, burst 20")
    expect(rate.locator('[data-cell="scope"]')).to_have_text("global")
    breaker = browser.locator('#limits tr[data-limit="downstream"]')
    expect(breaker.locator('[data-cell="kind"]')).to_have_text("breaker")
    expect(breaker.locator('[data-cell="numbers"]')).to_have_text(
        "opens at 5 failures in 30 s, cool-down 10 s, 1 probe(s)"
    )

    # The scheduler reports the limit's usage once it applies it (it reads the limits
    # every 0.5 s): from then on every task using it is counted.
    expect(row.locator('[data-cell="in-use"]')).to_have_text("0", timeout=15_000)
    # Two tasks of one key: the first holds the key's one unit, the second waits for it.
    use = limit_pb2.LimitUse(limit="exports", key=KEY)
    holder = submit("sleep", 60, uses=(use,))
    wait_until(lambda: state(holder) == S.TASK_STATE_RUNNING, 30, "the first export to run")
    held = submit("sleep", 60, uses=(use,))
    # Live: the page was not reloaded, the counts came with the feed.
    expect(row.locator('[data-cell="in-use"]')).to_have_text("1", timeout=15_000)
    expect(row.locator('[data-cell="waiting"]')).to_have_text("1", timeout=15_000)
    expect(row.locator('[data-cell="admitted"]')).to_have_text("1")
    expect(row.locator('[data-cell="throttled"]')).to_have_text(re.compile(r"^[1-9]\d*$"))
    expect(row.locator('[data-cell="keys"]')).to_have_text("1")
    busiest = row.locator('[data-cell="busiest"] li')
    expect(busiest).to_have_count(1)
    expect(busiest).to_contain_text(KEY)
    assert busiest.get_attribute("data-key") == KEY
    assert state(held) == S.TASK_STATE_QUEUED
    no_markup(browser)
    screenshot(browser, "limits", tmp_path)

    browser.goto(f"{url}#/tasks/{held}")
    gate = browser.locator("#gate")
    expect(gate).to_have_attribute("data-reason", "CONCURRENCY_FULL", timeout=15_000)
    expect(gate.locator('[data-gate="limit"]')).to_have_text("exports")
    expect(gate.locator('[data-gate="key"]')).to_have_text(KEY)
    expect(gate.locator('[data-gate="held by"]')).to_contain_text(holder[:13])
    no_markup(browser)

    # One an hour: the second task waits for the next admission.
    hourly = limit_pb2.Limit(
        name="reports",
        rate=limit_pb2.RateLimit(units=1, period=duration_pb2.Duration(seconds=3600), burst=1),
    )
    limits.CreateLimit(limit_service_pb2.CreateLimitRequest(limit=hourly), timeout=10)
    wait_until(
        lambda: limits.GetLimit(limit_service_pb2.GetLimitRequest(name="reports"), timeout=10).limit.HasField(
            "usage"
        ),
        15,
        "the scheduler to apply the limit 'reports'",
    )
    report = (limit_pb2.LimitUse(limit="reports"),)
    first = submit("noop", uses=report)
    wait_until(lambda: state(first) == S.TASK_STATE_SUCCESS, 30, "the first report to run")
    second = submit("noop", uses=report)
    browser.goto(f"{url}#/tasks/{second}")
    expect(gate).to_have_attribute("data-reason", "RATE_LIMITED", timeout=15_000)
    expect(gate.locator('[data-gate="limit"]')).to_have_text("reports")
    expect(gate.locator('[data-gate="key"]')).to_have_text("(empty key)")
    expect(gate.locator('[data-gate="next admission"]')).to_have_text(
        re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$")
    )

    # The scheduler gone: the limits are the store's, their usage nobody's.
    browser.goto(url + "#/limits")
    expect(row.locator('[data-cell="in-use"]')).to_have_text("1")
    cluster.kill("scheduler")
    status = browser.locator("#limits-status")
    expect(status).to_have_attribute("data-scheduler", "silent", timeout=15_000)
    expect(status).to_contain_text("no scheduler answered")
    expect(row.locator('[data-cell="in-use"]')).to_have_text("-")
    expect(row.locator('[data-cell="numbers"]')).to_have_text("at most 1 at once")
    channel.close()
    assert errors == []


def test_past_two_hundred_limits_the_page_shows_the_busiest_and_says_how_many_are_not(
    cluster_factory: Callable[..., Cluster], page: tuple[Page, list[str]]
) -> None:
    browser, errors = page
    port = ports.free_port()
    cluster = cluster_factory(start=False, http_port=port, workers=1, concurrency=2)
    cluster.start()
    channel = grpc.insecure_channel(cluster.target)
    tasks = task_service_pb2_grpc.TaskServiceStub(channel)
    limits = limit_service_pb2_grpc.LimitServiceStub(channel)
    shown = usage.MAX_SHOWN
    # The busy one sorts last by name: only its usage can bring it on the page.
    for name in [f"limit-{i:05d}" for i in range(shown + 1)] + ["zz-busy"]:
        limit = limit_pb2.Limit(name=name, concurrency=limit_pb2.ConcurrencyLimit(max_units=1))
        limits.CreateLimit(limit_service_pb2.CreateLimitRequest(limit=limit), timeout=10)

    def submit() -> str:
        spec = task_pb2.TaskSpec(name="sleep", limits=[limit_pb2.LimitUse(limit="zz-busy")])
        spec.args.append(60)
        return str(tasks.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec), timeout=10).task.id)

    def running(task_id: str) -> bool:
        task = tasks.GetTask(task_service_pb2.GetTaskRequest(id=task_id), timeout=10).task
        return bool(task.state == S.TASK_STATE_RUNNING)

    def submitted() -> str | None:
        try:
            return submit()
        except grpc.RpcError as exc:
            if exc.code() not in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNAVAILABLE):
                raise
            return None

    holder: list[str] = []

    def serving() -> bool:
        task_id = submitted()
        if task_id is not None:
            holder.append(task_id)
        return task_id is not None

    wait_until(serving, 45, lambda: f"a pool serving 'sleep'\n{cluster.logs_tail()}")
    wait_until(lambda: running(holder[0]), 30, lambda: f"the busy limit's task to run\n{cluster.logs_tail()}")

    browser.goto(f"http://127.0.0.1:{port}/#/limits")
    rows = browser.locator("#limits tr[data-limit]")
    expect(rows.first).to_have_attribute("data-limit", "zz-busy", timeout=15_000)
    expect(rows.first.locator('[data-cell="in-use"]')).to_have_text("1")
    expect(rows).to_have_count(shown)
    expect(browser.locator("#limits-not-shown")).to_have_text("2 more limits not shown (busiest first)")
    # The idle ones by name after it: the last two by name are those left out.
    expect(rows.nth(1)).to_have_attribute("data-limit", "limit-00000")
    expect(rows.last).to_have_attribute("data-limit", f"limit-{shown - 2:05d}")
    expect(browser.locator(f'#limits tr[data-limit="limit-{shown:05d}"]')).to_have_count(0)
    channel.close()
    assert errors == []
