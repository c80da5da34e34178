"""Schedules declared in code: ``@task(cron="*/5 * * * *", tz="Europe/Paris")`` or
``@task(every=timedelta(minutes=5))``.

The manager sends every declaration of its registry to the result-store once it
is registered (``SaveSchedulesRequest(declared=true)``), retrying until the
store answers. The store upserts them by name (the task's name): a declared
schedule keeps its id, pause and counters across restarts and moves its next
run only when its timing changed; a user-created schedule of the same name is
left alone. Removing a declaration from code does not delete the schedule
(another pool may still declare it): ``taskyard schedule delete NAME`` does.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import logging
import time
from typing import TypeVar

from google.protobuf.message import Message

from taskyard.bus.v1 import schedule_pb2, tenants_pb2
from taskyard.core import contract, errors, names, rpc
from taskyard.core import schedule as timing
from taskyard.core.retry import Backoff
from taskyard.v1 import schedule_pb2 as pub
from taskyard.v1 import task_pb2

log = logging.getLogger(__name__)

M = TypeVar("M", bound=Message)
# The first pause and the cap of the pauses until the store answers (core.retry.Backoff).
RETRY_PAUSE = (0.5, 10.0)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Declared:
    name: str
    cron: str = ""
    interval_ms: int = 0
    time_zone: str = ""
    overlap: str = "skip"

    def to_proto(self) -> pub.Schedule:
        s = pub.Schedule(
            name=self.name,
            task=task_pb2.TaskSpec(name=self.name),
            time_zone=self.time_zone,
            overlap=pub.OVERLAP_POLICY_ALLOW if self.overlap == "allow" else pub.OVERLAP_POLICY_SKIP,
        )
        if self.cron:
            s.cron = self.cron
        else:
            s.interval.FromMilliseconds(self.interval_ms)
        return s


def declared(
    task_name: str, *, cron: str | None, tz: str, every: float | datetime.timedelta | None, overlap: str
) -> Declared | None:
    """The declaration of ``@task(cron=/every=)``, checked now (a bad one fails at import)."""
    if cron is None and every is None:
        if tz:
            raise ValueError("@task(tz=...) needs cron=...")
        return None
    if overlap not in ("skip", "allow"):
        raise ValueError("@task(overlap=...) must be 'skip' or 'allow'")
    if every is not None and cron is not None:
        raise ValueError("@task takes cron= or every=, not both")
    if every is not None and tz:
        raise ValueError("@task(tz=...) applies to cron=, not every=")
    bad_name = names.problem(task_name, required=True)
    if bad_name is not None:  # the schedule is named after the task: the store would refuse it
        raise ValueError(f"@task({task_name!r}) with a schedule: the schedule's name {bad_name[0]}")
    seconds = every.total_seconds() if isinstance(every, datetime.timedelta) else every
    decl = Declared(
        name=task_name,
        cron=cron or "",
        interval_ms=round(seconds * 1000) if seconds is not None else 0,
        time_zone=tz,
        overlap=overlap,
    )
    try:
        timing.Spec(interval_ms=decl.interval_ms, cron=decl.cron, time_zone=tz).check()
    except timing.ScheduleError as exc:
        raise ValueError(f"@task({task_name!r}): {exc}") from exc
    return decl


async def declare(store: rpc.Caller, declarations: list[Declared]) -> int:
    """Upsert ``declarations``; retried until the store answers. Returns how many it applied."""
    if not declarations:
        return 0
    # The suite's own declaration (its task code's), not a caller's: an operator's scope.
    request = schedule_pb2.SaveSchedulesRequest(
        schedules=[d.to_proto() for d in declarations], declared=True, scope=tenants_pb2.TenantScope(all=True)
    )
    first, cap = RETRY_PAUSE
    backoff = Backoff(first=first, cap=cap)
    while True:
        request.now_us = time.time_ns() // 1000
        try:
            reply = await store.call(contract.STORE_SCHEDULE_SAVE, request)
        except errors.TaskyardError as exc:
            if exc.code.name == "INVALID_ARGUMENT":
                log.error("schedule declarations refused: %s", exc)
                return 0
            delay = backoff.next_delay()
            log.info("declaring schedules: %s (retrying in %.1fs)", exc, delay)
            await asyncio.sleep(delay)
            continue
        log.info(
            "declared %d schedule(s): %s", len(reply.schedules), ", ".join(s.name for s in reply.schedules)
        )
        return len(reply.schedules)


async def declare_registered(store: rpc.Caller, names: list[str]) -> int:
    """Declare the schedules of the registered tasks ``names``."""
    from taskyard.worker_pool import registry

    decls = [d.schedule for d in (registry.get(n) for n in names) if d is not None and d.schedule is not None]
    return await declare(store, decls)
