"""Tools a test needs that the Python environment does not bring (grpcurl, helm, npm,
go, mvn, chromium): where one is missing the test is skipped with the command that
installs it, except in CI (``CI`` set true), which installs them all, where it fails."""

from __future__ import annotations

import os
import shutil
from typing import NoReturn

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing(message: str) -> NoReturn:
    """Fail the test in CI, skip it elsewhere; ``message`` says what to install."""
    if in_ci():
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def require_tool(name: str, install: str = "tools/install-tools.sh clients") -> str:
    """``name``'s path on PATH, else ``missing`` (``install`` installs it)."""
    path = shutil.which(name)
    if path is None:
        missing(f"{name} is not installed ({install})")
    return path
