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
        self.asked: list[int] = []

    def add(self, i: int, ref: task_record_pb2.AttemptRef) -> bool:
        while len(self.asked) <= i:
            self.asked.append(0)
        self.asked[i] += 1
        tid = norm_uuid(ref.task_id)
        if tid is None:
            return False
        self.owner.setdefault((tid, ref.attempt, ref.lease_token), []).append(i)
        self.ids.append(tid)
        self.attempts.append(ref.attempt)
        self.tokens.append(ref.lease_token)
        return True

    def claim(self, tid: str, attempt: int, token: str) -> int | None:
        """The request an applied row belongs to (the first that asked)."""
        owners = self.owner.get((tid, attempt, token))
        return owners.pop(0) if owners else None
