"""The bus's TLS settings (core.bus_tls): what a service refuses to start with, the
addresses tls+tcp gives, and two sealed sockets that talk over it."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pynng
import pytest
from support import certs

from taskyard.core import bus_tls, transport
from taskyard.core.config import Settings


@pytest.fixture(autouse=True)
def _restore_installed() -> Iterator[None]:
    saved = bus_tls._current, bus_tls._installed
    yield
    bus_tls._current, bus_tls._installed = saved


def _settings(made: certs.BusCertificates, **changes: object) -> Settings:
    files = {"bus_tls_ca": str(made.ca), "bus_tls_cert": str(made.cert), "bus_tls_key": str(made.key)}
    return Settings().replace(transport="tls+tcp", **{**files, **changes})


def test_other_transports_need_no_tls() -> None:
    assert bus_tls.BusTls.from_settings(Settings().replace(transport="tcp")) is None
    assert bus_tls.BusTls.from_settings(Settings().replace(transport="ipc")) is None


def test_tls_tcp_gives_tls_addresses() -> None:
    s = Settings.from_env({"TASKYARD_TRANSPORT": "tls+tcp", "TASKYARD_ADVERTISE_HOST": "pool-a"})
    assert s.store_address.startswith("tls+tcp://127.0.0.1:")
    assert s.advertised_pair_address("tls+tcp://0.0.0.0:4100") == "tls+tcp://pool-a:4100"
    with pytest.raises(ValueError, match="TASKYARD_TRANSPORT"):
        Settings.from_env({"TASKYARD_TRANSPORT": "tls"})


def test_each_unusable_file_is_named(tmp_path: Path) -> None:
    made = certs.make_bus(tmp_path)
    with pytest.raises(bus_tls.BusTlsError, match="TASKYARD_BUS_TLS_CA is unset"):
        bus_tls.BusTls.from_settings(_settings(made, bus_tls_ca=""))
    with pytest.raises(bus_tls.BusTlsError, match=r"TASKYARD_BUS_TLS_KEY=.*nope.*cannot be read"):
        bus_tls.BusTls.from_settings(_settings(made, bus_tls_key=str(tmp_path / "nope")))
    (tmp_path / "junk").write_text("not a certificate")
    with pytest.raises(bus_tls.BusTlsError, match=r"TASKYARD_BUS_TLS_CERT=.*not a PEM file"):
        bus_tls.BusTls.from_settings(_settings(made, bus_tls_cert=str(tmp_path / "junk")))
    other = certs.make_bus(tmp_path / "other")
    with pytest.raises(bus_tls.BusTlsError, match="not a certificate and its private key"):
        bus_tls.BusTls.from_settings(_settings(made, bus_tls_key=str(other.key)))
    with pytest.raises(bus_tls.BusTlsError, match="TASKYARD_BUS_TLS_SERVER_NAME is empty"):
        bus_tls.BusTls.from_settings(_settings(made, bus_tls_server_name=""))


def test_a_service_stops_with_the_reason(tmp_path: Path) -> None:
    made = certs.make_bus(tmp_path)
    with pytest.raises(SystemExit, match=r"^taskyard: .*TASKYARD_BUS_TLS_CA is unset"):
        bus_tls.configure_service(_settings(made, bus_tls_ca=""))


def test_a_tls_address_without_tls_is_refused() -> None:
    bus_tls.install(None)
    assert bus_tls.socket_options("tcp://127.0.0.1:5555", listening=True) == {}
    with pytest.raises(bus_tls.BusTlsError, match="no bus TLS"):
        transport.open_socket(pynng.Rep0, max_message_bytes=1024, listen="tls+tcp://127.0.0.1:0")


def test_clear_text_beyond_loopback_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="taskyard.core.bus_tls"):
        bus_tls.configure(Settings().replace(transport="tcp", bind_host="127.0.0.1"))
        assert not caplog.records
        bus_tls.configure(Settings().replace(transport="tcp", bind_host="0.0.0.0"))
    assert "in clear text" in caplog.text and "tls+tcp" in caplog.text


def test_sealed_sockets_talk_over_tls(tmp_path: Path) -> None:
    bus_tls.configure(_settings(certs.make_bus(tmp_path)))
    with transport.open_socket(
        pynng.Rep0, max_message_bytes=1 << 16, listen="tls+tcp://127.0.0.1:0", recv_timeout=10_000
    ) as rep:
        address = transport.listen_address(rep)
        assert address.startswith("tls+tcp://127.0.0.1:") and not address.endswith(":0")
        with transport.open_socket(
            pynng.Req0, max_message_bytes=1 << 16, dial=address, recv_timeout=10_000, send_timeout=10_000
        ) as req:
            req.send(b"ping")
            assert rep.recv() == b"ping"
            rep.send(b"pong")
            assert req.recv() == b"pong"
