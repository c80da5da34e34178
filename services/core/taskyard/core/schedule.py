"""When a periodic schedule runs next: intervals and 5-field cron in a time zone.

The cron dialect and its daylight-saving rules are cronsim's (Debian cron's):

- a job at a fixed wall-clock time (minute AND hour fields not starting with
  ``*``, e.g. ``30 2 * * *``) whose time is skipped by a spring-forward runs at
  the first instant after the gap (03:00 that day); when the time occurs twice
  on a fall-back it runs once, at the first occurrence;
- a job with a wildcard minute or hour (``*/5 * * * *``, ``0 * * * *``) follows
  real time: every real minute/hour matching it runs once, so the repeated
  hour of a fall-back runs again and the skipped hour of a spring-forward
  does not exist.

Every function takes "now" as an argument (the caller's injected clock) and
returns an instant strictly after it: a schedule that was down for a while
fires once for what it missed, then resumes its rhythm (no burst).
"""

from __future__ import annotations

import dataclasses
import math
from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

MIN_INTERVAL_MS = 1000
# A cron that matches nothing within this many candidates (e.g. "0 0 30 2 *")
# is refused instead of searched for decades.
MAX_CANDIDATES = 64


class ScheduleError(ValueError):
    """A spec that cannot run: ``field`` names the offending part."""

    def __init__(self, field: str, description: str) -> None:
        super().__init__(f"{field}: {description}")
        self.field = field
        self.description = description


def zone(name: str) -> tzinfo:
    """The IANA zone ``name`` ("" = UTC)."""
    if not name or name.upper() == "UTC":
        return UTC
    if "\x00" in name or len(name) > 64:
        raise ScheduleError("time_zone", "not an IANA time zone name")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ScheduleError(
            "time_zone", f"unknown time zone {name!r} (use an IANA name such as Europe/Paris)"
        ) from exc


@dataclasses.dataclass(frozen=True, kw_only=True)
class Spec:
    """How a schedule recurs: exactly one of ``interval_ms`` and ``cron``."""

    interval_ms: int = 0
    cron: str = ""
    time_zone: str = ""
    # Interval runs are aligned on this instant (the schedule's creation).
    anchor_us: int = 0

    def check(self) -> None:
        """Raise the first ScheduleError of an unusable spec."""
        problems = self.problems()
        if problems:
            raise problems[0]

    def problems(self) -> list[ScheduleError]:
        """Everything wrong with the spec (cron and zone are checked separately)."""
        if bool(self.interval_ms) == bool(self.cron):
            return [ScheduleError("spec", "set exactly one of interval and cron")]
        if self.interval_ms:
            return (
                []
                if self.interval_ms >= MIN_INTERVAL_MS
                else [ScheduleError("interval", "must be at least 1s")]
            )
        out: list[ScheduleError] = []
        tz: tzinfo = UTC
        try:
            tz = zone(self.time_zone)
        except ScheduleError as exc:
            out.append(exc)
        fields = self.cron.split()
        if len(fields) != 5:
            out.append(
                ScheduleError(
                    "cron",
                    f"must have 5 fields (minute hour day-of-month month day-of-week), got {len(fields)}",
                )
            )
            return out
        try:
            next(CronSim(self.cron, datetime(2000, 1, 1, tzinfo=tz)))
        except CronSimError as exc:
            out.append(ScheduleError("cron", f"{exc} in {self.cron!r}"))
        except StopIteration:
            out.append(ScheduleError("cron", f"{self.cron!r} never matches a date"))
        return out

    def next_after(self, now_us: int) -> int:
        """The first run time strictly after ``now_us`` (Unix microseconds)."""
        if self.interval_ms:
            step = self.interval_ms * 1000
            anchor = self.anchor_us or now_us
            if now_us < anchor:
                return anchor
            return anchor + (math.floor((now_us - anchor) / step) + 1) * step
        tz = zone(self.time_zone)
        # cron has minute resolution; start from the whole second of now (cronsim
        # drops microseconds) and skip anything not strictly later.
        start = datetime.fromtimestamp(now_us // 1_000_000, tz)
        it = CronSim(self.cron, start)
        for _ in range(MAX_CANDIDATES):
            try:
                candidate = next(it)
            except StopIteration:
                break
            us = to_us(candidate)
            if us > now_us:
                return us
        raise ScheduleError("cron", f"{self.cron!r} has no run time after {start.isoformat()}")


def to_us(dt: datetime) -> int:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    delta = dt.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def iso(us: int, time_zone: str = "") -> str:
    """An instant as ISO 8601 in the schedule's zone (for request ids and humans)."""
    return datetime.fromtimestamp(us / 1_000_000, zone(time_zone)).isoformat()
