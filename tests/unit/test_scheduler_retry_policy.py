"""The scheduler's retry policy is the deployment's, as the pools' and the gateway's
remote workers' are: it delays the attempts it rescues."""

from __future__ import annotations

from typing import Any, cast

from taskyard.core.config import SchedulerSettings
from taskyard.scheduler.service import Scheduler


def test_the_scheduler_retries_with_the_deployment_jitter() -> None:
    settings = SchedulerSettings().replace(retry_jitter=0.0, retry_base_seconds=2.0)
    policy = Scheduler(settings, cast(Any, object()), run_hub=False).policy
    # TASKYARD_RETRY_JITTER=0: no delay is cut.
    assert (policy.jitter, policy.delay(1)) == (0.0, 2.0)
