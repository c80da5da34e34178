"""A renewed certificate is served without a restart: a real gateway serving TLS on its
gRPC port and its dashboard, its certificate files replaced (as cert-manager or an
updated Secret replaces them), and the next connection sees the new certificate while
the process keeps running. Files that do not make a pair keep the previous one served."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
from cryptography import x509
from grpc_health.v1 import health_pb2, health_pb2_grpc
from integration.gateway_fakes import GatewayEnv, gateway_env
from support import certs
from support.ports import free_port_block

from taskyard.core.config import Settings
from taskyard.gateway import tls


def _replace(source: Path, target: Path) -> None:
    """Atomically, as a Secret volume or cert-manager swaps a file."""
    staged = target.with_name(f".{target.name}.new")
    shutil.copyfile(source, staged)
    os.replace(staged, target)


def _renew(served: certs.Certificates, renewed: certs.Certificates) -> None:
    _replace(renewed.server_cert, served.server_cert)
    _replace(renewed.server_key, served.server_key)


def _presented(port: int) -> x509.Certificate:
    """The certificate a new TLS connection to 127.0.0.1:port is shown (not verified here:
    the question is which one the server presents)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2", "http/1.1"])
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname="localhost") as conn,
    ):
        der = conn.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der)


def _certificate(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


async def _health(port: int, ca: Path) -> health_pb2.HealthCheckResponse.ServingStatus.ValueType:
    """A grpc.health.v1 check over a new TLS channel trusting only ``ca``."""
    credentials = grpc.ssl_channel_credentials(root_certificates=await asyncio.to_thread(ca.read_bytes))
    async with grpc.aio.secure_channel(f"localhost:{port}", credentials) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
    return reply.status


def _dashboard_page(port: int, ca: Path) -> int:
    """GET / over HTTPS, trusting only ``ca``: the status."""
    context = ssl.create_default_context(cafile=str(ca))
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname="localhost") as conn,
    ):
        conn.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        status_line = conn.recv(64).split(b"\r\n", 1)[0]
    return int(status_line.split()[1])


@pytest_asyncio.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[GatewayEnv, certs.Certificates]]:
    material = certs.make(tmp_path / "served")
    async with gateway_env(
        grpc_tls_cert=str(material.server_cert),
        grpc_tls_key=str(material.server_key),
        http_port=free_port_block(1),
    ) as env:
        yield env, material


async def test_a_renewed_certificate_is_served_to_new_connections_without_a_restart(
    served: tuple[GatewayEnv, certs.Certificates], tmp_path: Path
) -> None:
    env, material = served
    grpc_port, http_port = env.gateway.port, env.settings.http_port
    first = _certificate(material.server_cert)
    assert await asyncio.to_thread(_presented, grpc_port) == first
    assert await asyncio.to_thread(_presented, http_port) == first
    assert await _health(grpc_port, material.ca) == health_pb2.HealthCheckResponse.SERVING

    # A new certificate from a new CA: only a client that trusts the new CA accepts it.
    renewed = certs.make(tmp_path / "renewed")
    await asyncio.to_thread(_renew, material, renewed)
    second = _certificate(renewed.server_cert)
    assert second != first

    assert await asyncio.to_thread(_presented, grpc_port) == second
    assert await _health(grpc_port, renewed.ca) == health_pb2.HealthCheckResponse.SERVING
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await _health(grpc_port, material.ca)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    assert await asyncio.to_thread(_presented, http_port) == second
    assert await asyncio.to_thread(_dashboard_page, http_port, renewed.ca) == 200
    with pytest.raises(ssl.SSLCertVerificationError):
        await asyncio.to_thread(_dashboard_page, http_port, material.ca)


async def test_files_that_make_no_pair_keep_the_previous_certificate(
    served: tuple[GatewayEnv, certs.Certificates], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    env, material = served
    first = _certificate(material.server_cert)
    renewed = certs.make(tmp_path / "renewed")
    # Only the certificate replaced: its key is still the old one's.
    await asyncio.to_thread(_replace, renewed.server_cert, material.server_cert)
    for port in (env.gateway.port, env.settings.http_port):
        assert await asyncio.to_thread(_presented, port) == first
    assert await _health(env.gateway.port, material.ca) == health_pb2.HealthCheckResponse.SERVING
    assert "TLS files not reloaded, the previous certificate stays" in caplog.text
    # The key follows: now they make a pair, and it is served.
    await asyncio.to_thread(_replace, renewed.server_key, material.server_key)
    for port in (env.gateway.port, env.settings.http_port):
        assert await asyncio.to_thread(_presented, port) == _certificate(renewed.server_cert)


def test_a_key_that_does_not_match_the_certificate_refuses_the_start(tmp_path: Path) -> None:
    one, other = certs.make(tmp_path / "one"), certs.make(tmp_path / "other")
    settings = Settings(grpc_tls_cert=str(one.server_cert), grpc_tls_key=str(other.server_key))
    with pytest.raises(tls.ListenRefused, match="are not a PEM certificate chain and its private key"):
        tls.server_credentials(settings)
    with pytest.raises(tls.ListenRefused, match="TASKYARD_TLS_KEY: cannot read"):
        tls.server_credentials(
            Settings(grpc_tls_cert=str(one.server_cert), grpc_tls_key=str(tmp_path / "no"))
        )


def _a_pair(cert_pem: bytes, key_pem: bytes) -> bool:
    from cryptography.hazmat.primitives import serialization

    public = x509.load_pem_x509_certificate(cert_pem).public_key()
    key = serialization.load_pem_private_key(key_pem, password=None)
    encoding, form = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    return public.public_bytes(encoding, form) == key.public_key().public_bytes(encoding, form)


def test_grpc_is_given_the_bytes_that_were_checked_as_a_pair(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A renewal lands between the reading of the certificate and that of the key: the
    # bytes read are the old certificate and the new key, no pair. Checked from the
    # paths again (the new pair by then), they passed, and gRPC got the bytes.
    served, renewed = certs.make(tmp_path / "served"), certs.make(tmp_path / "renewed")
    read = tls._read

    def renewed_after_the_certificate_is_read(path: str, variable: str) -> bytes:
        data = read(path, variable)
        if variable == "TASKYARD_TLS_CERT":
            _renew(served, renewed)
        return data

    monkeypatch.setattr(tls, "_read", renewed_after_the_certificate_is_read)
    with pytest.raises(tls.ListenRefused, match="are not a PEM certificate chain and its private key"):
        tls.serving_files(
            Settings(grpc_tls_cert=str(served.server_cert), grpc_tls_key=str(served.server_key))
        )
    # Read as a whole, the files (the renewed pair now) are served as one pair.
    monkeypatch.setattr(tls, "_read", read)
    files = tls.serving_files(
        Settings(grpc_tls_cert=str(served.server_cert), grpc_tls_key=str(served.server_key))
    )
    assert files is not None
    material = files.current()
    assert _a_pair(material.cert_chain, material.private_key)
    assert x509.load_pem_x509_certificate(material.cert_chain) == _certificate(renewed.server_cert)
