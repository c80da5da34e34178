"""Allowed source states of each store write, as database state names."""

from __future__ import annotations

from collections.abc import Iterable

from taskyard.core import states
from taskyard.core.states import TaskState

S = TaskState


def _db_states(items: Iterable[TaskState]) -> list[str]:
    return states.db_names(tuple(items))


# Allowed source states, from the one transition table.
SRC_ASSIGNED = _db_states(states.sources_of(S.ASSIGNED))
SRC_RUNNING = _db_states(states.sources_of(S.RUNNING))
SRC_SUCCESS = _db_states(states.sources_of(S.SUCCESS))
SRC_RETRYING = _db_states(states.sources_of(S.RETRYING))
SRC_FAILURE = _db_states(states.sources_of(S.FAILURE))
# Releases and deaths only ever concern leased attempts.
SRC_QUEUED_LEASED = _db_states(set(states.sources_of(S.QUEUED)) & states.LEASED_STATES)
SRC_RETRYING_LEASED = _db_states(set(states.sources_of(S.RETRYING)) & states.LEASED_STATES)
SRC_FAILURE_LEASED = _db_states(set(states.sources_of(S.FAILURE)) & states.LEASED_STATES)
# A running attempt stopped by its cancel request.
SRC_CANCELLED_LEASED = _db_states(set(states.sources_of(S.CANCELLED)) & states.LEASED_STATES)
SRC_CANCEL_NOW = _db_states(set(states.sources_of(S.CANCELLED)) - {S.RUNNING})
SRC_PROMOTE = _db_states(set(states.sources_of(S.QUEUED)) & {S.SCHEDULED, S.RETRYING})

_INITIAL_VALUES = frozenset(int(s) for s in states.INITIAL_STATES)
