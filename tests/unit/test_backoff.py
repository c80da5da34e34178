"""Backoff: the pause between tries of a call to another service (decorrelated jitter, capped)."""

from __future__ import annotations

import random

import pytest

from taskyard.core.retry import Backoff


class FixedRandom(random.Random):
    """A Random whose random() always returns the same value (uniform(a, b) = a + (b - a) * value)."""

    def __init__(self, value: float) -> None:
        super().__init__(0)
        self.value = value

    def random(self) -> float:
        return self.value


def delays(backoff: Backoff, n: int) -> list[float]:
    return [backoff.next_delay() for _ in range(n)]


def test_at_the_top_of_each_draw_pauses_triple_up_to_the_cap() -> None:
    assert delays(Backoff(rng=FixedRandom(1.0)), 6) == pytest.approx([0.15, 0.45, 1.35, 2.0, 2.0, 2.0])


def test_at_the_bottom_of_each_draw_pauses_stay_at_first() -> None:
    assert delays(Backoff(rng=FixedRandom(0.0)), 4) == [0.05, 0.05, 0.05, 0.05]


def test_the_next_draw_grows_from_the_last_pause_not_the_count() -> None:
    rng = FixedRandom(0.5)
    backoff = Backoff(rng=rng)
    assert backoff.next_delay() == pytest.approx(0.1)  # 0.05 + (0.15 - 0.05) / 2
    assert backoff.next_delay() == pytest.approx(0.175)  # 0.05 + (0.3 - 0.05) / 2
    rng.value = 0.0
    assert backoff.next_delay() == pytest.approx(0.05)
    rng.value = 1.0
    assert backoff.next_delay() == pytest.approx(0.15)


def test_reset_starts_again_from_first_and_clears_the_count() -> None:
    backoff = Backoff(rng=FixedRandom(1.0))
    delays(backoff, 5)
    assert backoff.failures == 5
    backoff.reset()
    assert backoff.failures == 0
    assert backoff.next_delay() == pytest.approx(0.15)
    assert backoff.failures == 1


def test_own_first_and_cap() -> None:
    assert delays(Backoff(first=0.5, cap=10.0, rng=FixedRandom(1.0)), 4) == pytest.approx(
        [1.5, 4.5, 10.0, 10.0]
    )


def test_pauses_stay_between_first_and_cap_and_are_jittered() -> None:
    backoff = Backoff(rng=random.Random(7))
    seen = delays(backoff, 200)
    assert all(0.05 <= d <= 2.0 for d in seen)
    assert len(set(seen)) > 100  # jittered, not a fixed ladder


def test_same_seed_same_pauses() -> None:
    assert delays(Backoff(rng=random.Random(3)), 20) == delays(Backoff(rng=random.Random(3)), 20)


@pytest.mark.parametrize(("first", "cap"), [(0.0, 2.0), (-1.0, 2.0), (3.0, 2.0), (0.1, float("inf"))])
def test_rejects_bounds_that_make_no_pause(first: float, cap: float) -> None:
    with pytest.raises(ValueError):
        Backoff(first=first, cap=cap)
