"""Priority lanes. Lower value runs first."""

from __future__ import annotations

import enum


class Priority(enum.IntEnum):
    """Mirrors ``taskyard.v1.Priority``; UNSPECIFIED (0) means NORMAL."""

    CRITICAL = 1
    HIGH = 2
    NORMAL = 3
    LOW = 4

    @classmethod
    def from_wire(cls, value: int) -> Priority:
        return cls.NORMAL if value == 0 else cls(value)

    @property
    def lane_offset(self) -> int:
        """Offset of this lane's port from the base port (CRITICAL = base)."""
        return int(self) - 1


LANES: tuple[Priority, ...] = tuple(sorted(Priority))
