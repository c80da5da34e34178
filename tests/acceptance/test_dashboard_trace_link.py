"""The task page links every traced task to its trace in the tracing UI, from the
task's record: a task that logged nothing has its link too."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect, sync_playwright
from support import ports
from support.observability import tracing_env

from taskyard.cli.jaeger import Jaeger
from taskyard.client import TaskState

pytestmark = [pytest.mark.acceptance, pytest.mark.timeout(180)]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless=new", "--disable-gpu", "--no-first-run"]


@pytest.fixture
def page() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is not installed (tools/install-tools.sh browser)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser.new_page()
        finally:
            browser.close()


def test_a_task_that_logged_nothing_links_to_its_trace(
    jaeger: Jaeger, cluster_factory: Any, page: Any, tmp_path: Path
) -> None:
    port = ports.free_port()
    # The configurable template: the Jaeger UI's trace page of the task's trace id.
    template = f"{jaeger.query_url}/trace/{{trace_id}}?uiEmbed=v0"
    cluster = cluster_factory(env=tracing_env(jaeger), http_port=port, dashboard_trace_url=template)
    with cluster.client() as client:
        # "add" logs no line: the link can only come from the task's record.
        task = client.submit("add", 2, 3)
        done = client.wait(task.id, timeout=30)
        assert done.state == TaskState.SUCCESS
        assert not client.logs.page(task.id).lines
    (row,) = cluster.query(
        "SELECT trace_headers->>'traceparent' AS p FROM tasks WHERE id = $1::uuid", task.id
    )
    trace_id = row["p"].split("-")[1]
    assert done.trace_id == trace_id

    page.goto(f"http://127.0.0.1:{port}/#/tasks/{task.id}")
    link = page.locator("#trace-link")
    expect(link).to_be_visible(timeout=15_000)
    expect(link).to_have_attribute("href", template.replace("{trace_id}", trace_id))
    expect(link).to_contain_text(trace_id[:8])
