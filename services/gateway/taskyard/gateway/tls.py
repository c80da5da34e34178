"""TLS for the gRPC edge, and the rule that keeps a plaintext gateway on loopback.

``TASKYARD_TLS_CERT`` + ``TASKYARD_TLS_KEY`` (PEM files) turn TLS on;
``TASKYARD_TLS_CLIENT_CA`` also requires every client to present a certificate
signed by that CA (mTLS). A gRPC host that is not loopback is refused at start
unless both TLS and tokens are configured, or ``TASKYARD_GRPC_ALLOW_INSECURE``
says that plaintext or token-less access is wanted (e.g. behind a mesh that
terminates TLS).
"""

from __future__ import annotations

import ipaddress

import grpc

from taskyard.core.config import Settings


class ListenRefused(RuntimeError):
    """The gateway will not listen as configured; the message says what to change."""


def is_loopback(host: str) -> bool:
    """Only ``localhost`` and loopback addresses; other names are not resolved, so count as remote."""
    inner = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if inner.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(inner).is_loopback
    except ValueError:
        return False


def _read(path: str, variable: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise ListenRefused(f"{variable}: cannot read {path}: {exc.strerror}") from None


def server_credentials(settings: Settings) -> grpc.ServerCredentials | None:
    """TLS credentials from the settings, or None for plaintext."""
    cert, key, client_ca = settings.grpc_tls_cert, settings.grpc_tls_key, settings.grpc_tls_client_ca
    if not cert and not key:
        if client_ca:
            raise ListenRefused("TASKYARD_TLS_CLIENT_CA needs TASKYARD_TLS_CERT and TASKYARD_TLS_KEY")
        return None
    if not (cert and key):
        raise ListenRefused("TLS needs both TASKYARD_TLS_CERT and TASKYARD_TLS_KEY")
    pair = (_read(key, "TASKYARD_TLS_KEY"), _read(cert, "TASKYARD_TLS_CERT"))
    if client_ca:
        return grpc.ssl_server_credentials(
            [pair], root_certificates=_read(client_ca, "TASKYARD_TLS_CLIENT_CA"), require_client_auth=True
        )
    return grpc.ssl_server_credentials([pair])


def check_exposure(settings: Settings) -> None:
    """Refuse a non-loopback listener that lacks TLS or tokens, unless explicitly allowed."""
    if is_loopback(settings.grpc_host) or settings.grpc_allow_insecure:
        return
    missing = [
        what
        for what, present in (
            ("TLS (TASKYARD_TLS_CERT, TASKYARD_TLS_KEY)", settings.grpc_tls_cert and settings.grpc_tls_key),
            ("tokens (TASKYARD_AUTH_TOKENS_FILE)", settings.grpc_tokens_file),
        )
        if not present
    ]
    if missing:
        raise ListenRefused(
            f"refusing to serve gRPC on {settings.grpc_host} (not loopback) without "
            + " and ".join(missing)
            + "; configure them (docs/security.md) or set TASKYARD_GRPC_ALLOW_INSECURE=1 to accept the risk"
        )
