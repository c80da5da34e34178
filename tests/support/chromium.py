"""Debian's chromium, as the browser tests drive it (Playwright's own browser download
is never used; ``tools/install-tools.sh browser`` installs chromium)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from support.tools import missing

CHROMIUM = "/usr/bin/chromium"
# The dashboard's screenshots in the docs (make screenshots rewrites them).
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
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


def screenshot(page: Any, name: str, tmp_path: Path) -> Path:
    """docs/images/dashboard-NAME.png with TASKYARD_UPDATE_SCREENSHOTS=1, else the tmp dir."""
    directory = DOCS_IMAGES if os.environ.get("TASKYARD_UPDATE_SCREENSHOTS") == "1" else tmp_path
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"dashboard-{name}.png"
    page.screenshot(path=str(path))
    assert path.stat().st_size > 10_000
    return path
