"""``python -m taskyard.result_store`` serves; ``... migrate`` only migrates."""

from __future__ import annotations

import sys

from taskyard.core import bus_tls, lifecycle, observability, seal
from taskyard.core.config import StoreSettings

from .service import migrate_only, serve


async def _main(argv: list[str]) -> int:
    settings = StoreSettings.from_env()
    lifecycle.setup_logging("result-store", settings.log_level)
    if argv[:1] == ["migrate"]:
        applied = await migrate_only(settings)
        print(f"migrations applied: {', '.join(applied) if applied else 'none (up to date)'}")
        return 0
    if argv:
        print("usage: python -m taskyard.result_store [migrate]", file=sys.stderr)
        return 2
    seal.configure_service(settings, role="result-store")
    bus_tls.configure_service(settings)
    stop = lifecycle.stop_event_on_signals()
    with observability.observed("result-store", settings):
        await serve(settings, stop)
    return 0


def main() -> None:
    lifecycle.end_with_launcher()
    sys.exit(lifecycle.run(_main(sys.argv[1:])))


if __name__ == "__main__":
    main()
