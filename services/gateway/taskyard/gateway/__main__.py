"""``python -m taskyard.gateway``: configured by the environment, stops on SIGTERM/SIGINT."""

from __future__ import annotations

import logging
import sys

from taskyard.core import bus_tls, lifecycle, observability, seal
from taskyard.core.config import GatewaySettings
from taskyard.gateway.auth import TokensFileError
from taskyard.gateway.server import serve
from taskyard.gateway.tls import ListenRefused


async def _main() -> None:
    settings = GatewaySettings.from_env()
    stop = lifecycle.stop_event_on_signals()
    with observability.observed("gateway", settings):
        await serve(settings, stop)


def main() -> None:
    lifecycle.end_with_launcher()
    settings = GatewaySettings.from_env()
    lifecycle.setup_logging("gateway", settings.log_level)
    seal.configure_service(settings, role="gateway")
    bus_tls.configure_service(settings)
    try:
        lifecycle.run(_main())
    except (ListenRefused, TokensFileError) as exc:
        # A configuration mistake, not a crash: one clear line, no traceback.
        logging.getLogger("taskyard.gateway").error("not starting: %s", exc)
        sys.exit(2)


if __name__ == "__main__":
    main()
