"""Channel credentials from the client's TLS and token options.

A token travels as ``authorization: Bearer <token>`` call credentials, which
gRPC sends only over a secure channel: TLS, or for a plaintext loopback gateway
(``taskyard dev`` with tokens) local credentials, which refuse any other host.
So a token is never sent in clear over a network.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc

TOKEN_ENV = "TASKYARD_TOKEN"

PemSource = str | os.PathLike[str] | bytes


def _pem(value: PemSource | None) -> bytes | None:
    """PEM bytes as given, or read from a path."""
    if value is None or isinstance(value, bytes):
        return value
    return Path(value).read_bytes()


def _target_host(target: str) -> str:
    """The host of ``host:port``, ``[v6]:port``, ``dns:///host:port`` or ``ipv4:addr:port``."""
    rest = target
    for scheme in ("dns:///", "dns:", "ipv4:", "ipv6:"):
        if rest.startswith(scheme):
            rest = rest[len(scheme) :]
            break
    rest = rest.split(",", 1)[0]
    if rest.startswith("["):
        return rest[1:].split("]", 1)[0]
    host, sep, _port = rest.rpartition(":")
    return host if sep and ":" not in host else rest


def is_loopback_target(target: str) -> bool:
    host = _target_host(target)
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def channel_credentials(
    target: str,
    *,
    credentials: grpc.ChannelCredentials | None,
    token: str | None,
    tls: bool | None,
    tls_ca: PemSource | None,
    tls_cert: PemSource | None,
    tls_key: PemSource | None,
) -> grpc.ChannelCredentials | None:
    """The credentials for ``target``, or None for a plaintext channel without a token."""
    if token is None:
        token = os.environ.get(TOKEN_ENV) or None
    if (tls_cert is None) != (tls_key is None):
        raise ValueError("a client certificate needs both tls_cert and tls_key")
    if credentials is None and (tls or tls_ca is not None or tls_cert is not None):
        credentials = grpc.ssl_channel_credentials(
            root_certificates=_pem(tls_ca), private_key=_pem(tls_key), certificate_chain=_pem(tls_cert)
        )
    if token is None:
        return credentials
    if credentials is None:
        if not is_loopback_target(target):
            raise ValueError(
                f"a token is sent only over TLS or to a loopback address, and {target!r} is neither: "
                "give tls=True or tls_ca"
            )
        credentials = grpc.local_channel_credentials(grpc.LocalConnectionType.LOCAL_TCP)
    return grpc.composite_channel_credentials(credentials, grpc.access_token_call_credentials(token))


def channel_options(options: Sequence[tuple[str, Any]], tls_server_name: str | None) -> list[tuple[str, Any]]:
    if not tls_server_name:
        return list(options)
    return [*options, ("grpc.ssl_target_name_override", tls_server_name)]
