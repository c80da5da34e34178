"""Attempt refs merged from many requests of one group commit."""

from __future__ import annotations

from taskyard.bus.v1 import task_record_pb2

from .validation import norm_uuid


class _Refs:
    """Merged attempt refs of many requests, and who asked for each."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.attempts: list[int] = []
        self.tokens: list[str] = []
        self.owner: dict[tuple[str, int, str], list[int]] = {}

    def add(self, i: int, ref: task_record_pb2.AttemptRef) -> bool:
        tid = norm_uuid(ref.task_id)
        if tid is None:
            return False
        attempt, token = ref.attempt, ref.lease_token  # a message field costs a lookup each read
        self.owner.setdefault((tid, attempt, token), []).append(i)
        self.ids.append(tid)
        self.attempts.append(attempt)
        self.tokens.append(token)
        return True

    def claim(self, tid: str, attempt: int, token: str) -> int | None:
        """The request an applied row belongs to (the first that asked)."""
        owners = self.owner.get((tid, attempt, token))
        return owners.pop(0) if owners else None
