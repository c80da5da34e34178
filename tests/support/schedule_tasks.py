"""Tasks with schedules declared in code (tests/integration/test_schedule_service.py)."""

from __future__ import annotations

import datetime

from taskyard.worker_pool import task


@task(cron="0 3 * * *", tz="Europe/Paris")
def nightly_cleanup() -> str:
    return "clean"


@task(every=datetime.timedelta(hours=6), overlap="allow")
async def refresh_cache() -> int:
    return 6
