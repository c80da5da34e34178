"""Debian's chromium, as the browser tests drive it (Playwright's own browser download
is never used; ``tools/install-tools.sh browser`` installs chromium)."""

from __future__ import annotations

import os

from support.tools import missing

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless=new",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require_chromium() -> str:
    if not os.path.exists(CHROMIUM):
        missing(f"{CHROMIUM} is not installed (tools/install-tools.sh browser)")
    return CHROMIUM
