"""The Jaeger web UI in a real browser: Debian's chromium, driven by Playwright (its
own browser download is never used; ``tools/install-tools.sh browser`` installs it).

``spans_shown(ui_url, trace_id)`` opens a trace's page the way a user does and
returns the span names the page shows::

    names = spans_shown("http://127.0.0.1:16686", trace_id, expect={"process add"})
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import urllib.error
import urllib.request
from collections.abc import Collection, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, sync_playwright

from support.chromium import CHROMIUM, CHROMIUM_ARGS, require_chromium
from support.waiting import wait_until

# Tall enough that the timeline (a virtualised list) draws a few dozen span rows at once.
VIEWPORT = {"width": 1400, "height": 2000}
# A trace page's span rows: the service, then the operation (jaeger-ui's SpanBarRow).
SPAN_ROW_OPERATION = ".span-name-wrapper .endpoint-name"
SPAN_ROW_SERVICE = ".span-name-wrapper .span-svc-name"
# The page says so when the query API has no such trace (yet).
NOT_FOUND = ".ErrorMessage"
# How long the UI may take to draw a page once its data is there (a slow, shared machine).
DRAW_TIMEOUT_MS = 15_000


@contextlib.contextmanager
def chromium_page(profile_dir: Path | None = None) -> Iterator[Page]:
    """A page in headless chromium, closed at the end."""
    require_chromium()
    with contextlib.ExitStack() as stack:
        if profile_dir is None:
            profile_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ty-chromium-")))
        p = stack.enter_context(sync_playwright())
        context = p.chromium.launch_persistent_context(
            str(profile_dir),
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            viewport=VIEWPORT,  # type: ignore[arg-type]
        )
        stack.callback(context.close)
        yield context.new_page()


def trace_page_url(ui_url: str, trace_id: str) -> str:
    return f"{ui_url.rstrip('/')}/trace/{trace_id}"


def _shown(page: Page) -> list[str]:
    return [text.strip() for text in page.locator(SPAN_ROW_OPERATION).all_inner_texts()]


def _operations_in_api(ui_url: str, trace_id: str) -> set[str]:
    """The operation names Jaeger's query API holds for the trace (none while it has none)."""
    try:
        with urllib.request.urlopen(f"{ui_url.rstrip('/')}/api/traces/{trace_id}", timeout=5) as reply:
            found = json.load(reply).get("data") or []
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return set()
        raise
    return {span["operationName"] for trace in found for span in trace.get("spans", [])}


def spans_shown_on(
    page: Page, ui_url: str, trace_id: str, *, expect: Collection[str] = (), timeout: float = 30.0
) -> list[str]:
    """Open the trace's page on ``page`` and return the operation names of the span rows it
    draws, once it draws at least one row and every name in ``expect``. Spans reach Jaeger
    in batches from several processes: the page is opened once the query API (which the
    UI reads) holds them all, within ``timeout``; a page that then does not draw them
    fails the test with what it did show."""
    url = trace_page_url(ui_url, trace_id)
    wanted = set(expect)

    def all_held() -> set[str] | None:
        found = _operations_in_api(ui_url, trace_id)
        return found if found and wanted <= found else None

    held = wait_until(
        all_held,
        timeout,
        f"trace {trace_id} with spans {sorted(wanted)} in Jaeger's query API ({ui_url})",
        interval=0.2,
    )
    page.goto(url)
    try:
        page.locator(SPAN_ROW_OPERATION).first.wait_for(timeout=DRAW_TIMEOUT_MS)
        for name in wanted:
            page.locator(SPAN_ROW_OPERATION, has_text=name).first.wait_for(timeout=DRAW_TIMEOUT_MS)
    except PlaywrightError:
        pass  # reported below with what the page does show
    shown = _shown(page)
    if not shown or not wanted <= set(shown):
        body = page.locator("body").inner_text()[:1000]
        pytest.fail(
            f"{url} shows spans {shown}, not all of {sorted(wanted)} (the query API holds "
            f"{sorted(held)}); the page reads:\n{body}"
        )
    return shown


def spans_shown(
    ui_url: str, trace_id: str, *, expect: Collection[str] = (), timeout: float = 30.0
) -> list[str]:
    """``spans_shown_on`` in a fresh headless chromium, closed after."""
    with chromium_page() as page:
        return spans_shown_on(page, ui_url, trace_id, expect=expect, timeout=timeout)


def services_shown_on(page: Page) -> list[str]:
    """The service names of the span rows on the page ``spans_shown_on`` left it at."""
    return [text.strip() for text in page.locator(SPAN_ROW_SERVICE).all_inner_texts()]
