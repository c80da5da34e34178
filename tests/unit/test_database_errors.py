"""Each SQLSTATE class of a database error crosses the bus as a status that says what to
do, with a fixed message: PostgreSQL's own text (paths, schema, statements) stays in the log."""

from __future__ import annotations

import logging
import types

import asyncpg
import pytest

from taskyard.core import errors
from taskyard.result_store import database_errors
from taskyard.result_store.write_errors import to_taskyard_error

SERVER_TEXT = 'could not extend file "base/16384/2619": No space left on device; INSERT INTO events'


@pytest.mark.parametrize(
    ("exc_type", "code", "reason"),
    [
        (asyncpg.exceptions.DiskFullError, errors.Code.RESOURCE_EXHAUSTED, "DATABASE_FULL"),
        (asyncpg.exceptions.OutOfMemoryError, errors.Code.RESOURCE_EXHAUSTED, "DATABASE_RESOURCES_EXHAUSTED"),
        (asyncpg.exceptions.TooManyConnectionsError, errors.Code.UNAVAILABLE, "DATABASE_UNAVAILABLE"),
        (asyncpg.exceptions.PostgresIOError, errors.Code.UNAVAILABLE, "DATABASE_UNAVAILABLE"),
        (asyncpg.exceptions.QueryCanceledError, errors.Code.DEADLINE_EXCEEDED, "BACKEND_TIMEOUT"),
        (asyncpg.exceptions.UniqueViolationError, errors.Code.INVALID_ARGUMENT, "DATABASE_REFUSED"),
        (asyncpg.exceptions.InvalidTextRepresentationError, errors.Code.INVALID_ARGUMENT, "DATABASE_REFUSED"),
        (asyncpg.exceptions.DataCorruptedError, errors.Code.INTERNAL, "DATABASE_ERROR"),
        (asyncpg.exceptions.UndefinedTableError, errors.Code.INTERNAL, "DATABASE_ERROR"),
        (asyncpg.exceptions.SerializationError, errors.Code.UNAVAILABLE, "BACKEND_UNAVAILABLE"),
        # A standby after a failover, until the address moves to the new primary: retry.
        (asyncpg.exceptions.ReadOnlySQLTransactionError, errors.Code.UNAVAILABLE, "DATABASE_UNAVAILABLE"),
        # The same request meets the limit again: not a retry, smaller parts.
        (asyncpg.exceptions.TooManyArgumentsError, errors.Code.INVALID_ARGUMENT, "DATABASE_LIMIT_EXCEEDED"),
        (
            asyncpg.exceptions.ProgramLimitExceededError,
            errors.Code.INVALID_ARGUMENT,
            "DATABASE_LIMIT_EXCEEDED",
        ),
    ],
)
def test_sqlstate_classes(exc_type: type[asyncpg.PostgresError], code: errors.Code, reason: str) -> None:
    err = to_taskyard_error(exc_type(SERVER_TEXT))
    assert (err.code, err.reason) == (code, reason)
    assert f"SQLSTATE {exc_type.sqlstate}" in err.message
    assert "base/" not in err.message and "INSERT" not in err.message and "No space" not in err.message


def test_a_lost_connection_names_no_address() -> None:
    err = to_taskyard_error(OSError(111, "Connect call failed ('10.0.0.9', 5432)"))
    assert err.code is errors.Code.UNAVAILABLE and "10.0.0.9" not in err.message


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def test_what_a_client_can_cause_is_a_warning_at_most_once_a_while(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = _Clock()
    monkeypatch.setattr(database_errors, "time", types.SimpleNamespace(monotonic=clock.monotonic))
    monkeypatch.setattr(database_errors, "_warned", {})
    caplog.set_level(logging.DEBUG, logger=database_errors.__name__)

    def levels() -> list[int]:
        return [r.levelno for r in caplog.records if r.name == database_errors.__name__]

    for _ in range(3):
        to_taskyard_error(asyncpg.exceptions.UniqueViolationError(SERVER_TEXT))
    assert levels() == [logging.WARNING, logging.DEBUG, logging.DEBUG]
    to_taskyard_error(asyncpg.exceptions.InvalidTextRepresentationError(SERVER_TEXT))  # its own SQLSTATE
    clock.now += database_errors.QUIET_INTERVAL
    to_taskyard_error(asyncpg.exceptions.UniqueViolationError(SERVER_TEXT))
    assert levels()[3:] == [logging.WARNING, logging.WARNING]


def test_what_a_client_cannot_cause_is_an_error_every_time(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=database_errors.__name__)
    for _ in range(2):
        to_taskyard_error(asyncpg.exceptions.DataCorruptedError(SERVER_TEXT))
    assert [r.levelno for r in caplog.records if r.name == database_errors.__name__] == [logging.ERROR] * 2
