"""Allowed source states of each store write, from the one transition table
(``core.states``), for both stores: the in-memory store checks a row's state
against the set, the real store's guarded statements take its ``db`` names as
their ``:sources`` parameter."""

from __future__ import annotations

import functools
from collections.abc import Iterable

from taskyard.core import states
from taskyard.core.states import TaskState

S = TaskState


class Sources(frozenset[TaskState]):
    """The states a write may move a task from."""

    @functools.cached_property
    def db(self) -> list[str]:
        """The database state names (a ``task_state[]`` parameter), sorted."""
        return states.db_names(self)


def sources(target: TaskState, within: Iterable[TaskState] | None = None) -> Sources:
    """The states that may move to ``target``: all of them, or those ``within``."""
    found = frozenset(states.sources_of(target))
    return Sources(found if within is None else found & frozenset(within))


SRC_ASSIGNED = sources(S.ASSIGNED)
SRC_RUNNING = sources(S.RUNNING)
SRC_SUCCESS = sources(S.SUCCESS)
# FAILURE among them (a circuit breaker's refund): an attempt's outcome takes SRC_RETRYING_LEASED.
SRC_RETRYING = sources(S.RETRYING)
SRC_FAILURE = sources(S.FAILURE)
# Releases and deaths only ever concern leased attempts.
SRC_QUEUED_LEASED = sources(S.QUEUED, states.LEASED_STATES)
SRC_RETRYING_LEASED = sources(S.RETRYING, states.LEASED_STATES)
SRC_FAILURE_LEASED = sources(S.FAILURE, states.LEASED_STATES)
# A running attempt stopped by its cancel request.
SRC_CANCELLED_LEASED = sources(S.CANCELLED, states.LEASED_STATES)
# A cancel ends at once only a task no pool holds: a leased one (ASSIGNED,
# RUNNING) gets the flag, and its pool says whether it had started.
SRC_CANCEL_NOW = Sources(sources(S.CANCELLED) - states.LEASED_STATES)
SRC_PROMOTE = sources(S.QUEUED, {S.SCHEDULED, S.RETRYING})

_INITIAL_VALUES = frozenset(int(s) for s in states.INITIAL_STATES)
