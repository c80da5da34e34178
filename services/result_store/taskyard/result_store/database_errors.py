"""What a database failure tells the caller: a status that says what to do, never the server's text.

PostgreSQL's messages name the server's files ("could not extend file
"base/16384/2619": No space left on device"), its schema (constraint and column
names) and at times the statement. They go to the store's log, whole; a reply on
the bus, which the gateway may pass on to a client, carries a fixed message by
the failure's SQLSTATE class and the SQLSTATE itself:

- class 53, insufficient resources: disk full (53100), out of memory (53200) and
  the like are RESOURCE_EXHAUSTED; nothing was written, and a retry helps only once
  an operator acts. Too many connections (53300) passes by itself: UNAVAILABLE.
- class 58 (system error: I/O) and XX (internal error: corruption) are UNAVAILABLE
  and INTERNAL; class 57 (operator intervention: a shutdown, a cancel) UNAVAILABLE.
- a read-only transaction (25006): the server is a standby (after a failover,
  before the address moves to the new primary); UNAVAILABLE, a retry reaches the
  primary once it does.
- classes 22 (data exception) and 23 (integrity constraint) are INVALID_ARGUMENT;
  so is class 54 (program limit exceeded: too many arguments, a statement too
  complex), which the same request meets again: it must be sent in smaller parts.
- a statement timeout (57014) is DEADLINE_EXCEEDED.
Anything else is INTERNAL.

What a client can cause (classes 22, 23 and 54) is logged as a WARNING at most
once per ``QUIET_INTERVAL`` per SQLSTATE (then at DEBUG): a client must not be
able to flood the store's log or page anyone. Everything else is an ERROR.
"""

from __future__ import annotations

import logging
import time

import asyncpg

from taskyard.core import errors

log = logging.getLogger(__name__)

# What a database that is away raises to a loop that reads or writes it (a restart, a
# database refusing connections, a connection killed mid-statement, which asyncpg may
# report as an InternalClientError about its protocol state; OSError covers timeouts):
# such a loop logs it and tries again later, it does not end.
OUTAGE: tuple[type[BaseException], ...] = (
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    OSError,
)

# ErrorInfo reasons.
DATABASE_FULL = "DATABASE_FULL"
DATABASE_RESOURCES = "DATABASE_RESOURCES_EXHAUSTED"
DATABASE_UNAVAILABLE = "DATABASE_UNAVAILABLE"
DATABASE_REFUSED = "DATABASE_REFUSED"
DATABASE_LIMIT = "DATABASE_LIMIT_EXCEEDED"
DATABASE_ERROR = "DATABASE_ERROR"

_TRANSIENT_RESOURCES = frozenset({"53300"})  # too_many_connections
_STATEMENT_TIMEOUT = "57014"  # query_canceled
_READ_ONLY = "25006"  # read_only_sql_transaction: a standby
_CLIENT_CLASSES = frozenset({"22", "23", "54"})
# Seconds between two WARNINGs for one SQLSTATE a client can cause.
QUIET_INTERVAL = 60.0
_warned: dict[str, float] = {}


def sqlstate(exc: BaseException) -> str:
    """The SQLSTATE of a PostgreSQL error; "" for anything else."""
    code = getattr(exc, "sqlstate", None)
    return code if isinstance(code, str) else ""


def database_error(exc: BaseException) -> errors.TaskyardError:
    """The bus error for a database exception that is neither a lost connection nor a
    conflict (the committer's own cases); its text goes to the log only."""
    code = sqlstate(exc)
    state = f"SQLSTATE {code}" if code else type(exc).__name__
    cls = code[:2]
    err: errors.TaskyardError
    if code == "53100":
        err = errors.TaskyardError(
            errors.Code.RESOURCE_EXHAUSTED,
            DATABASE_FULL,
            f"the database is out of disk space; nothing was written ({state}): retry once it has room",
        )
    elif code in _TRANSIENT_RESOURCES:
        err = errors.TaskyardError(
            errors.Code.UNAVAILABLE,
            DATABASE_UNAVAILABLE,
            f"the database has no connection to spare ({state}); retry with backoff",
        )
    elif cls == "53":
        err = errors.TaskyardError(
            errors.Code.RESOURCE_EXHAUSTED,
            DATABASE_RESOURCES,
            f"the database is out of resources; nothing was written ({state}): retry later",
        )
    elif code == _STATEMENT_TIMEOUT:
        err = errors.TaskyardError(
            errors.Code.DEADLINE_EXCEEDED, "BACKEND_TIMEOUT", f"a database statement timed out ({state})"
        )
    elif cls in ("57", "58") or code == _READ_ONLY:
        err = errors.TaskyardError(
            errors.Code.UNAVAILABLE,
            DATABASE_UNAVAILABLE,
            f"the database cannot serve this now ({state}); retry with backoff",
        )
    elif cls in ("22", "23"):
        err = errors.TaskyardError(
            errors.Code.INVALID_ARGUMENT, DATABASE_REFUSED, f"the database refused a value ({state})"
        )
    elif cls == "54":
        err = errors.TaskyardError(
            errors.Code.INVALID_ARGUMENT,
            DATABASE_LIMIT,
            f"the request exceeds a limit of the database's ({state}); send it in smaller parts",
        )
    else:
        err = errors.TaskyardError(
            errors.Code.INTERNAL, DATABASE_ERROR, f"the database failed ({state}); the store's log has more"
        )
    log.log(_level(code), "database error, answered %s: %s: %s", err.code.name, state, exc)
    return err


def _level(code: str) -> int:
    if code[:2] not in _CLIENT_CLASSES:
        return logging.ERROR
    now = time.monotonic()
    if now - _warned.get(code, -QUIET_INTERVAL) < QUIET_INTERVAL:
        return logging.DEBUG
    _warned[code] = now
    return logging.WARNING
