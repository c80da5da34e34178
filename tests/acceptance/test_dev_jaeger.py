"""``taskyard dev``'s Jaeger: it starts from a relative data directory (the default
``.taskyard``), and a Jaeger that cannot start says why in its own words."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.observability import get_json

from taskyard.cli import dev_observability, jaeger

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def binary() -> Path:
    found = jaeger.find_binary()
    if found is None:
        pytest.fail("no Jaeger binary: run `tools/install-tools.sh jaeger` (CI does)")
    return found


@pytest.fixture
def in_tmp_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "project"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


@pytest.fixture
def observed() -> Iterator[list[dev_observability.DevObservability]]:
    """What a test started, stopped at its end whatever it asserted."""
    started: list[dev_observability.DevObservability] = []
    yield started
    for each in started:
        each.stop()


def test_jaeger_starts_from_a_relative_work_directory(binary: Path, in_tmp_cwd: Path) -> None:
    running = jaeger.start(binary, jaeger.Ports.free(), Path("jaeger-work"))
    try:
        assert running.process.poll() is None
        assert "data" in get_json(f"{running.query_url}/api/services")
        assert running.log == in_tmp_cwd / "jaeger-work" / "jaeger.log"
    finally:
        running.stop()


def test_dev_starts_jaeger_with_its_default_relative_data_dir(
    binary: Path, in_tmp_cwd: Path, observed: list[dev_observability.DevObservability]
) -> None:
    said: list[str] = []
    found = dev_observability.start(
        want_jaeger=True,
        metrics_base=0,
        data_dir=Path(".taskyard"),
        environ={},
        say=said.append,
        jaeger_ports=jaeger.Ports.free(),
    )
    observed.append(found)
    assert found.local_jaeger is not None, said
    assert found.local_jaeger.process.poll() is None
    assert (in_tmp_cwd / ".taskyard" / "jaeger" / "jaeger.yaml").is_file()
    assert (in_tmp_cwd / ".taskyard" / "jaeger.log").is_file()
    # Its query API answers, and the services are pointed at it.
    assert "data" in get_json(f"{found.local_jaeger.query_url}/api/services")
    exported_to = found.service_env("gateway")["OTEL_EXPORTER_OTLP_ENDPOINT"]
    assert exported_to == found.local_jaeger.otlp_http_endpoint
    # The banner's line names the UI (installed beside the binary), where the dashboard links too.
    assert found.lines()[0] == f"  tracing:      Jaeger UI at {found.local_jaeger.query_url}"
    assert found.trace_url == f"{found.local_jaeger.query_url}/trace/{{trace_id}}"


def test_a_jaeger_that_cannot_start_says_why(
    binary: Path, in_tmp_cwd: Path, observed: list[dev_observability.DevObservability]
) -> None:
    ports = jaeger.Ports.free()
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", ports.otlp_http))
        squatter.listen()
        said: list[str] = []
        found = dev_observability.start(
            want_jaeger=True,
            metrics_base=0,
            data_dir=Path(".taskyard"),
            environ={},
            say=said.append,
            jaeger_ports=ports,
        )
        observed.append(found)
    assert found.local_jaeger is None
    assert found.tracing_line == "tracing: off"
    text = "\n".join(said)
    # Jaeger's own words, from its log, not a guess.
    assert "Jaeger did not start; tracing off" in text, text
    assert f"127.0.0.1:{ports.otlp_http}" in text and "address already in use" in text, text
    assert str(in_tmp_cwd / ".taskyard" / "jaeger.log") in text
    assert "ports in use?" not in text
