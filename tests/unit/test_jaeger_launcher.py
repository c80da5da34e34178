"""Where the Jaeger UI's assets are found, and how Jaeger's configuration names them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from taskyard.cli import jaeger


def _ui(directory: Path) -> Path:
    directory.mkdir(parents=True)
    (directory / "index.html").write_text("<title>Jaeger UI</title>")
    return directory


def test_the_config_serves_the_ui_from_its_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _ui(tmp_path / "with space: and colon")
    parsed = yaml.safe_load(jaeger.config(jaeger.Ports(), ui_assets=Path("with space: and colon")))
    query = parsed["extensions"]["jaeger_query"]
    assert query["ui"] == {"assets_path": str(tmp_path / "with space: and colon")}
    assert query["storage"] == {"traces": "memstore"}


def test_without_assets_the_config_names_none() -> None:
    parsed = yaml.safe_load(jaeger.config(jaeger.Ports()))
    assert "ui" not in parsed["extensions"]["jaeger_query"]


def test_the_ui_beside_the_binary_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TASKYARD_JAEGER_UI", raising=False)
    (tmp_path / "bin").mkdir()
    binary = tmp_path / "bin" / "jaeger"
    binary.write_text("")
    assets = _ui(tmp_path / "share" / "jaeger-ui")
    assert jaeger.find_ui(binary) == assets


def test_taskyard_jaeger_ui_names_the_assets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assets = _ui(tmp_path / "ui")
    monkeypatch.setenv("TASKYARD_JAEGER_UI", str(assets))
    assert jaeger.find_ui() == assets
    # A directory without the UI's index.html is no UI (Jaeger would serve nothing).
    monkeypatch.setenv("TASKYARD_JAEGER_UI", str(tmp_path))
    assert jaeger.find_ui() is None
