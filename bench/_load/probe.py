"""The probe: one task at a time in a process of its own, beside the load or alone, with
the blocking calls a one-by-one caller makes (SubmitTask then WaitTask, or RunTask, or
Celery's delay().get())."""

from __future__ import annotations

import time
from multiprocessing.connection import Connection

from _compare.child import die_with_runner

from .clients import SyncClient, sync_client
from .plan import ProbeJob, ProbeOutcome, Target

WARMUP_CALLS = 5  # before the first job's window: connections made, code paths warm


def serve(conn: Connection, target: Target, prefix: str) -> None:
    die_with_runner()
    client = sync_client(target, prefix)
    try:
        for _ in range(WARMUP_CALLS):
            client.one()
        conn.send("ready")
        while (job := conn.recv()) is not None:
            conn.send(_probe(client, job))
    finally:
        client.close()


def _probe(client: SyncClient, job: ProbeJob) -> ProbeOutcome:
    delay = job.start_at - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    latencies: list[float] = []
    errors: list[str] = []
    while time.monotonic() < job.stop_at:
        t0 = time.perf_counter()
        ok, why = client.one()
        elapsed = (time.perf_counter() - t0) * 1000
        if ok:
            latencies.append(elapsed)
        else:
            errors.append(why)
    return ProbeOutcome(
        latencies_ms=tuple(latencies), errors=len(errors), first_error=errors[0] if errors else ""
    )
