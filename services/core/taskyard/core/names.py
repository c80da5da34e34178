"""The names people choose for queues and schedules: one charset, one length, everywhere.

A name is 1 to 128 characters: an ASCII letter or digit, then letters, digits and
``.`` ``_`` ``:`` ``-`` (``[A-Za-z0-9][A-Za-z0-9._:-]{0,127}``): "default",
"reports.nightly", "tenant-a:emails". It is a word in a URL, a metric label, a
log line and a shell argument without quoting, and cannot pass for another name
(no spaces to trim, no look-alike Unicode, no control characters).

The gateway checks every submission, queue operation and schedule with these
rules, and the result-store checks them again for whoever writes (a scheduler
lane, a pool declaring its schedules). A declared schedule is named after its
task, so ``@task(cron=...)`` fails at import for a task name outside the charset.
An empty queue name means ``DEFAULT_QUEUE``.
"""

from __future__ import annotations

import re

MAX_CHARS = 128
PATTERN = r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}"
CHARSET = "an ASCII letter or digit, then letters, digits, '.', '_', ':' or '-'"
DEFAULT_QUEUE = "default"
# FieldViolation reasons, as every other field gives them (core/validation.py).
INVALID_ARGUMENT = "INVALID_ARGUMENT"
NUL_CHARACTER = "NUL_CHARACTER"
# How much of a bad name a description quotes.
_QUOTE_CHARS = 64

_NAME = re.compile(PATTERN)


def fits(name: str) -> bool:
    """Whether ``name`` is a valid name (the hot path's check: nothing built)."""
    return _NAME.fullmatch(name) is not None


def problem(name: str, *, required: bool) -> tuple[str, str] | None:
    """What is wrong with ``name`` (a description and a reason), or None; an empty
    name passes unless ``required`` (an empty queue is the default one)."""
    if not name:
        return ("must not be empty", INVALID_ARGUMENT) if required else None
    if _NAME.fullmatch(name) is not None:
        return None
    if "\x00" in name:
        return "must not contain NUL (\\u0000)", NUL_CHARACTER
    if len(name) > MAX_CHARS:
        return f"must be at most {MAX_CHARS} characters, got {len(name)}", INVALID_ARGUMENT
    shown = name if len(name) <= _QUOTE_CHARS else name[:_QUOTE_CHARS] + "…"
    return f"must be {CHARSET} ({PATTERN}), got {shown!r}", INVALID_ARGUMENT
