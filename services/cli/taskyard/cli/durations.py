"""Durations as people write them: ``250ms``, ``2s``, ``5m``, ``1h30m``, ``1.5h``, ``2d``.

One parser for every option that takes a duration and one formatter for every
table that shows one, so what ``taskyard`` prints can be pasted back into it.
A bare number means seconds unless the option says otherwise (``queue purge
--older-than 30`` has always meant days).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import click
from google.protobuf import duration_pb2

_UNITS: dict[str, dt.timedelta] = {
    "d": dt.timedelta(days=1),
    "h": dt.timedelta(hours=1),
    "m": dt.timedelta(minutes=1),
    "s": dt.timedelta(seconds=1),
    "ms": dt.timedelta(milliseconds=1),
    "us": dt.timedelta(microseconds=1),
    "µs": dt.timedelta(microseconds=1),
}
# Longest unit first so "ms" is not read as "m" followed by garbage.
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|us|µs|d|h|m|s)")
_BARE = re.compile(r"\d+(?:\.\d*)?|\.\d+")
EXAMPLES = "250ms, 2s, 5m, 1h30m, 1.5h, 2d"


def parse(text: str, *, bare_unit: str = "s") -> dt.timedelta:
    """``1h30m`` -> 90 minutes; a bare number is in ``bare_unit``. Raises ValueError."""
    value = text.strip().replace(" ", "")
    if _BARE.fullmatch(value):
        return float(value) * _UNITS[bare_unit]
    total = dt.timedelta()
    position = 0
    for match in _PART.finditer(value):
        if match.start() != position:
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if not value or position != len(value):
        raise ValueError(f"{text!r} is not a duration (e.g. {EXAMPLES})")
    return total


def format_duration(value: dt.timedelta) -> str:
    """90 minutes -> ``1h30m``; 0.25 s -> ``250ms``; what ``parse`` reads back."""
    if value < dt.timedelta():
        return "-" + format_duration(-value)
    micros = round(value.total_seconds() * 1_000_000)
    if micros == 0:
        return "0s"
    if micros < 1_000_000:
        millis, rest = divmod(micros, 1000)
        return f"{millis}ms" if rest == 0 else f"{_decimal(micros, 1000)}ms"
    days, micros = divmod(micros, 86_400_000_000)
    hours, micros = divmod(micros, 3_600_000_000)
    minutes, micros = divmod(micros, 60_000_000)
    parts = [f"{n}{unit}" for n, unit in ((days, "d"), (hours, "h"), (minutes, "m")) if n]
    if micros:
        parts.append(f"{_decimal(micros, 1_000_000)}s")
    return "".join(parts)


def _decimal(micros: int, per_unit: int) -> str:
    """``micros`` in a unit of ``per_unit`` microseconds, exactly, without trailing zeros."""
    whole, rest = divmod(micros, per_unit)
    digits = len(str(per_unit)) - 1
    return f"{whole}.{rest:0{digits}d}".rstrip("0").rstrip(".")


def format_proto(value: duration_pb2.Duration) -> str:
    return format_duration(value.ToTimedelta())


def seconds(value: dt.timedelta | None) -> float | None:
    return None if value is None else value.total_seconds()


class DurationType(click.ParamType[dt.timedelta]):
    """A click parameter type for durations; the value is a ``datetime.timedelta``."""

    name = "duration"

    def __init__(self, *, bare_unit: str = "s", minimum: dt.timedelta | None = None) -> None:
        self.bare_unit = bare_unit
        self.minimum = minimum

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> dt.timedelta:
        if isinstance(value, dt.timedelta):
            return value
        try:
            parsed = parse(str(value), bare_unit=self.bare_unit)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        if self.minimum is not None and parsed < self.minimum:
            self.fail(f"{value!r} is shorter than {format_duration(self.minimum)}", param, ctx)
        return parsed

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        return "DURATION"


DURATION = DurationType(minimum=dt.timedelta())
