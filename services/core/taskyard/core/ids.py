"""Identifiers: time-ordered task ids (UUIDv7 layout) and lease tokens."""

from __future__ import annotations

import os
import time
import uuid


def new_task_id() -> str:
    """A UUIDv7: 48-bit millisecond timestamp then randomness.

    Time order keeps the primary-key index append-mostly under heavy inserts.
    """
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76  # version 7
    value |= ((rand >> 64) & 0xFFF) << 64
    value |= 0b10 << 62  # RFC 4122 variant
    value |= rand & ((1 << 62) - 1)
    return str(uuid.UUID(int=value))


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
