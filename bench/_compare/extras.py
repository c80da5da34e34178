"""The benchmark extras (pgqueuer, celery[redis], redis-server): imported untyped, and
named when missing."""

from __future__ import annotations

import importlib
import importlib.util
import shutil
from collections.abc import Sequence
from typing import Any

INSTALL_HINT = (
    "install the benchmark extras: pip install -e '.[bench]' (pgqueuer, celery[redis]) "
    "and apt-get install redis-server; tools/install-tools.sh bench does both"
)


def module(name: str) -> Any:
    """A peer's package, untyped on purpose: CI checks this file without the extras."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise SystemExit(f"{name} is not installed ({exc}); {INSTALL_HINT}") from None


def redis_module() -> Any:
    return module("redis")


def check_peers(systems: Sequence[str]) -> None:
    """Fail before anything starts, naming what to install."""
    missing = [
        name
        for name, needed in (
            ("pgqueuer", "pgqueuer"),
            ("celery", "celery"),
            ("celery", "redis"),
        )
        if name in systems and importlib.util.find_spec(needed) is None
    ]
    if "celery" in systems and shutil.which("redis-server") is None:
        missing.append("redis-server")
    if missing:
        raise SystemExit(f"bench/compare: missing {', '.join(dict.fromkeys(missing))}; {INSTALL_HINT}")
