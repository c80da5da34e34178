"""Per-task retry options, Retry(delay=...), non-retryable types: core.retry,
@task(...) and the worker's Runner (injected randomness)."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from support.fake_scheduler import make_record

from taskyard.core.config import Settings
from taskyard.core.retry import Retry, RetryOptions, RetryPolicy, delay_ms
from taskyard.worker_pool import Retry as PublicRetry
from taskyard.worker_pool import registry, task
from taskyard.worker_pool.worker import Runner


class FixedRandom(random.Random):
    def __init__(self, value: float) -> None:
        super().__init__(0)
        self.value = value

    def random(self) -> float:
        return self.value


class Fatal(Exception):
    pass


class SubValueError(ValueError):
    pass


def test_retry_is_exported_for_task_code() -> None:
    assert PublicRetry is Retry


def test_options_override_only_what_they_set() -> None:
    default = RetryPolicy(base_seconds=1.0, cap_seconds=300.0, jitter=0.2)
    assert RetryOptions().policy(default) == default
    p = RetryOptions(backoff=0.5, jitter=0.0).policy(default)
    assert (p.base_seconds, p.cap_seconds, p.jitter, p.factor) == (0.5, 300.0, 0.0, 2.0)
    assert RetryOptions(backoff_max=3.0).policy(default).ceiling(10) == 3.0


def test_policy_from_settings() -> None:
    s = Settings.from_env(
        {
            "TASKYARD_RETRY_BASE_SECONDS": "0.5",
            "TASKYARD_RETRY_CAP_SECONDS": "9",
            "TASKYARD_RETRY_JITTER": "0.1",
        }
    )
    assert RetryPolicy.from_settings(s) == RetryPolicy(base_seconds=0.5, cap_seconds=9.0, jitter=0.1)


@pytest.mark.parametrize(
    ("exc", "retried"),
    [
        (ValueError("x"), False),
        (SubValueError("x"), False),  # a subclass of a listed class
        (Fatal("x"), False),  # by its short name
        (RuntimeError("x"), True),
        (KeyError("x"), False),  # by its qualified name
    ],
)
def test_dont_retry_matches_classes_and_names(exc: BaseException, retried: bool) -> None:
    options = RetryOptions(dont_retry=(ValueError, "Fatal", "builtins.KeyError"))
    assert options.retries(exc) is retried


@pytest.mark.parametrize(
    "kwargs",
    [
        {"backoff": -1.0},
        {"backoff_max": float("inf")},
        {"jitter": 1.5},
        {"dont_retry": (42,)},
        {"dont_retry": ("",)},
    ],
)
def test_bad_options_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises((ValueError, TypeError)):
        RetryOptions(**kwargs)  # type: ignore[arg-type]


def test_delay_ms_follows_the_formula() -> None:
    default = RetryPolicy(base_seconds=1.0, cap_seconds=300.0, jitter=0.2)
    # attempt 3 failed: ceiling 4 s; U = 0.5 -> 4 * (1 - 0.1) = 3.6 s
    assert delay_ms(None, 3, None, default, FixedRandom(0.5)) == 3600
    assert delay_ms(None, 3, RetryOptions(backoff=0.1, jitter=0.0), default, FixedRandom(0.5)) == 400
    # capped, then jittered down
    assert delay_ms(None, 20, RetryOptions(backoff_max=2.0), default, FixedRandom(1.0 - 1e-12)) == 1600


def test_retry_delay_wins_and_zero_still_travels() -> None:
    default = RetryPolicy()
    assert delay_ms(Retry(delay=2.5), 1, None, default) == 2500
    assert delay_ms(Retry(delay=0), 1, None, default) == 1
    assert delay_ms(Retry(), 1, RetryOptions(backoff=0.2, jitter=0.0), default) == 200


@pytest.mark.parametrize("delay", [-1.0, float("nan"), float("inf")])
def test_retry_refuses_bad_delays(delay: float) -> None:
    with pytest.raises(ValueError):
        Retry(delay=delay)


def test_task_decorator_takes_retry_options() -> None:
    @task(
        name="unit.opts",
        max_retries=5,
        retry_backoff=0.3,
        retry_backoff_max=2,
        retry_jitter=0.1,
        dont_retry=Fatal,
    )
    def opts() -> None: ...

    try:
        tdef = registry.get("unit.opts")
        assert tdef is not None and tdef.max_retries == 5
        assert tdef.retry == RetryOptions(backoff=0.3, backoff_max=2, jitter=0.1, dont_retry=(Fatal,))
    finally:
        registry.unregister("unit.opts")

    @task(name="unit.plain")
    def plain() -> None: ...

    try:
        tdef = registry.get("unit.plain")
        assert tdef is not None and tdef.retry is None
    finally:
        registry.unregister("unit.plain")

    with pytest.raises(ValueError):
        task(name="unit.bad", retry_jitter=2.0)


@pytest.fixture
def runner_tasks() -> Iterator[None]:
    @task(name="unit.asks", dont_retry=("Fatal",))
    def asks(delay: float) -> None:
        raise Retry(delay=delay, reason="later please")

    @task(name="unit.fatal", dont_retry=("Fatal",))
    def fatal() -> None:
        raise Fatal("no point")

    @task(name="unit.flaky", retry_backoff=0.5, retry_jitter=0.0)
    def flaky() -> None:
        raise RuntimeError("again")

    yield
    for name in ("asks", "fatal", "flaky"):
        registry.unregister(f"unit.{name}")


async def test_runner_turns_retry_and_dont_retry_into_completions(runner_tasks: None) -> None:
    runner = Runner(concurrency=1, default_timeout=10.0, worker="w")
    runner.retry_policy = RetryPolicy(base_seconds=1.0, jitter=0.0)
    try:
        c = await runner.execute(make_record("unit.asks", 1.25, attempt=2))
        assert not c.success and c.retryable and c.retry_delay_ms == 1250
        assert (c.failure.type, c.failure.message, c.failure.attempt) == ("Retry", "later please", 2)

        c = await runner.execute(make_record("unit.fatal"))
        assert not c.success and not c.retryable and c.failure.type == "Fatal"

        # An ordinary failure: execute leaves the delay to the policy, chosen per task.
        record = make_record("unit.flaky", attempt=3)
        c = await runner.execute(record)
        assert c.retryable and c.retry_delay_ms == 0
        assert runner.retry_delay_ms_for(record) == 2000  # 0.5 * 2 ** 2, no jitter
        assert runner.retry_delay_ms_for(make_record("fail", attempt=2)) == 2000  # the default policy: 1 * 2
    finally:
        runner.close()
