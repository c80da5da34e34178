"""Retry policy: delay = min(cap, base * factor ** (attempt - 1)) * uniform(1 - jitter, 1)."""

from __future__ import annotations

import random

import pytest

from taskyard.core.retry import RetryPolicy


class FixedRandom(random.Random):
    """A Random whose random() always returns the same value."""

    def __init__(self, value: float) -> None:
        super().__init__(0)
        self.value = value

    def random(self) -> float:
        return self.value


def test_defaults() -> None:
    p = RetryPolicy()
    assert (p.base_seconds, p.factor, p.cap_seconds, p.jitter) == (1.0, 2.0, 300.0, 0.2)


@pytest.mark.parametrize(("attempt", "expected"), [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (9, 256.0)])
def test_ceiling_is_exponential_in_the_failed_attempt(attempt: int, expected: float) -> None:
    assert RetryPolicy().ceiling(attempt) == expected


def test_ceiling_follows_base_and_factor() -> None:
    p = RetryPolicy(base_seconds=0.5, factor=3.0, cap_seconds=1e9)
    assert [p.ceiling(a) for a in (1, 2, 3, 4)] == [0.5, 1.5, 4.5, 13.5]


def test_ceiling_is_capped() -> None:
    p = RetryPolicy(base_seconds=1.0, factor=2.0, cap_seconds=300.0)
    assert p.ceiling(9) == 256.0
    assert p.ceiling(10) == 300.0
    assert p.ceiling(50) == 300.0


def test_ceiling_never_decreases() -> None:
    p = RetryPolicy(base_seconds=0.25, factor=1.7, cap_seconds=60.0)
    values = [p.ceiling(a) for a in range(1, 40)]
    assert values == sorted(values)
    assert max(values) == 60.0


@pytest.mark.parametrize("attempt", [0, -1, -100])
def test_attempts_before_the_first_count_as_the_first(attempt: int) -> None:
    assert RetryPolicy().ceiling(attempt) == 1.0


def test_huge_attempt_numbers_stay_at_the_cap() -> None:
    # max_retries is user input: a task retried a few thousand times must still
    # get the cap, not an OverflowError from factor ** attempt.
    p = RetryPolicy()
    for attempt in (1_030, 10_000, 2**31 - 1):
        assert p.delay(attempt, FixedRandom(0.0)) == 300.0


def test_jitter_bounds_are_exact() -> None:
    p = RetryPolicy(base_seconds=10.0, jitter=0.2)
    assert p.delay(1, FixedRandom(0.0)) == 10.0  # no jitter drawn: the ceiling
    assert p.delay(1, FixedRandom(0.5)) == pytest.approx(9.0)
    # random() < 1, so the delay stays above (1 - jitter) * ceiling.
    assert p.delay(1, FixedRandom(0.999999)) == pytest.approx(8.0, abs=1e-5)
    assert p.delay(1, FixedRandom(0.999999)) > 8.0


@pytest.mark.parametrize("jitter", [0.0, 0.2, 0.5, 1.0])
def test_jittered_delays_stay_within_bounds(jitter: float) -> None:
    p = RetryPolicy(base_seconds=2.0, factor=2.0, cap_seconds=100.0, jitter=jitter)
    rng = random.Random(1234)
    for attempt in range(1, 12):
        ceiling = p.ceiling(attempt)
        delays = [p.delay(attempt, rng) for _ in range(200)]
        assert all(ceiling * (1.0 - jitter) <= d <= ceiling for d in delays), attempt
        if jitter:
            assert len(set(delays)) > 1, "jitter must spread the delays"
        else:
            assert set(delays) == {ceiling}


def test_jitter_spreads_over_the_whole_range() -> None:
    p = RetryPolicy(base_seconds=100.0, jitter=0.2, cap_seconds=1000.0)
    rng = random.Random(7)
    delays = [p.delay(1, rng) for _ in range(2000)]
    assert min(delays) < 81.0
    assert max(delays) > 99.0


def test_same_seed_same_delays() -> None:
    p = RetryPolicy()
    a = [p.delay(n, random.Random(42)) for n in range(1, 10)]
    b = [p.delay(n, random.Random(42)) for n in range(1, 10)]
    assert a == b


def test_default_rng_is_used_without_one() -> None:
    p = RetryPolicy(base_seconds=4.0, jitter=0.5)
    for _ in range(100):
        assert 2.0 <= p.delay(1) <= 4.0


def test_policy_is_immutable() -> None:
    p = RetryPolicy()
    with pytest.raises(AttributeError):
        p.base_seconds = 2.0  # type: ignore[misc]
