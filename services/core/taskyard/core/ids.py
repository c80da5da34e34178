"""Identifiers: time-ordered task ids (UUIDv7 layout) and lease tokens."""

from __future__ import annotations

import os
import time
import uuid

# An id's hex digits: 12 of the millisecond clock, "7" (the version), 3 random, one
# of 8/9/a/b (the RFC 4122 variant, with 2 random bits), 15 random: 74 random bits.
# Written straight from urandom's hex (one call a batch) because going through
# uuid.UUID cost more than all the rest of building a task's record.
_VARIANT = {c: "89ab"[int(c, 16) & 3] for c in "0123456789abcdef"}
_MS_MASK = (1 << 48) - 1


def new_task_id() -> str:
    """A UUIDv7: 48-bit millisecond timestamp then randomness.

    Time order keeps the primary-key index append-mostly under heavy inserts.
    """
    return new_task_ids(1)[0]


def new_task_ids(count: int) -> list[str]:
    """``count`` UUIDv7s (see ``new_task_id``) of the current millisecond."""
    ms = f"{time.time_ns() // 1_000_000 & _MS_MASK:012x}"
    head = f"{ms[:8]}-{ms[8:]}-7"
    r = os.urandom(10 * count).hex()
    v = _VARIANT
    return [
        f"{head}{r[i : i + 3]}-{v[r[i + 3]]}{r[i + 4 : i + 7]}-{r[i + 7 : i + 19]}"
        for i in range(0, 20 * count, 20)
    ]


def new_lease_token(prefix: str = "") -> str:
    """A fresh lease token; a scheduler prefixes its own so that, after a restart,
    it can tell its leases from a predecessor's (scheduler/reconciler.py)."""
    return prefix + os.urandom(8).hex()


def new_instance_id(service: str) -> str:
    return f"{service}-{os.getpid()}-{os.urandom(3).hex()}"


def is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True
