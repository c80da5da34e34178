"""State-changing bus requests are carried out once per database, across stores and restarts.

The seal's replay guard (``core.seal.ReplayGuard``) is one receiving socket's memory:
a sealed request captured from the wire and sent, within the seal's window, to
another store on the same database, or to a store that restarted, passes it. So the
requests that change state and are not idempotent by themselves (queue operations,
purges, cancels, a scheduler's reconciliation) have their envelope's ``message_id``
(covered by the MAC, a fresh UUID per request) recorded in ``bus_requests`` in the
transaction of their effect. A second delivery finds the id there: it is refused
like a replayed message (``seal.Replayed``), counted, and never answered.

The hot path's writes (inserts, leases, reports, renewals, heartbeats, log lines)
record nothing: they are fenced or keyed already, and a database round trip per
message would cost them (docs/security.md, "Replays across stores and restarts").
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import asyncpg

from taskyard.bus.v1 import envelope_pb2
from taskyard.core import seal

from .queries import bind

Rq = TypeVar("Rq")
Rp = TypeVar("Rp")

# An id is kept at least this long, and at least KEEP_WINDOWS seal windows: a replay
# older than the window is refused by the seal (``stale``), while a store whose clock
# lags the database's by up to the rest would still take it.
MIN_KEEP_SECONDS = 600.0
KEEP_WINDOWS = 10


def keep_seconds(window: float) -> float:
    """How long a recorded id is kept, for the seal's window of ``window`` seconds."""
    return max(MIN_KEEP_SECONDS, KEEP_WINDOWS * window)


async def record(
    conn: asyncpg.Connection, ids: Sequence[str], kinds: Sequence[int], *, keep_s: float
) -> set[str]:
    """Record ``ids`` in ``conn``'s transaction (one statement); the ones not recorded before."""
    rows = await conn.fetch(*bind("record_bus_requests", ids=list(ids), kinds=list(kinds), keep_s=keep_s))
    return {r["id"] for r in rows}


async def record_one(conn: asyncpg.Connection, request_id: str, kind: int, *, keep_s: float) -> None:
    """Record one request's id in ``conn``'s transaction; raises ``seal.Replayed``
    when it was recorded before (the transaction must then roll back)."""
    if not await record(conn, [request_id], [kind], keep_s=keep_s):
        raise seal.Replayed(kind)


def once(fn: Callable[[Rq, str], Awaitable[Rp]]) -> Callable[[Rq, envelope_pb2.Envelope], Awaitable[Rp]]:
    """The route handler (``rpc.serve``) of a write given its request's message id:
    ``fn(request, request_id)`` records the id with its effect."""

    @functools.wraps(fn)
    async def handler(request: Rq, env: envelope_pb2.Envelope) -> Rp:
        return await fn(request, env.message_id)

    return handler
