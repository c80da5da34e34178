"""Dead letters on the dashboard, in a real browser against a real cluster: the Failures
page groups them by cause with their counts; a group's page lists its dead letters, a
dry run counts them and changes nothing, a confirmed redrive goes to its own page whose
progress reaches DONE with every task re-queued, and the tasks run again (their second
attempt succeeds, linked to the redrive). A slow redrive is paused, resumed and
cancelled from its page: its task stays a dead letter. The redrives list says who asked
and how far each went; a note's markup stays text."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from playwright.sync_api import ConsoleMessage, Dialog, Page, expect, sync_playwright
from support import ports
from support.chromium import CHROMIUM, CHROMIUM_ARGS, require_chromium, screenshot
from support.cluster import Cluster
from support.waiting import wait_until

from taskyard.v1 import (
    failure_service_pb2,
    failure_service_pb2_grpc,
    task_pb2,
    task_service_pb2,
    task_service_pb2_grpc,
)

pytestmark = pytest.mark.timeout(240)

S = task_pb2.TaskState
NOTE = '<img src=x onerror="window.__injected = 1">payments are back'
# Long enough that a redrive's first task is not due while the test pauses it (its
# token bucket starts empty: the first task is due after 1 / rate seconds).
SLOW_RATE = 0.01


def no_markup(page: Page) -> None:
    """The note stayed text: no element was made of it, no script ran."""
    assert page.locator("main img").count() == 0
    assert page.evaluate("window.__injected") is None


@pytest.fixture
def page() -> Iterator[tuple[Page, list[str]]]:
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


def test_failures_page_groups_dry_run_confirmed_redrive_and_its_controls(
    cluster_factory: Callable[..., Cluster], page: tuple[Page, list[str]], tmp_path: Path
) -> None:
    browser, errors = page
    port = ports.free_port()
    cluster = cluster_factory(
        start=False, http_port=port, task_modules=("taskyard.examples", "support.tasks"), concurrency=4
    )
    cluster.start()
    url = f"http://127.0.0.1:{port}/"
    channel = grpc.insecure_channel(cluster.target)
    tasks = task_service_pb2_grpc.TaskServiceStub(channel)
    failures = failure_service_pb2_grpc.FailureServiceStub(channel)

    def submit(name: str, *args: Any) -> str:
        spec = task_pb2.TaskSpec(name=name)
        spec.args.extend(args)
        return str(tasks.SubmitTask(task_service_pb2.SubmitTaskRequest(task=spec), timeout=10).task.id)

    def get(task_id: str) -> task_pb2.Task:
        return tasks.GetTask(task_service_pb2.GetTaskRequest(id=task_id), timeout=10).task

    def serving() -> str | None:
        try:
            return submit("fail_first_attempt", "card 4242 declined")
        except grpc.RpcError as exc:
            if exc.code() not in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNAVAILABLE):
                raise
            return None

    # Three failures of one cause (their numbers differ, masked in the fingerprint), one of another.
    first = wait_until(serving, 45, lambda: f"a pool serving 'fail_first_attempt'\n{cluster.logs_tail()}")
    declined = [first] + [submit("fail_first_attempt", f"card {n} declined") for n in (17, 99)]
    other = submit("fail_without_retry", "no route to host")
    for task_id in [*declined, other]:
        wait_until(lambda t=task_id: get(t).state == S.TASK_STATE_FAILURE, 30, f"{task_id} to fail")
    group_id = get(first).failure.group_id
    assert group_id and all(get(t).failure.group_id == group_id for t in declined)
    other_group = get(other).failure.group_id
    assert other_group and other_group != group_id

    browser.goto(url + "#/failures")
    expect(browser.locator('nav a[data-page="failures"]')).to_have_attribute("aria-current", "page")
    row = browser.locator(f'#failure-groups tr[data-group="{group_id}"]')
    expect(row.locator('[data-cell="count"]')).to_have_text("3", timeout=15_000)
    expect(row.locator('[data-cell="error"]')).to_contain_text("ValueError")
    expect(row).to_contain_text("fail_first_attempt")
    other_row = browser.locator(f'#failure-groups tr[data-group="{other_group}"]')
    expect(other_row.locator('[data-cell="count"]')).to_have_text("1")
    screenshot(browser, "failures", tmp_path)

    # The group: its dead letters, then a dry run that changes nothing.
    row.locator("a").click()
    expect(browser).to_have_url(re.compile(f"#/failures/{group_id}$"))
    dead = browser.locator("#dead-letters tr[data-task-id]")
    expect(dead).to_have_count(3, timeout=15_000)
    expect(browser.locator(f'#dead-letters tr[data-task-id="{first}"] [data-cell="reason"]')).to_have_text(
        "retries exhausted"
    )
    expect(browser.locator('#group-facts [data-fact="dead letters"]')).to_have_text("3")
    browser.fill("#redrive-rate", "100")
    browser.fill("#redrive-note", NOTE)
    browser.click("#dry-run-button")
    expect(browser.locator("#dry-run-matched")).to_have_text("3")
    expect(browser.locator("#notice")).to_contain_text("dry run: 3 dead letter(s) would be redriven")
    assert [get(t).state for t in declined] == [S.TASK_STATE_FAILURE] * 3
    screenshot(browser, "failure-group", tmp_path)
    assert not list(failures.ListRedrives(failure_service_pb2.ListRedrivesRequest(), timeout=10).redrives)

    # The redrive, confirmed: its page follows it to DONE.
    asked: list[str] = []

    def accept(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.accept()

    browser.once("dialog", accept)
    browser.click("#redrive-button")
    expect(browser).to_have_url(re.compile(r"#/redrives/[^/]+$"))
    assert asked == ["Re-queue 3 dead letter(s) of this group, at most 100 a second?"]
    redrive_id = browser.url.rsplit("/", 1)[1]
    progress = browser.locator("#redrive-progress-text")
    expect(progress).to_have_attribute("data-state", "DONE", timeout=30_000)
    expect(progress).to_have_text("3 of 3 re-queued")
    expect(browser.locator('#redrive-facts [data-fact="by"]')).to_have_text("dev")
    expect(browser.locator('#redrive-facts [data-fact="note"]')).to_have_text(NOTE)
    items = browser.locator("#redrive-items tr[data-task-id]")
    expect(items).to_have_count(3)
    expect(items.locator('[data-cell="outcome"]')).to_have_text(["REQUEUED"] * 3)
    expect(browser.locator("#redrive-controls button")).to_have_count(0)
    no_markup(browser)
    screenshot(browser, "redrive", tmp_path)

    # The tasks ran again: their second attempt succeeded, linked to the redrive and the failure it came from.
    def succeeded(task_id: str) -> task_pb2.Task | None:
        task = get(task_id)
        return task if task.state == S.TASK_STATE_SUCCESS else None

    for task_id in declined:
        done = wait_until(lambda t=task_id: succeeded(t), 30, f"{task_id} to run again and succeed")
        assert (done.attempt, done.redrive_id, done.redriven_from_attempt) == (2, redrive_id, 1)
        assert [(f.attempt, f.redrive_id) for f in done.failures] == [(1, redrive_id)]
        assert done.dead_letter_reason == task_pb2.DEAD_LETTER_REASON_UNSPECIFIED
    browser.goto(f"{url}#/tasks/{first}")
    redriven = browser.locator('#task-facts [data-fact="redriven"]')
    expect(redriven).to_contain_text("from attempt 1")
    expect(redriven.locator("a")).to_have_attribute("href", f"#/redrives/{redrive_id}")
    expect(browser.locator(f'#attempts a[href="#/redrives/{redrive_id}"]')).to_have_text("redriven")

    # A slow redrive of the other group: paused, resumed, then cancelled before its first task.
    slow = failures.Redrive(
        failure_service_pb2.RedriveRequest(
            filter=failure_service_pb2.FailureFilter(group_id=other_group), rate=SLOW_RATE
        ),
        timeout=10,
    ).redrive
    browser.goto(f"{url}#/redrives/{slow.id}")
    expect(progress).to_have_attribute("data-state", "RUNNING", timeout=15_000)
    browser.click("#redrive-pause")
    expect(progress).to_have_attribute("data-state", "PAUSED")
    browser.click("#redrive-resume")
    expect(progress).to_have_attribute("data-state", "RUNNING")
    browser.once("dialog", accept)
    browser.click("#redrive-cancel")
    expect(progress).to_have_attribute("data-state", "CANCELLED")
    expect(progress).to_have_text("0 of 1 re-queued")
    assert asked[-1] == "Cancel this redrive? The tasks it has not re-queued yet stay dead letters."
    assert get(other).dead_letter_reason == task_pb2.DEAD_LETTER_REASON_RETRIES_EXHAUSTED

    # The list: the done redrive and the cancelled one, newest first; the first group is empty now.
    browser.goto(url + "#/failures")
    listed = browser.locator("#redrives tr[data-redrive]")
    expect(listed).to_have_count(2, timeout=15_000)
    expect(listed.nth(0)).to_have_attribute("data-redrive", slow.id)
    expect(listed.nth(0).locator('[data-cell="state"]')).to_have_text("CANCELLED")
    done_row = browser.locator(f'#redrives tr[data-redrive="{redrive_id}"]')
    expect(done_row.locator('[data-cell="state"]')).to_have_text("DONE")
    expect(done_row.locator('[data-cell="progress"]')).to_have_text("3 of 3 re-queued")
    expect(done_row.locator('[data-cell="by"]')).to_have_text("dev")
    expect(done_row).to_contain_text(NOTE)
    expect(browser.locator(f'#failure-groups tr[data-group="{group_id}"]')).to_have_count(0)
    expect(other_row.locator('[data-cell="count"]')).to_have_text("1")
    no_markup(browser)
    channel.close()
    assert errors == []
