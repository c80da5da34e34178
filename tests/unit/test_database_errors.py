"""Each SQLSTATE class of a database error crosses the bus as a status that says what to
do, with a fixed message: PostgreSQL's own text (paths, schema, statements) stays in the log."""

from __future__ import annotations

import asyncpg
import pytest

from taskyard.core import errors
from taskyard.result_store.committer import to_taskyard_error

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
