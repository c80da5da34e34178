"""Task states and the one transition table every component obeys.

The result-store enforces this same table in PostgreSQL (a trigger fed from
``TRANSITIONS``) and every guarded UPDATE names its allowed source states with
``sources_of``; tests/integration/test_transitions.py proves the two agree.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping


class TaskState(enum.IntEnum):
    """Mirrors ``taskyard.v1.TaskState`` value for value."""

    PENDING = 1
    QUEUED = 2
    SCHEDULED = 3
    ASSIGNED = 4
    RUNNING = 5
    SUCCESS = 6
    FAILURE = 7
    RETRYING = 8
    CANCELLED = 9

    @property
    def is_final(self) -> bool:
        return self in FINAL_STATES

    @property
    def db_name(self) -> str:
        """The value stored in the ``task_state`` enum column."""
        return self.name


S = TaskState

FINAL_STATES: frozenset[TaskState] = frozenset({S.SUCCESS, S.FAILURE, S.CANCELLED})
# The same, as the wire values of taskyard.v1.TaskState (records, events).
FINAL_VALUES: frozenset[int] = frozenset(int(s) for s in FINAL_STATES)
# SUCCESS and CANCELLED never change again; FAILURE only by a manual retry or a
# circuit breaker's refund.
IMMUTABLE_STATES: frozenset[TaskState] = frozenset({S.SUCCESS, S.CANCELLED})
# States in which a worker holds the task under a lease.
LEASED_STATES: frozenset[TaskState] = frozenset({S.ASSIGNED, S.RUNNING})

TRANSITIONS: Mapping[TaskState, frozenset[TaskState]] = {
    # Waiting on dependencies.
    S.PENDING: frozenset({S.QUEUED, S.SCHEDULED, S.CANCELLED}),
    S.QUEUED: frozenset({S.ASSIGNED, S.CANCELLED}),
    S.SCHEDULED: frozenset({S.QUEUED, S.CANCELLED}),
    # ASSIGNED -> QUEUED: never confirmed started (worker died, lease lapsed, pool
    # drained); no retry burned, the next run is a new attempt.
    # ASSIGNED -> SUCCESS/RETRYING/FAILURE: the attempt started
    # and ended before its start notice reached the store (starts and outcomes
    # travel separately so a result never waits behind a start), or a worker
    # that died after starting it, or the pool could not start it at all.
    S.ASSIGNED: frozenset({S.RUNNING, S.QUEUED, S.SUCCESS, S.RETRYING, S.FAILURE, S.CANCELLED}),
    # RUNNING -> QUEUED: a shutdown stopped it (resume_requested), no retry burned.
    S.RUNNING: frozenset({S.SUCCESS, S.FAILURE, S.RETRYING, S.QUEUED, S.CANCELLED}),
    S.RETRYING: frozenset({S.QUEUED, S.CANCELLED}),
    # A manual retry makes a new attempt of a failed task. FAILURE -> RETRYING: a
    # circuit breaker refunded the charges that spent its retries (the failures
    # were an outage's, sql/refunds.sql): it is retried at the breaker's next probe.
    S.FAILURE: frozenset({S.QUEUED, S.RETRYING}),
    S.SUCCESS: frozenset(),
    S.CANCELLED: frozenset(),
}

# States a new row may be inserted in.
INITIAL_STATES: frozenset[TaskState] = frozenset({S.PENDING, S.QUEUED, S.SCHEDULED})


def can_transition(source: TaskState, target: TaskState) -> bool:
    return target in TRANSITIONS[source]


def sources_of(target: TaskState) -> tuple[TaskState, ...]:
    """Every state that may move to ``target``, for a guarded UPDATE."""
    return tuple(s for s in TaskState if target in TRANSITIONS[s])


def db_names(states: tuple[TaskState, ...] | frozenset[TaskState]) -> list[str]:
    return sorted(s.db_name for s in states)


class WorkerState(enum.Enum):
    """Lifecycle of a worker pool (the seed's six states)."""

    INIT = "INIT"
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    DRAINING = "DRAINING"
    STOPPING = "STOPPING"
    STOPPED = "STOPPED"
