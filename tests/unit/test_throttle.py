"""RetryAfter and the HTTP 429/503 helper (worker_pool/throttle.py), and the outcome
a throttled attempt reports."""

from __future__ import annotations

import asyncio
import datetime

import pytest

from taskyard.bus.v1 import task_record_pb2
from taskyard.worker_pool import RetryAfter, raise_for_throttle, registry, task, throttle_of
from taskyard.worker_pool.attempts import outcome_of
from taskyard.worker_pool.throttle import MAX_RETRY_AFTER, MIN_RETRY_AFTER, retry_after_seconds
from taskyard.worker_pool.worker import Runner


def test_429_and_503_become_retry_after_with_the_header_delay() -> None:
    exc = throttle_of(503, {"Retry-After": "2"})
    assert exc is not None and exc.seconds == 2.0 and "HTTP 503" in str(exc)
    found = throttle_of(429, {"retry-after": "7"})
    assert found is not None and found.seconds == 7.0
    assert throttle_of(200, {"Retry-After": "2"}) is None
    assert throttle_of(500) is None
    default = throttle_of(503, {}, default=1.5)
    assert default is not None and default.seconds == 1.5
    with pytest.raises(RetryAfter):
        raise_for_throttle(429, {"Retry-After": "1"})
    raise_for_throttle(404, {})  # any other status returns


def test_an_http_date_and_bad_values() -> None:
    now = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=datetime.UTC)
    assert retry_after_seconds("Thu, 01 Jan 2026 12:00:30 GMT", now=now) == 30.0
    assert retry_after_seconds("Thu, 01 Jan 2026 11:00:00 GMT", now=now) == 0.0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("999999999") == MAX_RETRY_AFTER
    with pytest.raises(ValueError, match="0 to"):
        RetryAfter(-1)
    with pytest.raises(ValueError, match="0 to"):
        RetryAfter(float("nan"))


def test_a_throttled_attempt_reports_its_delay_and_is_a_retry_whatever_its_budget() -> None:
    @task(name="throttled_for_test", max_retries=0)
    def body() -> None:
        raise RetryAfter(2.5)

    try:
        runner = Runner(concurrency=1, default_timeout=10.0, worker="w")
        record = task_record_pb2.TaskRecord(id="t", name="throttled_for_test", attempt=1)
        completion = asyncio.run(runner.execute(record))
        runner.close()
    finally:
        registry.unregister("throttled_for_test")
    assert not completion.success and completion.retryable
    assert completion.failure.throttled and completion.failure.type == "RetryAfter"
    assert completion.failure.retry_after.ToMilliseconds() == 2500
    assert completion.retry_delay_ms == 2500
    completion.max_retries = 0
    assert outcome_of(completion, charged=5) == "retry"


@pytest.mark.parametrize(
    ("seconds", "delay_ms"), [(0.001, 100), (0.0004, 100), (0.1, 100), (0.25, 250), (0, 0)]
)
def test_a_tiny_retry_after_waits_at_least_the_floor(seconds: float, delay_ms: int) -> None:
    """A throttled attempt spends no retry: "retry after 1 ms" must not make the task spin."""

    @task(name="throttled_briefly_for_test", max_retries=0)
    def body() -> None:
        raise RetryAfter(seconds)

    try:
        runner = Runner(concurrency=1, default_timeout=10.0, worker="w")
        record = task_record_pb2.TaskRecord(id="t", name="throttled_briefly_for_test", attempt=1)
        completion = asyncio.run(runner.execute(record))
        runner.close()
    finally:
        registry.unregister("throttled_briefly_for_test")
    assert completion.failure.throttled
    # 0 is the task's backoff, filled in later (reports.py): never a 1 ms delay either.
    assert completion.retry_delay_ms == delay_ms
    assert delay_ms == 0 or delay_ms >= MIN_RETRY_AFTER * 1000
    assert completion.failure.retry_after.ToMilliseconds() == delay_ms


def test_the_guide_maps_a_503_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/writing-tasks.md's example, run with an httpx that answers 503, then 200."""
    import re
    import sys
    import types
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "writing-tasks.md").read_text()
    part = text.split('\n### A downstream that says "come back later"\n', 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```python\n(.*?)```", part, re.S)
    assert block is not None
    answers = [(503, {"Retry-After": "7"}), (200, {})]

    class Response:
        def __init__(self, status: int, headers: dict[str, str]) -> None:
            self.status_code, self.headers = status, headers

        def raise_for_status(self) -> None:
            assert self.status_code < 400

        def json(self) -> dict[str, bool]:
            return {"charged": True}

    fake = types.ModuleType("httpx")
    fake.post = lambda url, json: Response(*answers.pop(0))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "httpx", fake)
    namespace: dict[str, object] = {}
    try:
        exec(block.group(1), namespace)
        charge = namespace["charge"]
        assert callable(charge)
        with pytest.raises(RetryAfter) as raised:
            charge(1)
        assert raised.value.seconds == 7.0
        assert charge(1) == {"charged": True}
    finally:
        registry.unregister("charge")
