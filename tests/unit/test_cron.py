"""Next-run computation of periodic schedules (core.schedule): intervals, cron,
time zones and the daylight-saving rules documented in docs/schedules.md."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from taskyard.core.schedule import ScheduleError, Spec, iso, to_us

PARIS = ZoneInfo("Europe/Paris")
NEW_YORK = ZoneInfo("America/New_York")


def us(*args: int, tz: object = UTC, fold: int = 0) -> int:
    return to_us(datetime(*args, tzinfo=tz, fold=fold))  # type: ignore[arg-type, misc]


def runs(spec: Spec, start_us: int, count: int) -> list[int]:
    """Successive run times, each computed from the previous one (as firing does)."""
    out, now = [], start_us
    for _ in range(count):
        now = spec.next_after(now)
        out.append(now)
    return out


def local(values: list[int], tz: ZoneInfo) -> list[str]:
    return [datetime.fromtimestamp(v / 1e6, tz).strftime("%m-%d %H:%M%z") for v in values]


def test_interval_is_aligned_on_the_anchor_and_strictly_after_now() -> None:
    spec = Spec(interval_ms=90_000, anchor_us=us(2024, 1, 1))
    assert spec.next_after(us(2024, 1, 1)) == us(2024, 1, 1, 0, 1, 30)
    assert spec.next_after(us(2024, 1, 1, 0, 1, 29)) == us(2024, 1, 1, 0, 1, 30)
    assert spec.next_after(us(2024, 1, 1, 0, 1, 30)) == us(2024, 1, 1, 0, 3, 0)
    # After a long downtime: one run, then the rhythm (no burst of catch-up runs).
    assert spec.next_after(us(2024, 1, 2, 0, 0, 1)) == us(2024, 1, 2, 0, 1, 30)


def test_every_minute_in_utc() -> None:
    spec = Spec(cron="*/1 * * * *")
    assert runs(spec, us(2024, 5, 1, 12, 0, 30), 3) == [
        us(2024, 5, 1, 12, 1),
        us(2024, 5, 1, 12, 2),
        us(2024, 5, 1, 12, 3),
    ]
    # Exactly on a match: the next one, never "now" again.
    assert spec.next_after(us(2024, 5, 1, 12, 1)) == us(2024, 5, 1, 12, 2)


def test_cron_in_a_time_zone() -> None:
    spec = Spec(cron="0 9 * * MON-FRI", time_zone="Europe/Paris")
    got = runs(spec, us(2024, 7, 5, 8, 0, tz=PARIS), 2)  # a Friday
    assert local(got, PARIS) == ["07-05 09:00+0200", "07-08 09:00+0200"]


def test_spring_forward_skipped_time_runs_at_the_first_instant_after_the_gap() -> None:
    # Europe/Paris 2024-03-31: 02:00 CET -> 03:00 CEST; 02:30 does not exist.
    spec = Spec(cron="30 2 * * *", time_zone="Europe/Paris")
    got = runs(spec, us(2024, 3, 30, 12, tz=PARIS), 3)
    assert local(got, PARIS) == ["03-31 03:00+0200", "04-01 02:30+0200", "04-02 02:30+0200"]


def test_fall_back_repeated_time_runs_once() -> None:
    # Europe/Paris 2024-10-27: 03:00 CEST -> 02:00 CET; 02:30 happens twice.
    spec = Spec(cron="30 2 * * *", time_zone="Europe/Paris")
    got = runs(spec, us(2024, 10, 26, 12, tz=PARIS), 3)
    assert local(got, PARIS) == ["10-27 02:30+0200", "10-28 02:30+0100", "10-29 02:30+0100"]
    # Computed from inside the repeated hour (second pass), it is not fired again.
    second_pass = us(2024, 10, 27, 2, 10, tz=PARIS, fold=1)
    assert local([spec.next_after(second_pass)], PARIS) == ["10-28 02:30+0100"]


def test_every_minute_across_both_transitions_neither_skips_nor_doubles() -> None:
    spec = Spec(cron="*/1 * * * *", time_zone="America/New_York")
    for start in (us(2024, 3, 10, 6, 30), us(2024, 11, 3, 5, 30)):  # 01:30 local, both days
        got = runs(spec, start, 120)
        assert [b - a for a, b in zip([start, *got], got, strict=False)] == [60_000_000] * 120
        assert len(set(got)) == 120


def test_hourly_job_follows_real_hours_over_fall_back() -> None:
    spec = Spec(cron="0 * * * *", time_zone="Europe/Paris")
    got = runs(spec, us(2024, 10, 27, 0, 30, tz=PARIS), 4)
    assert local(got, PARIS) == [
        "10-27 01:00+0200",
        "10-27 02:00+0200",
        "10-27 02:00+0100",
        "10-27 03:00+0100",
    ]


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        (Spec(cron="61 * * * *"), "cron"),
        (Spec(cron="* * *"), "cron"),
        (Spec(cron="0 0 31 2 *"), "cron"),
        (Spec(cron="* * * * *", time_zone="Mars/Olympus"), "time_zone"),
        (Spec(interval_ms=999), "interval"),
        (Spec(), "spec"),
        (Spec(interval_ms=1000, cron="* * * * *"), "spec"),
    ],
)
def test_bad_specs_name_their_field(spec: Spec, field: str) -> None:
    with pytest.raises(ScheduleError) as info:
        spec.check()
    assert info.value.field == field


def test_iso_in_zone() -> None:
    assert iso(us(2024, 1, 1, 12)) == "2024-01-01T12:00:00+00:00"
    assert iso(us(2024, 1, 1, 12), "Europe/Paris") == "2024-01-01T13:00:00+01:00"
