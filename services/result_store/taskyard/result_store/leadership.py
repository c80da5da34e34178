"""The schedulers' election, store side: one statement on the leader's row
(sql/leader.sql) per request, acquire, renew or release, by the database's
clock. The scheduler side, and why the election looks the way it does, is
taskyard/scheduler/election.py."""

from __future__ import annotations

from asyncpg import Pool

from taskyard.bus.v1 import leader_pb2
from taskyard.core import errors

from .appliers import Stats
from .queries import bind

# A lease longer than this would keep a dead leader's row for too long to matter.
MAX_TTL_MS = 10 * 60 * 1000


async def lead(pool: Pool, stats: Stats, req: leader_pb2.LeadershipRequest) -> leader_pb2.LeadershipReply:
    """Apply one election request; the reply is the row as it is afterwards."""
    violations = []
    if not req.holder:
        violations.append(errors.FieldViolation(field="holder", description="must name the scheduler"))
    if not req.release and not 0 < req.ttl_ms <= MAX_TTL_MS:
        violations.append(errors.FieldViolation(field="ttl_ms", description=f"must be 1..{MAX_TTL_MS}"))
    if req.term < 0 or (req.release and req.term == 0):
        violations.append(errors.FieldViolation(field="term", description="must be a term held"))
    if violations:
        raise errors.invalid(violations)
    if req.release:
        query = bind("release_leadership", holder=req.holder, term=req.term)
    elif req.term:
        query = bind("renew_leadership", holder=req.holder, term=req.term, ttl_ms=req.ttl_ms)
    else:
        query = bind("acquire_leadership", holder=req.holder, ttl_ms=req.ttl_ms)
    stats.statements += 1
    # One statement, committed on its own: the row is all it touches.
    row = await pool.fetchrow(*query)
    if row is None:  # the row is the migration's: never absent on a migrated schema
        raise errors.internal("scheduler_leader has no row")
    return leader_pb2.LeadershipReply(
        term=row["term"], holder=row["holder"], leader=row["leader"], expires_in_ms=row["expires_in_ms"]
    )
