"""``python -m taskyard.scheduler``: run the scheduler until SIGTERM/SIGINT (on
standby until it leads: service.serve)."""

from __future__ import annotations

from taskyard.core import bus_tls, lifecycle, observability, seal
from taskyard.core.config import SchedulerSettings
from taskyard.scheduler import service


async def _main(settings: SchedulerSettings) -> None:
    stop = lifecycle.stop_event_on_signals()
    with observability.observed("scheduler", settings):
        await service.serve(settings, stop)


def main() -> None:
    lifecycle.end_with_launcher()
    settings = SchedulerSettings.from_env()
    lifecycle.setup_logging("scheduler", settings.log_level)
    seal.configure_service(settings, role="scheduler")
    bus_tls.configure_service(settings)
    lifecycle.run(_main(settings))


if __name__ == "__main__":
    main()
