"""How a write that failed is told: lost to a concurrent transaction (run again,
then UNAVAILABLE), the database out of reach (UNAVAILABLE, which callers retry), or
refused (database_errors.py): an error that can cross the bus, never the server's text."""

from __future__ import annotations

import asyncio
import logging
import random

import asyncpg

from taskyard.core import errors

from .database_errors import database_error, sqlstate

log = logging.getLogger(__name__)


# SQLSTATEs of a transaction that lost to a concurrent one (deadlock_detected,
# serialization_failure, lock_not_available): PostgreSQL rolled it back, and
# nothing was wrong with the requests. Between stores sharing the database
# (each of its multi-row statements takes its rows in id order, so deadlocks
# are rare) and with maintenance sessions.
CONFLICTS = frozenset({"40P01", "40001", "55P03"})
# Runs of a drain after the first that lost, and the pause before the first of
# them (doubled each time, jittered so that two stores do not meet again):
# about 2 + 4 + 8 ms in all, while the writer loop waits.
CONFLICT_RUNS = 3
CONFLICT_PAUSE = 0.002


def is_conflict(exc: BaseException) -> bool:
    return getattr(exc, "sqlstate", None) in CONFLICTS


def conflict_pause(run: int) -> float:
    """Seconds to wait before the ``run``-th run again of a drain (1, 2, ...)."""
    return CONFLICT_PAUSE * 2.0 ** (run - 1) * random.uniform(0.5, 1.5)


class Lost(Exception):
    """A run of a drain lost to a concurrent transaction; ``rerun``: it may run again."""

    def __init__(self, error: asyncpg.PostgresError, *, rerun: bool) -> None:
        super().__init__(str(error))
        self.error = error
        self.rerun = rerun


def is_connection_error(exc: BaseException) -> bool:
    return isinstance(
        exc,
        asyncpg.exceptions.ConnectionDoesNotExistError
        | asyncpg.exceptions.InterfaceError
        | asyncpg.exceptions.PostgresConnectionError
        | asyncpg.exceptions.CannotConnectNowError
        | asyncpg.exceptions.AdminShutdownError
        | OSError
        | asyncio.TimeoutError,
    )


def to_taskyard_error(exc: BaseException) -> errors.TaskyardError:
    """Map a database (or other) exception to an error that can cross the bus."""
    # The exception's text names the server's files, schema or address: the log has it,
    # the reply does not (database_errors.py).
    if isinstance(exc, errors.TaskyardError):
        return exc
    if is_connection_error(exc):
        log.info("database unavailable: %r", exc)
        return errors.unavailable("the database is unavailable; retry with backoff")
    if is_conflict(exc):  # the same request may well succeed at once: a retryable status
        state = sqlstate(exc)
        return errors.unavailable(f"lost to a concurrent transaction (SQLSTATE {state}); try again")
    return database_error(exc)
