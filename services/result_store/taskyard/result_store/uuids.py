"""Task and pool ids in requests: UUIDs in their canonical text."""

from __future__ import annotations

import re
import uuid

_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


_is_canonical_uuid = _CANONICAL_UUID.fullmatch


def norm_uuid(value: str) -> str | None:
    """The canonical text of a UUID, or None when it is not one."""
    if _is_canonical_uuid(value):  # the common case: already canonical
        return value
    try:
        return str(uuid.UUID(value))
    except (ValueError, AttributeError, TypeError):
        return None
