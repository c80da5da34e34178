"""State-changing bus requests are carried out once per database, across stores and restarts.

The seal's replay guard (``core.seal.ReplayGuard``) is one receiving socket's memory:
a sealed request captured from the wire and sent, within the seal's window, to
another store on the same database, or to a store that restarted, passes it. So the
requests that change state and are not idempotent by themselves (queue operations,
purges, cancels, a scheduler's reconciliation) have their envelope's ``message_id``
(covered by the MAC, a fresh UUID per request) recorded in ``bus_requests`` in the
transaction of their effect, with the reply the request got. A second delivery
finds the id there and is not carried out again: it is answered with that reply
(``seal.Replayed`` carries it to the responder, which counts it as ``replayed``).
That is what a requester needs whose reply was lost (its connection closed after
the commit): it sends the request again under the same id, re-sealed, and gets the
answer the first one got. An eavesdropper who replays a copy learns nothing new: the
original reply already crossed the bus, which is sealed but not encrypted.

Old ids are forgotten by the store's retention loop (``forget``), a bounded number
a round, never in a recorded request's transaction.

The hot path's writes (inserts, leases, reports, renewals, heartbeats, log lines)
record nothing: they are fenced or keyed already, and a database round trip per
message would cost them (docs/security.md, "Replays across stores and restarts").
"""

from __future__ import annotations

import dataclasses
import functools
import weakref
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

import asyncpg
from google.protobuf.message import Message

from taskyard.bus.v1 import envelope_pb2
from taskyard.core import errors, rpc, seal

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


# Ids forgotten at most per statement of the retention loop, so that one round
# holds no long lock and a backlog is worked off over rounds.
FORGET_LIMIT = 5_000


async def record(conn: asyncpg.Connection, ids: Sequence[str], kinds: Sequence[int]) -> set[str]:
    """Record ``ids`` in ``conn``'s transaction (one statement); the ones not recorded before."""
    rows = await conn.fetch(*bind("record_bus_requests", ids=list(ids), kinds=list(kinds)))
    return {r["id"] for r in rows}


async def replies(conn: asyncpg.Connection, ids: Sequence[str]) -> dict[str, bytes | None]:
    """The replies kept for the recorded ids among ``ids`` (None: none kept)."""
    rows = await conn.fetch(*bind("bus_request_replies", ids=list(ids)))
    return {r["id"]: r["reply"] for r in rows}


async def keep_replies(conn: asyncpg.Connection, ids: Sequence[str], payloads: Sequence[Message]) -> None:
    """Keep the replies of ``ids``, recorded in ``conn``'s transaction, for their repeats."""
    await conn.execute(
        *bind("keep_bus_replies", ids=list(ids), replies=[p.SerializeToString() for p in payloads])
    )


async def record_one(conn: asyncpg.Connection, request_id: str, kind: int) -> None:
    """Record one request's id in ``conn``'s transaction; raises ``seal.Replayed``, with
    the reply kept for it, when it was recorded before (the transaction must then roll
    back). The caller keeps its reply (``keep_replies``) before the transaction ends."""
    if not await record(conn, [request_id], [kind]):
        kept = await replies(conn, [request_id])
        raise seal.Replayed(kind, reply=kept.get(request_id))


async def forget(pool: asyncpg.Pool, *, keep_s: float, limit: int = FORGET_LIMIT) -> int:
    """Forget at most ``limit`` ids recorded more than ``keep_s`` seconds ago; how many."""
    count = await pool.fetchval(*bind("forget_bus_requests", keep_s=keep_s, limit=limit))
    return int(count or 0)


# The handlers ``once`` made: the routes ``refused_while_clock_off`` guards.
_RECORDED: weakref.WeakSet[Callable[..., Any]] = weakref.WeakSet()


def once(fn: Callable[[Rq, str], Awaitable[Rp]]) -> Callable[[Rq, envelope_pb2.Envelope], Awaitable[Rp]]:
    """The route handler (``rpc.serve``) of a write given its request's message id:
    ``fn(request, request_id)`` records the id with its effect."""

    @functools.wraps(fn)
    async def handler(request: Rq, env: envelope_pb2.Envelope) -> Rp:
        return await fn(request, env.message_id)

    _RECORDED.add(handler)
    return handler


def refused_while_clock_off(
    routes: Iterable[rpc.Route[Any]], clock_agrees: Callable[[], bool]
) -> list[rpc.Route[Any]]:
    """``routes``, those of recorded requests (``once``) refused as UNAVAILABLE while
    ``clock_agrees()`` is false: this store's clock is off the database's by more than
    the seal's window (readiness.py). Such a store takes copies older than the window
    as fresh, or refuses fresh requests as stale, and an id is kept for a time judged
    by the database's clock: the once-per-database guard holds only while both agree."""
    return [
        dataclasses.replace(route, handler=_refusing(route.handler, clock_agrees))
        if route.handler in _RECORDED
        else route
        for route in routes
    ]


def _refusing(
    handler: Callable[[Any, envelope_pb2.Envelope], Awaitable[Message]], clock_agrees: Callable[[], bool]
) -> Callable[[Any, envelope_pb2.Envelope], Awaitable[Message]]:
    @functools.wraps(handler)
    async def refusing(request: Any, env: envelope_pb2.Envelope) -> Message:
        if not clock_agrees():
            raise errors.unavailable(
                "result-store's clock disagrees with the database's: requests carried out once "
                "per database are refused until it agrees (fix the clock: NTP)"
            )
        return await handler(request, env)

    return refusing
