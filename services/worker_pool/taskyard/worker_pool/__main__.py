"""``python -m taskyard.worker_pool``: run a pool manager (configured by the environment)."""

from __future__ import annotations

import os
import sys

from taskyard.core import bus_tls, lifecycle, observability, seal
from taskyard.core.config import PoolSettings
from taskyard.worker_pool import launcher
from taskyard.worker_pool.manager import Manager


async def _main(settings: PoolSettings) -> int:
    stop = lifecycle.stop_event_on_signals()
    manager = Manager(settings, pool_id=os.environ.get("TASKYARD_POOL_ID") or None)
    with observability.observed("worker-pool", settings):
        return await manager.run(stop)


def main() -> int:
    lifecycle.end_with_launcher()
    settings = PoolSettings.from_env()
    # First, while this process runs no thread and holds no socket: forked from here,
    # the template costs no new interpreter.
    launcher.start_template()
    lifecycle.setup_logging("worker-pool", settings.log_level)
    seal.configure_service(settings, owner="pool", role="worker-pool")
    bus_tls.configure_service(settings)
    return lifecycle.run(_main(settings))


if __name__ == "__main__":
    sys.exit(main())
