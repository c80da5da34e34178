"""TLS for the gRPC edge and the dashboard, and the rule that keeps a plaintext gateway
on loopback.

``TASKYARD_TLS_CERT`` + ``TASKYARD_TLS_KEY`` (PEM files) turn TLS on;
``TASKYARD_TLS_CLIENT_CA`` also requires every client to present a certificate
signed by that CA (mTLS). A gRPC host that is not loopback is refused at start
unless both TLS and tokens are configured, or ``TASKYARD_GRPC_ALLOW_INSECURE``
says that plaintext or token-less access is wanted (e.g. behind a mesh that
terminates TLS).

The files are watched: every new connection (a TLS handshake) checks whether they
changed, and a renewed certificate (cert-manager, a Secret updated in place, files
replaced by hand) is served from the next handshake on, without a restart.
Connections already open keep the certificate they started with.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import ssl
import tempfile
import threading

import grpc

from taskyard.core.addresses import is_loopback
from taskyard.core.config import GatewaySettings

log = logging.getLogger(__name__)


class ListenRefused(RuntimeError):
    """The gateway will not listen as configured; the message says what to change."""


# What identifies a version of a file: its inode (a Kubernetes Secret volume swaps a
# symlink, so the path names a new inode), mtime and size; None when it cannot be read.
_Stamp = tuple[int, int, int, int] | None


def _stamp(path: str) -> _Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Material:
    """One consistent reading of the files: the PEM bytes gRPC is given, and the same
    bytes loaded (and so checked: the key matches the certificate) into the context
    the dashboard serves."""

    cert_chain: bytes
    private_key: bytes
    client_ca: bytes | None
    context: ssl.SSLContext


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Paths:
    cert: str
    key: str
    client_ca: str


def _read(path: str, variable: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise ListenRefused(f"{variable}: cannot read {path}: {exc.strerror}") from None


def _load_pair(context: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    """``context.load_cert_chain`` from these bytes, not the paths again: gRPC is given
    the same bytes, so it serves exactly the pair checked here (read twice, a renewal
    between the reads could hand gRPC a certificate and a key that are no pair). ssl
    loads only from files: they are written to a private temporary directory (0700,
    each file 0600) and removed at once."""
    with tempfile.TemporaryDirectory(prefix="taskyard-tls-") as directory:
        names = []
        for name, data in (("cert.pem", cert), ("key.pem", key)):
            path = os.path.join(directory, name)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            names.append(path)
        context.load_cert_chain(names[0], names[1])


def _load(paths: _Paths) -> Material:
    """Read the files and load them into an SSL context; ListenRefused says what is wrong."""
    cert = _read(paths.cert, "TASKYARD_TLS_CERT")
    key = _read(paths.key, "TASKYARD_TLS_KEY")
    client_ca = _read(paths.client_ca, "TASKYARD_TLS_CLIENT_CA") if paths.client_ca else None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        _load_pair(context, cert, key)
    except (ssl.SSLError, OSError) as exc:
        raise ListenRefused(
            f"TASKYARD_TLS_CERT / TASKYARD_TLS_KEY: {paths.cert} and {paths.key} are not a "
            f"PEM certificate chain and its private key ({exc})"
        ) from None
    if client_ca is not None:
        context.verify_mode = ssl.CERT_REQUIRED
        try:
            context.load_verify_locations(cadata=client_ca.decode("ascii", "replace"))
        except (ssl.SSLError, ValueError) as exc:
            raise ListenRefused(
                f"TASKYARD_TLS_CLIENT_CA: {paths.client_ca} holds no PEM certificate ({exc})"
            ) from None
    return Material(cert_chain=cert, private_key=key, client_ca=client_ca, context=context)


class ServingFiles:
    """The certificate, key and client CA files, read again when they change.

    ``current()`` is cheap (a stat of each file) and is asked on every handshake. A
    change is taken only once it reads as a whole: the files unchanged across the
    reading, the key matching the certificate. Until then, and if the new files are
    broken, the previous material is served; a broken version is reported once.
    """

    def __init__(self, paths: _Paths) -> None:
        self._paths = paths
        self._lock = threading.Lock()
        self._stamps = self._stamp_all()
        # Bad files at the start refuse the start: there is nothing to keep serving.
        self._material = _load(paths)
        self._refused: tuple[_Stamp, ...] | None = None

    @property
    def requires_client_certificate(self) -> bool:
        return bool(self._paths.client_ca)

    def _stamp_all(self) -> tuple[_Stamp, ...]:
        return tuple(_stamp(p) for p in (self._paths.cert, self._paths.key, self._paths.client_ca) if p)

    def current(self) -> Material:
        with self._lock:
            stamps = self._stamp_all()
            if stamps == self._stamps or stamps == self._refused:
                return self._material
            try:
                material = _load(self._paths)
            except ListenRefused as exc:
                if stamps == self._stamp_all():  # not in the middle of a replacement
                    self._refused = stamps
                    log.error("TLS files not reloaded, the previous certificate stays: %s", exc)
                return self._material
            if stamps != self._stamp_all():
                return self._material  # changed while being read: the next handshake reads again
            self._stamps, self._material = stamps, material
            log.info("TLS certificate reloaded from %s", self._paths.cert)
            return material


def serving_files(settings: GatewaySettings) -> ServingFiles | None:
    """The files the settings name, checked and read, or None for plaintext."""
    cert, key, client_ca = settings.grpc_tls_cert, settings.grpc_tls_key, settings.grpc_tls_client_ca
    if not cert and not key:
        if client_ca:
            raise ListenRefused("TASKYARD_TLS_CLIENT_CA needs TASKYARD_TLS_CERT and TASKYARD_TLS_KEY")
        return None
    if not (cert and key):
        raise ListenRefused("TLS needs both TASKYARD_TLS_CERT and TASKYARD_TLS_KEY")
    return ServingFiles(_Paths(cert=cert, key=key, client_ca=client_ca))


def _grpc_configuration(material: Material) -> grpc.ServerCertificateConfiguration:
    return grpc.ssl_server_certificate_configuration(
        [(material.private_key, material.cert_chain)], root_certificates=material.client_ca
    )


def server_credentials(settings: GatewaySettings) -> grpc.ServerCredentials | None:
    """TLS credentials for the gRPC edge, or None for plaintext. gRPC asks the fetcher on
    every handshake; it answers a new configuration only when the files changed."""
    files = serving_files(settings)
    if files is None:
        return None
    served = [files.current()]

    def fetch() -> grpc.ServerCertificateConfiguration | None:
        material = files.current()
        if material is served[0]:
            return None  # gRPC keeps the configuration it has
        served[0] = material
        return _grpc_configuration(material)

    return grpc.dynamic_ssl_server_credentials(
        _grpc_configuration(served[0]),
        # grpc documents None as "no change"; its stubs allow only a configuration.
        fetch,  # type: ignore[arg-type]
        require_client_authentication=files.requires_client_certificate,
    )


def http_context(settings: GatewaySettings) -> ssl.SSLContext | None:
    """The dashboard's SSL context, or None for plaintext: the same files as the gRPC edge.
    Its SNI callback, called on every handshake (with or without a server name), hands the
    connection a context made from the files as they are now."""
    files = serving_files(settings)
    if files is None:
        return None
    first = files.current()
    context = first.context

    def renewed(
        connection: ssl.SSLObject | ssl.SSLSocket, _name: str | None, _context: ssl.SSLContext
    ) -> None:
        material = files.current()
        if material is not first:
            connection.context = material.context
        # None: the handshake goes on.

    # The first material's context is the one the listener holds, so it carries the callback.
    context.sni_callback = renewed
    return context


def check_exposure(settings: GatewaySettings) -> None:
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
