"""When a submitted task may first run: ``TaskSpec.eta`` or ``TaskSpec.countdown``.

A task whose time is in the future is inserted SCHEDULED with ``run_at`` and
becomes QUEUED when it is due (the scheduler's heap, ``scheduler/timers.py``);
one whose ETA has already passed is queued at once, as Celery does (and most
queues): it keeps that ETA as its ``run_at``, in the past, so GetTask and
ExplainTask show that it was queued at once rather than scheduled.
"""

from __future__ import annotations

import dataclasses

from google.protobuf import duration_pb2, timestamp_pb2

from taskyard.v1 import task_pb2

# How far ahead a task may be scheduled is a rule of the record, checked with the
# others (core/validation.py, MAX_ETA_DAYS): a typo of a year is refused.
# Timestamp's own range: 0001-01-01 .. 9999-12-31.
_MIN_SECONDS = -62_135_596_800
_MAX_SECONDS = 253_402_300_799


@dataclasses.dataclass(frozen=True, kw_only=True)
class Due:
    """``run_at_us`` 0 = now; ``passed_us`` the time asked for when it had already
    passed at acceptance (else 0); ``field`` says which one set it; ``errors`` are
    (field suffix, description) pairs."""

    run_at_us: int = 0
    passed_us: int = 0
    field: str = "eta"
    errors: tuple[tuple[str, str], ...] = ()


# The answer for most specs (neither field set), made once.
_NOW = Due()


def _timestamp_us(ts: timestamp_pb2.Timestamp) -> int | None:
    if not (_MIN_SECONDS <= ts.seconds <= _MAX_SECONDS and 0 <= ts.nanos <= 999_999_999):
        return None
    # Rounded up: "no earlier than" survives the loss of nanoseconds.
    return ts.seconds * 1_000_000 - (-ts.nanos // 1000)


def _duration_us(d: duration_pb2.Duration) -> int | None:
    if not -999_999_999 <= d.nanos <= 999_999_999 or (d.seconds > 0 > d.nanos) or (d.seconds < 0 < d.nanos):
        return None
    return d.seconds * 1_000_000 - (-d.nanos // 1000)


def due(spec: task_pb2.TaskSpec, now_us: int) -> Due:
    """When ``spec`` may first run, given the time of its acceptance."""
    has_eta, has_countdown = spec.HasField("eta"), spec.HasField("countdown")
    if not (has_eta or has_countdown):
        return _NOW
    if has_eta and has_countdown:
        return Due(errors=(("countdown", "eta and countdown are exclusive: set one of them"),))
    if has_eta:
        us = _timestamp_us(spec.eta)
        if us is None:
            return Due(errors=(("eta", "malformed timestamp"),))
        field = "eta"
    else:
        delta = _duration_us(spec.countdown)
        if delta is None:
            return Due(errors=(("countdown", "malformed duration"),))
        if delta < 0:
            return Due(errors=(("countdown", "must not be negative"),))
        us, field = now_us + delta, "countdown"
    if us > now_us:
        return Due(run_at_us=us, field=field)
    return Due(passed_us=us, field=field)
