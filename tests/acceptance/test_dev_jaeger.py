"""``taskyard dev``'s Jaeger: it starts from a relative data directory (the default
``.taskyard``), and a Jaeger that cannot start says why in its own words."""

from __future__ import annotations

import dataclasses
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


def _listening(port: int) -> socket.socket:
    """A plain listening socket on ``port`` (bound as servers bind)."""
    squatter = socket.socket()
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    squatter.bind(("127.0.0.1", port))
    squatter.listen()
    return squatter


@pytest.mark.parametrize("listener", ["otlp_grpc", "otlp_http", "query", "query_grpc", "health"])
def test_a_port_held_by_another_process_fails_the_start_naming_it(
    binary: Path, in_tmp_cwd: Path, listener: str
) -> None:
    ports = jaeger.Ports.free()
    port = getattr(ports, listener)
    with _listening(port), pytest.raises(jaeger.PortsTaken) as refused:
        jaeger.start(binary, ports, Path("jaeger-work")).stop()
    assert f"127.0.0.1:{port}" in str(refused.value) and "already in use" in str(refused.value)
    assert list(refused.value.ports.values()) == [port]


def test_a_second_jaeger_on_the_first_ones_ports_is_not_ready(binary: Path, in_tmp_cwd: Path) -> None:
    # The first one answers the health and query checks: they say nothing of the second.
    ports = jaeger.Ports.free()
    first = jaeger.start(binary, ports, Path("first"))
    try:
        with pytest.raises(jaeger.PortsTaken) as refused:
            jaeger.start(binary, ports, Path("second")).stop()
        assert f"127.0.0.1:{ports.otlp_grpc}" in str(refused.value)
        assert first.process.poll() is None
    finally:
        first.stop()


def test_dev_takes_free_ports_when_the_defaults_are_taken(
    binary: Path, in_tmp_cwd: Path, observed: list[dev_observability.DevObservability]
) -> None:
    default = jaeger.Ports()
    # The UI's default port held here (unless something else holds it already: taken either way).
    held = None if dev_observability.taken(default.query) else _listening(default.query)
    try:
        said: list[str] = []
        found = dev_observability.start(
            want_jaeger=True, metrics_base=0, data_dir=Path(".taskyard"), environ={}, say=said.append
        )
        observed.append(found)
    finally:
        if held is not None:
            held.close()
    assert found.local_jaeger is not None, said
    got = found.local_jaeger.ports
    assert got.query != default.query and got.otlp_http != default.otlp_http
    assert found.local_jaeger.process.poll() is None
    assert any(f"{default.query}" in line and "free ports" in line for line in said), said
    # The banner names the UI where it is, and the services export there.
    assert found.lines()[0] == f"  tracing:      Jaeger UI at http://127.0.0.1:{got.query}"
    assert found.service_env("gateway")["OTEL_EXPORTER_OTLP_ENDPOINT"] == f"http://127.0.0.1:{got.otlp_http}"
    assert "data" in get_json(f"http://127.0.0.1:{got.query}/api/services")


def test_a_jaeger_that_cannot_start_says_why(
    binary: Path, in_tmp_cwd: Path, observed: list[dev_observability.DevObservability]
) -> None:
    ports = jaeger.Ports.free()
    with _listening(ports.otlp_http):
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
    assert "Jaeger did not start; tracing off" in text, text
    assert f"127.0.0.1:{ports.otlp_http} (OTLP HTTP receiver) already in use" in text, text
    assert "ports in use?" not in text


def test_a_jaeger_that_exits_at_start_quotes_its_log(binary: Path, in_tmp_cwd: Path) -> None:
    # A configuration Jaeger refuses: its own words, from its log, not a guess.
    free = jaeger.Ports.free()
    bad = dataclasses.replace(free, query_grpc=free.query)
    with pytest.raises(RuntimeError) as failed:
        jaeger.start(binary, bad, Path("jaeger-work")).stop()
    text = str(failed.value)
    assert "jaeger exited with" in text and str(in_tmp_cwd / "jaeger-work" / "jaeger.log") in text, text
    assert f"127.0.0.1:{bad.query}" in text, text
