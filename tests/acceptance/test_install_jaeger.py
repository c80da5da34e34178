"""``tools/install-tools.sh jaeger`` in a fresh checkout: the Jaeger binary and its web
UI come from the tools cache when it has them (no build, no download), the UI is
fetched through the Go module proxy and checked against its pins when it does not, and
a copy that does not match its pin is replaced."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from taskyard.cli import jaeger

pytestmark = pytest.mark.timeout(300)

SCRIPT = Path(__file__).resolve().parents[2] / "tools" / "install-tools.sh"


def _real_cache() -> Path:
    return Path(
        os.environ.get("TASKYARD_TOOLS_CACHE")
        or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "taskyard" / "tools"
    )


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A fresh checkout as far as the jaeger step sees one: the script, nothing installed."""
    root = tmp_path / "clone"
    (root / "tools").mkdir(parents=True)
    shutil.copy2(SCRIPT, root / "tools" / "install-tools.sh")
    return root


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    """A tools cache holding the Jaeger binary the real one holds (linked: no 4-minute build)."""
    real = _real_cache() / f"jaeger-{jaeger.VERSION}"
    if not real.is_file():
        pytest.fail(f"no {real}: run `tools/install-tools.sh jaeger` (CI does)")
    own = tmp_path / "cache"
    own.mkdir()
    (own / real.name).symlink_to(real)
    return own


def _install(checkout: Path, cache: Path, **env: str) -> str:
    done = subprocess.run(
        [str(checkout / "tools" / "install-tools.sh"), "jaeger"],
        env={**os.environ, "TASKYARD_TOOLS_CACHE": str(cache), **env},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _offline(tmp_path: Path) -> dict[str, str]:
    """No module proxy and an empty module cache: any fetch fails."""
    return {"GOPROXY": "off", "GOMODCACHE": str(tmp_path / "empty-modcache"), "GOFLAGS": "-modcacherw"}


def _ui_pin() -> str:
    for line in SCRIPT.read_text().splitlines():
        if line.startswith("JAEGER_UI_SHA256="):
            return line.split("=", 1)[1].strip('"')
    raise AssertionError("no JAEGER_UI_SHA256 in install-tools.sh")


def _digest(directory: Path) -> str:
    listing = subprocess.run(
        f"cd {directory} && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum",
        shell=True,
        check=True,
        capture_output=True,
        text=True,
    )
    return listing.stdout.split()[0]


def test_a_fresh_checkout_takes_jaeger_and_its_ui_from_the_cache(
    checkout: Path, cache: Path, tmp_path: Path
) -> None:
    ui_cached = _real_cache() / f"jaeger-ui-{jaeger.UI_VERSION}"
    if not (ui_cached / "index.html").is_file():
        pytest.fail(f"no {ui_cached}: run `tools/install-tools.sh jaeger` (CI does)")
    shutil.copytree(ui_cached, cache / ui_cached.name)

    out = _install(checkout, cache, **_offline(tmp_path))
    assert f"jaeger: {jaeger.VERSION} from {cache}" in out
    assert f"jaeger: UI {jaeger.UI_VERSION} from {cache}" in out
    ui = checkout / ".tools" / "share" / "jaeger-ui"
    assert (checkout / ".tools" / "bin" / "jaeger").is_file()
    assert _digest(ui) == _ui_pin()
    assert "<title>Jaeger UI</title>" in (ui / "index.html").read_text()

    again = _install(checkout, cache, **_offline(tmp_path))
    assert f"jaeger: UI {jaeger.UI_VERSION} already in .tools/share/jaeger-ui" in again


def test_the_ui_is_fetched_when_the_cache_lacks_it_and_a_bad_copy_is_replaced(
    checkout: Path, cache: Path
) -> None:
    # The module proxy is off, but the module cache the first install filled is not:
    # the fetch path runs (go mod download, the go.sum hash, unpacking, the SHA-256).
    out = _install(checkout, cache, GOPROXY="off")
    assert f"jaeger: fetching UI {jaeger.UI_VERSION}" in out
    cached = cache / f"jaeger-ui-{jaeger.UI_VERSION}"
    ui = checkout / ".tools" / "share" / "jaeger-ui"
    assert _digest(cached) == _digest(ui) == _ui_pin()

    (ui / "index.html").write_text("<html>not the UI</html>")
    out = _install(checkout, cache, GOPROXY="off")
    assert f"jaeger: UI {jaeger.UI_VERSION} from {cache}" in out
    assert _digest(ui) == _ui_pin()
