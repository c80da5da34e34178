"""tools/install-tools.sh's two levels of the project virtualenv: `python` installs .[dev]
(make test, make install, .ci/run), `python-embedded` only .[embedded] (make dev), each with
its own stamp, and a venv that has .[dev] is never narrowed to .[embedded].

The script runs from a copy in a scratch checkout whose .venv/bin/python and .venv/bin/uv are
stand-ins that record each install instead of installing, so only the script's decisions are
under test (the packages go in by uv, which pip puts in the venv first, or by pip alone when
uv cannot be had);
likewise a copy of the Makefile with stand-in tools shows which level each target asks for.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _uv_version() -> str:
    found = re.search(r'^UV_VERSION="(.+)"$', (ROOT / "tools" / "install-tools.sh").read_text(), re.M)
    assert found, "tools/install-tools.sh pins UV_VERSION"
    return found[1]


UV_VERSION = _uv_version()

FAKE_PYTHON = """#!/usr/bin/env bash
# Records pip's arguments; answers the script's other questions as an installed venv would.
checkout="$(cd "$(dirname "$0")/../.." && pwd)"
case "$1" in
  -m) [[ "$*" == *uv==* && -e "$checkout/no-uv" ]] && exit 1
      echo "$*" >>"$checkout/pip-calls" ;;
  --version) echo "Python 3.11.0" ;;
  -c) [[ -z "$2" ]] || echo "$checkout/services/core/taskyard/core" ;;
esac
"""
FAKE_UV = """#!/usr/bin/env bash
checkout="$(cd "$(dirname "$0")/../.." && pwd)"
echo "uv ${*//$checkout/.}" >>"$checkout/pip-calls"
"""


# After each install: the checkout's own modules compiled (the installers compile theirs).
COMPILE = "-m compileall -q -j 0 services clients/python tests"


def by_uv(extra: str) -> list[str]:
    """The calls of an install of ``.[extra]``."""
    return [
        f"-m pip install --quiet uv=={UV_VERSION}",
        f"uv pip install --quiet --compile-bytecode --python ./.venv/bin/python -e .[{extra}]",
        COMPILE,
    ]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    (root / "tools").mkdir(parents=True)
    shutil.copy2(ROOT / "tools" / "install-tools.sh", root / "tools" / "install-tools.sh")
    (root / "pyproject.toml").write_text("[project]\nname = 'taskyard'\n")
    python = root / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    uv = python.parent / "uv"
    uv.write_text(FAKE_UV)
    uv.chmod(0o755)
    return root


def install(checkout: Path, step: str) -> list[str]:
    """Run one python step; the pip calls it made."""
    calls = checkout / "pip-calls"
    calls.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHON", "VIRTUAL_ENV")}
    done = subprocess.run(
        ["bash", "tools/install-tools.sh", step], cwd=checkout, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return calls.read_text().splitlines() if calls.exists() else []


def stamps(checkout: Path) -> set[str]:
    return {p.name for p in (checkout / ".venv").glob(".taskyard-installed*")}


def newer_pyproject(checkout: Path) -> None:
    """pyproject.toml changed since the last install."""
    later = max(p.stat().st_mtime for p in (checkout / ".venv").glob(".taskyard-installed*")) + 10
    os.utime(checkout / "pyproject.toml", (later, later))


def test_embedded_installs_only_the_embedded_extra(checkout: Path) -> None:
    assert install(checkout, "python-embedded") == by_uv("embedded")
    assert stamps(checkout) == {".taskyard-installed-embedded"}
    assert install(checkout, "python-embedded") == []


def test_dev_after_embedded_installs_dev_and_stamps_both(checkout: Path) -> None:
    install(checkout, "python-embedded")
    assert install(checkout, "python") == by_uv("dev")
    assert stamps(checkout) == {".taskyard-installed", ".taskyard-installed-embedded"}
    # [dev] includes [embedded]: make dev has nothing to do, nor has make test.
    assert install(checkout, "python-embedded") == []
    assert install(checkout, "python") == []


def test_a_dev_venv_is_never_narrowed(checkout: Path) -> None:
    install(checkout, "python")
    newer_pyproject(checkout)
    # make dev after a pyproject.toml change keeps the developer's [dev].
    assert install(checkout, "python-embedded") == by_uv("dev")
    assert stamps(checkout) == {".taskyard-installed", ".taskyard-installed-embedded"}


def test_an_embedded_venv_is_installed_again_when_pyproject_changes(checkout: Path) -> None:
    install(checkout, "python-embedded")
    newer_pyproject(checkout)
    assert install(checkout, "python-embedded") == by_uv("embedded")


FAKE_INSTALL_TOOLS = """#!/usr/bin/env bash
echo "install-tools $*" >>"$(dirname "$0")/../calls"
"""
FAKE_VENV_PYTHON = """#!/usr/bin/env bash
echo "python $*" >>"$(dirname "$0")/../../calls"
"""


def make_calls(tmp_path: Path, target: str) -> list[str]:
    """What `make TARGET` runs, in a copy of the Makefile whose tools only record their calls."""
    root = tmp_path / "checkout"
    (root / "tools").mkdir(parents=True)
    shutil.copy2(ROOT / "Makefile", root / "Makefile")
    (root / "pyproject.toml").write_text("[project]\nname = 'taskyard'\n")
    for path, text in (
        (root / "tools" / "install-tools.sh", FAKE_INSTALL_TOOLS),
        (root / ".venv" / "bin" / "python", FAKE_VENV_PYTHON),
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHON", "MAKEFLAGS", "MAKELEVEL")}
    done = subprocess.run(
        ["make", "--no-print-directory", target], cwd=root, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return (root / "calls").read_text().splitlines()


def test_make_dev_installs_the_embedded_level(tmp_path: Path) -> None:
    calls = make_calls(tmp_path, "dev")
    assert calls[0] == "install-tools python-embedded", calls
    assert "install-tools python" not in calls
    assert calls[-1] == "python -m taskyard.cli dev", calls


def test_make_test_fast_installs_the_dev_level(tmp_path: Path) -> None:
    calls = make_calls(tmp_path, "test-fast")
    assert calls[0] == "install-tools python", calls
    assert calls[1].startswith("python -m pytest"), calls


def test_pip_installs_alone_when_uv_cannot_be_had(checkout: Path) -> None:
    (checkout / "no-uv").touch()
    assert install(checkout, "python-embedded") == ["-m pip install --quiet -e .[embedded]", COMPILE]
    assert stamps(checkout) == {".taskyard-installed-embedded"}
