"""Limits declared in code, as the store takes them: one rule for every kind of worker.

A Python ``@task(rate_limit="100/s", concurrency=3, limit_key="customer_id")`` and a
worker on the public stream that declares the same (``TaskDeclaration``) make the same
limits, named after the task (``send_email.rate``, ``send_email.concurrency``,
``send_email.breaker``), per key when a keyword argument keys them. They are declared
to the result-store (STORE_LIMIT_CHANGE, LIMIT_OP_DECLARE), retried until it answers;
a limit of that name a person created is not overwritten (the store refuses).
"""

from __future__ import annotations

import asyncio
import logging

from taskyard.bus.v1 import flow_pb2, tenants_pb2
from taskyard.core import contract, errors, limits, rpc
from taskyard.core.retry import Backoff
from taskyard.v1 import limit_pb2

log = logging.getLogger(__name__)

# The first pause and the cap of the pauses until the store answers (core.retry.Backoff).
RETRY_PAUSE = (0.5, 10.0)


def declared_limits(
    *,
    task_name: str,
    rate: str = "",
    burst: int = 0,
    concurrency: int = 0,
    key_argument: str = "",
    breaker: str = "",
    breaker_cool_down: float = 0.0,
) -> list[limit_pb2.Limit]:
    """The limits a task declares (raises ValueError for a rate or breaker that does not parse)."""

    def limit(kind: str) -> limit_pb2.Limit:
        return limit_pb2.Limit(
            name=limits.declared_name(task_name, kind),
            task_name=task_name,
            key_argument=key_argument,
            per_key=bool(key_argument),
        )

    out: list[limit_pb2.Limit] = []
    if rate:
        made = limit("rate")
        made.rate.CopyFrom(limits.parse_rate(rate, burst=burst))
        out.append(made)
    if concurrency:
        made = limit("concurrency")
        made.concurrency.max_units = concurrency
        out.append(made)
    if breaker:
        made = limit("breaker")
        made.breaker.CopyFrom(limits.parse_breaker(breaker))
        if breaker_cool_down:
            made.breaker.cool_down.FromMilliseconds(round(breaker_cool_down * 1000))
        out.append(made)
    return out


async def declare_limits(store: rpc.Caller, declared: list[limit_pb2.Limit]) -> int:
    """Upsert ``declared``; retried until the store answers. Returns how many."""
    if not declared:
        return 0
    # The suite's own declaration (its task code's), not a caller's: an operator's scope.
    request = flow_pb2.ChangeLimitRequest(
        op=flow_pb2.LIMIT_OP_DECLARE, declared=declared, scope=tenants_pb2.TenantScope(all=True)
    )
    first, cap = RETRY_PAUSE
    backoff = Backoff(first=first, cap=cap)
    while True:
        try:
            await store.call(contract.STORE_LIMIT_CHANGE, request)
        except errors.TaskyardError as exc:
            if exc.code.name in ("INVALID_ARGUMENT", "ALREADY_EXISTS", "FAILED_PRECONDITION"):
                # Another answer would be the same: a person's limit holds the name, or a rule changed.
                log.error("limit declarations refused: %s", exc)
                return 0
            if exc.code.name == "RESOURCE_EXHAUSTED":
                # The store holds as many limits as it may: only deleting some makes room.
                log.error("limit declarations refused: %s (declared again at the next start)", exc)
                return 0
            delay = backoff.next_delay()
            log.info("declaring limits: %s (retrying in %.1fs)", exc, delay)
            await asyncio.sleep(delay)
            continue
        log.info("declared %d limit(s): %s", len(declared), ", ".join(limit.name for limit in declared))
        return len(declared)
