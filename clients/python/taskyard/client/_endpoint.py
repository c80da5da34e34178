"""The gateway's address and how to reach it: the one place the client's channels are made."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import grpc
import grpc.aio

from taskyard.client import _acting_tenant, _credentials, _tracecontext
from taskyard.client._credentials import PemSource

DEFAULT_TARGET = "localhost:50051"


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """A gateway and the security to reach it with, for a channel of your own::

        channel = Endpoint("gw.example.com:50051", tls_ca="ca.pem", token=token).channel()
        stub = task_service_pb2_grpc.TaskServiceStub(channel)

    ``Client`` and ``AsyncClient`` make their channels this way from the same options, so a
    channel made here is secured exactly as theirs: ``token`` (default ``$TASKYARD_TOKEN``)
    goes as ``authorization: Bearer``, only over TLS or to a loopback target; ``tls_ca``,
    ``tls_cert`` and ``tls_key`` are PEM bytes or paths, and any of them, or ``tls=True``
    (the system's CAs), turns TLS on; ``tls_server_name`` when the certificate names another
    host; ``credentials`` wins over the ``tls_*`` options (a token is added to it);
    ``options`` are gRPC channel options; ``tenant`` (an operator token acting as one tenant)
    goes as ``taskyard-tenant`` metadata on every call (docs/tenants.md). Making the channel
    raises ``ValueError`` for options that do not go together, a file that is not PEM or a
    tenant name outside ``[a-z0-9-]{1,64}``, ``OSError`` for a file it cannot read.
    """

    target: str = DEFAULT_TARGET
    _: dataclasses.KW_ONLY
    # Secrets stay out of repr(): an endpoint may end up in a log line or a traceback.
    token: str | None = dataclasses.field(default=None, repr=False)
    tls: bool | None = None
    tls_ca: PemSource | None = None
    tls_cert: PemSource | None = None
    tls_key: PemSource | None = dataclasses.field(default=None, repr=False)
    tls_server_name: str | None = None
    credentials: grpc.ChannelCredentials | None = None
    options: Sequence[tuple[str, Any]] = ()
    tenant: str | None = None

    def channel(self) -> grpc.Channel:
        """A blocking channel (``grpc.Channel``); close it when done."""
        tenant = _acting_tenant.checked(self.tenant) if self.tenant else None
        credentials, options = _credentials.channel_credentials(self), _credentials.channel_options(self)
        if credentials is None:
            channel = grpc.insecure_channel(self.target, options=options)
        else:
            channel = grpc.secure_channel(self.target, credentials, options=options)
        return _tracecontext.traced(_acting_tenant.acting(channel, tenant))

    def aio_channel(self) -> grpc.aio.Channel:
        """An asyncio channel (``grpc.aio.Channel``); close it when done."""
        tenant = _acting_tenant.checked(self.tenant) if self.tenant else None
        credentials, options = _credentials.channel_credentials(self), _credentials.channel_options(self)
        interceptors = _tracecontext.aio_interceptors() + _acting_tenant.aio_interceptors(tenant)
        if credentials is None:
            return grpc.aio.insecure_channel(self.target, options=options, interceptors=interceptors)
        return grpc.aio.secure_channel(self.target, credentials, options=options, interceptors=interceptors)
