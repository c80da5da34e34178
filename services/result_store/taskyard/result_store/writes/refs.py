"""Attempt refs merged from many requests of one group commit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from taskyard.bus.v1 import task_record_pb2

from ..uuids import norm_uuid

T = TypeVar("T")


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

    def in_id_order(self, entries: Sequence[T] = ()) -> list[T]:
        """Put the refs in task id order, and ``entries`` (one per ref, if given)
        with them. A statement locks its rows in the order of its input: two
        stores that lock in one order do not deadlock."""
        if len(self.ids) < 2:
            return list(entries)
        order = sorted(range(len(self.ids)), key=self.ids.__getitem__)
        self.ids = [self.ids[i] for i in order]
        self.attempts = [self.attempts[i] for i in order]
        self.tokens = [self.tokens[i] for i in order]
        return [entries[i] for i in order] if entries else []

    def claim(self, tid: str, attempt: int, token: str) -> int | None:
        """The request an applied row belongs to (the first that asked)."""
        owners = self.owner.get((tid, attempt, token))
        return owners.pop(0) if owners else None
