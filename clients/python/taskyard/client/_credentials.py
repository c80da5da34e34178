"""Channel credentials from the client's TLS and token options.

A token travels as ``authorization: Bearer <token>`` call credentials, which
gRPC sends only over a secure channel: TLS, or for a plaintext loopback gateway
(``taskyard dev`` with tokens) local credentials, which refuse any other host.
So a token is never sent in clear over a network.
"""

from __future__ import annotations

import ipaddress
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc

if TYPE_CHECKING:
    from taskyard.client._endpoint import Endpoint

TOKEN_ENV = "TASKYARD_TOKEN"

PemSource = str | os.PathLike[str] | bytes


def pem(value: PemSource | None, option: str) -> bytes | None:
    """PEM bytes as given, or read from a path; ``option`` names the value in errors, which
    come now rather than as a failed handshake on the first call."""
    if value is None:
        return None
    if isinstance(value, bytes):
        data = value
    else:
        try:
            data = Path(value).read_bytes()
        except OSError as exc:
            # The same OSError subclass, so callers catching FileNotFoundError still do.
            raise type(exc)(f"{option}: cannot read {os.fspath(value)!r}: {exc.strerror or exc}") from None
    if b"-----BEGIN " not in data:
        where = "" if isinstance(value, bytes) else f" ({os.fspath(value)!r})"
        raise ValueError(f"{option}{where} is not PEM: no -----BEGIN line")
    return data


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


def channel_credentials(endpoint: Endpoint) -> grpc.ChannelCredentials | None:
    """The credentials for ``endpoint``, or None for a plaintext channel without a token."""
    token = endpoint.token if endpoint.token is not None else os.environ.get(TOKEN_ENV) or None
    if (endpoint.tls_cert is None) != (endpoint.tls_key is None):
        raise ValueError("a client certificate needs both tls_cert and tls_key")
    credentials = endpoint.credentials
    if credentials is None and (endpoint.tls or endpoint.tls_ca is not None or endpoint.tls_cert is not None):
        credentials = grpc.ssl_channel_credentials(
            root_certificates=pem(endpoint.tls_ca, "tls_ca"),
            private_key=pem(endpoint.tls_key, "tls_key"),
            certificate_chain=pem(endpoint.tls_cert, "tls_cert"),
        )
    if not token:  # token="" sends none, whatever $TASKYARD_TOKEN says
        return credentials
    if credentials is None:
        if not is_loopback_target(endpoint.target):
            raise ValueError(
                f"a token is sent only over TLS or to a loopback address, and {endpoint.target!r} is "
                "neither: give tls=True or tls_ca"
            )
        credentials = grpc.local_channel_credentials(grpc.LocalConnectionType.LOCAL_TCP)
    return grpc.composite_channel_credentials(credentials, grpc.access_token_call_credentials(token))


# gRPC retries these calls itself when they fail UNAVAILABLE (no connection yet, a gateway
# restarting), resending the same bytes: a submit carries its request_id, so a resent one
# is answered with the first task; the others only read. Not CancelTask: a resent cancel
# whose first try committed answers FAILED_PRECONDITION (already final), nor the schedule,
# queue, limit and tenant writes. The Go, TypeScript and Java clients retry the same list.
_RETRIED = [
    *(
        {"service": "taskyard.v1.TaskService", "method": method}
        for method in (
            "SubmitTask",
            "BatchSubmitTasks",
            "RunTask",
            "GetTask",
            "WaitTask",
            "ListTasks",
            "GetTaskTree",
            "ExplainTask",
            "GetTaskLogs",
            "StreamTaskLogs",
        )
    ),
    {"service": "taskyard.v1.QueueService", "method": "GetQueueStatus"},
    {"service": "taskyard.v1.QueueService", "method": "ListServers"},
    {"service": "taskyard.v1.ScheduleService", "method": "GetSchedule"},
    {"service": "taskyard.v1.ScheduleService", "method": "ListSchedules"},
    {"service": "taskyard.v1.LimitService", "method": "GetLimit"},
    {"service": "taskyard.v1.LimitService", "method": "ListLimits"},
    {"service": "taskyard.v1.LimitService", "method": "ListKeyWeights"},
    *(
        {"service": "taskyard.v1.FailureService", "method": method}
        for method in ("ListFailureGroups", "ListFailures", "GetRedrive", "ListRedrives", "ListRedriveItems")
    ),
    {"service": "taskyard.v1.TenantService", "method": "GetTenant"},
    {"service": "taskyard.v1.TenantService", "method": "ListTenants"},
]
SERVICE_CONFIG = json.dumps(
    {
        "methodConfig": [
            {
                "name": _RETRIED,
                "retryPolicy": {
                    "maxAttempts": 4,
                    "initialBackoff": "0.1s",
                    "maxBackoff": "2s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        ]
    }
)


def channel_options(endpoint: Endpoint) -> list[tuple[str, Any]]:
    options = list(endpoint.options)
    if not any(name == "grpc.service_config" for name, _ in options):  # the caller's own wins
        options.append(("grpc.service_config", SERVICE_CONFIG))
    if endpoint.tls_server_name:
        options.append(("grpc.ssl_target_name_override", endpoint.tls_server_name))
    return options
