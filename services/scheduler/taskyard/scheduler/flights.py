"""Flights: rate admissions whose leases the store has not answered for yet.

A rate limit bounds what reaches its downstream in any window, and an attempt
reaches it once its lease is committed, not when the scheduler admits it. While
the store stalls (a checkpoint, a restart), batches admitted a second apart
commit together, and their units arrive at once: a burst on top of the burst.
So a rate bucket has one lease batch in flight at most: another batch's
admissions wait for the store's answer, and the bucket's clock then restarts
from that answer (``land``): its theoretical arrival time becomes at least the
answer's time plus the batch's units. Each batch then conforms to the limit at
any instant between its admission and its answer, which is when the database
records its leases and sends them on.

A batch that never gets an answer here (its errand cancelled with the term)
stops holding its bucket after PATIENCE, longer than any request to the store
waits.
"""

from __future__ import annotations

import dataclasses

# A limit's bucket: (limit name, bucket key), as admission.Gate.
Gate = tuple[str, str]
# How long a batch without an answer holds its bucket.
PATIENCE = 30.0
# When a task refused for a bucket's flight is looked at again if the answer
# does not open its gate first.
RECHECK = 0.25


@dataclasses.dataclass(slots=True)
class _Flight:
    batch: int
    since: float
    # Seconds of the bucket the batch's units take (units x emission interval).
    spent: float
    tokens: set[str]


class Flights:
    def __init__(self) -> None:
        self._by_gate: dict[Gate, _Flight] = {}
        self._gates_of: dict[str, list[Gate]] = {}
        self._batches = 0

    def new_batch(self) -> int:
        """A number for the admissions that go to the store in one request."""
        self._batches += 1
        return self._batches

    def blocks(self, gate: Gate, batch: int, now: float) -> bool:
        """Whether another batch's lease on ``gate`` waits for the store's answer."""
        flight = self._by_gate.get(gate)
        return flight is not None and flight.batch != batch and now - flight.since < PATIENCE

    def add(self, gate: Gate, batch: int, token: str, now: float, spent: float) -> None:
        """``token``'s attempt took ``spent`` seconds of ``gate``'s bucket in ``batch``."""
        flight = self._by_gate.get(gate)
        if flight is None or flight.batch != batch:
            if flight is not None:  # past PATIENCE: its tokens land on nothing
                for lost in flight.tokens:
                    self._forget(lost, gate)
            flight = self._by_gate[gate] = _Flight(batch, now, 0.0, set())
        flight.spent += spent
        flight.tokens.add(token)
        self._gates_of.setdefault(token, []).append(gate)

    def _forget(self, token: str, gate: Gate) -> None:
        gates = self._gates_of.get(token)
        if gates is not None and gate in gates:
            gates.remove(gate)
            if not gates:
                del self._gates_of[token]

    def land(self, token: str) -> list[tuple[Gate, float, bool]]:
        """The store answered for ``token``'s lease: each bucket it was in flight on,
        with the seconds its batch took there and whether the batch has landed whole
        (the bucket admits other batches again)."""
        out: list[tuple[Gate, float, bool]] = []
        for gate in self._gates_of.pop(token, ()):
            flight = self._by_gate.get(gate)
            if flight is None or token not in flight.tokens:
                continue
            flight.tokens.discard(token)
            if not flight.tokens:
                del self._by_gate[gate]
            out.append((gate, flight.spent, not flight.tokens))
        return out

    def __len__(self) -> int:
        return len(self._by_gate)
