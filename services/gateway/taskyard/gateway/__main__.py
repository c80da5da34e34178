"""``python -m taskyard.gateway``: configured by the environment, stops on SIGTERM/SIGINT."""

from __future__ import annotations

from taskyard.core import lifecycle
from taskyard.core.config import Settings
from taskyard.gateway.server import serve


async def _main() -> None:
    settings = Settings.from_env()
    stop = lifecycle.stop_event_on_signals()
    await serve(settings, stop)


def main() -> None:
    settings = Settings.from_env()
    lifecycle.setup_logging("gateway", settings.log_level)
    lifecycle.run(_main())


if __name__ == "__main__":
    main()
