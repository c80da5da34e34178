"""The internal bus over NNG's TLS transport (``transport=tls+tcp``): encrypted, and
every connection authenticated both ways by certificates one CA signed.

The seal (core.seal) already says which role sent a message; TLS adds what it
cannot: task payloads and results cross hosts unreadable, and a host without a
certificate of the cluster's CA gets no connection at all.

A TLS configuration has a mode, and NNG takes one per socket: a listening socket
gets the server's, a dialing one the client's (every bus socket does one or the
other, core.transport). A dialer checks the name ``bus_tls_server_name`` in the
certificate it is shown, whichever host it dialed: one socket dials every instance of
a role, and one name lets one certificate per service serve every address it has.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import ssl
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import pynng

from taskyard.core.addresses import is_loopback

log = logging.getLogger(__name__)

SCHEME = "tls+tcp"


class BusTlsError(ValueError):
    """Bus TLS settings that cannot work, named by their variables."""


class _TlsSettings(Protocol):
    @property
    def transport(self) -> str: ...
    @property
    def bus_tls_ca(self) -> str: ...
    @property
    def bus_tls_cert(self) -> str: ...
    @property
    def bus_tls_key(self) -> str: ...
    @property
    def bus_tls_server_name(self) -> str: ...
    @property
    def effective_bind_host(self) -> str: ...


_VARIABLES = {
    "bus_tls_ca": "TASKYARD_BUS_TLS_CA",
    "bus_tls_cert": "TASKYARD_BUS_TLS_CERT",
    "bus_tls_key": "TASKYARD_BUS_TLS_KEY",
}


def _read(settings: _TlsSettings, field: str) -> str:
    path = getattr(settings, field)
    variable = _VARIABLES[field]
    if not path:
        raise BusTlsError(
            f"TASKYARD_TRANSPORT=tls+tcp needs {', '.join(_VARIABLES.values())} "
            f"(PEM files; docs/security.md shows how to make them): {variable} is unset"
        )
    try:
        text = Path(path).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise BusTlsError(f"{variable}={path}: cannot be read ({exc})") from None
    if "-----BEGIN " not in text:
        raise BusTlsError(f"{variable}={path}: not a PEM file")
    return text


def _check_pair(settings: _TlsSettings) -> None:
    """What NNG takes unchecked, checked by the standard library's TLS: a mismatched key
    would otherwise fail each handshake, and NNG redials in silence."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        context.load_verify_locations(cafile=settings.bus_tls_ca)
    except ssl.SSLError as exc:
        raise BusTlsError(
            f"TASKYARD_BUS_TLS_CA={settings.bus_tls_ca}: not a PEM CA certificate ({exc})"
        ) from None
    try:
        context.load_cert_chain(certfile=settings.bus_tls_cert, keyfile=settings.bus_tls_key)
    except ssl.SSLError as exc:
        raise BusTlsError(
            f"TASKYARD_BUS_TLS_CERT={settings.bus_tls_cert} and TASKYARD_BUS_TLS_KEY={settings.bus_tls_key}: "
            f"not a certificate and its private key ({exc.reason or exc})"
        ) from None


@dataclasses.dataclass(frozen=True, kw_only=True)
class BusTls:
    """The two configurations of one process: ``listening`` for the sockets it binds,
    ``dialing`` for those it connects."""

    listening: Any
    dialing: Any
    server_name: str

    @classmethod
    def from_settings(cls, settings: _TlsSettings) -> BusTls | None:
        """None unless ``transport`` is tls+tcp; the files are read (and checked) now,
        once, so a bad one stops the start, not the first connection."""
        if settings.transport != SCHEME:
            return None
        ca, cert, key = (_read(settings, f) for f in _VARIABLES)
        name = settings.bus_tls_server_name
        if not name:
            raise BusTlsError("TASKYARD_BUS_TLS_SERVER_NAME is empty: a dialer must check a name")
        _check_pair(settings)
        required = pynng.TLSConfig.AUTH_MODE_REQUIRED
        try:
            listening = pynng.TLSConfig(
                pynng.TLSConfig.MODE_SERVER,
                ca_string=ca,
                own_cert_string=cert,
                own_key_string=key,
                auth_mode=required,
            )
            dialing = pynng.TLSConfig(
                pynng.TLSConfig.MODE_CLIENT,
                ca_string=ca,
                own_cert_string=cert,
                own_key_string=key,
                server_name=name,
                auth_mode=required,
            )
        except pynng.NNGException as exc:
            raise BusTlsError(
                f"TASKYARD_BUS_TLS_CA={settings.bus_tls_ca}, TASKYARD_BUS_TLS_CERT={settings.bus_tls_cert}, "
                f"TASKYARD_BUS_TLS_KEY={settings.bus_tls_key}: NNG refused them ({exc}): a PEM CA, "
                "a PEM certificate and the PEM private key of that certificate"
            ) from None
        return cls(listening=listening, dialing=dialing, server_name=name)

    def for_socket(self, *, listening: bool) -> Any:
        return self.listening if listening else self.dialing


_current: BusTls | None = None
_installed = False
_lock = threading.Lock()


def install(tls: BusTls | None) -> None:
    """Make ``tls`` what every tls+tcp socket of this process uses from now on."""
    global _current, _installed
    with _lock:
        _current, _installed = tls, True


def configure(settings: _TlsSettings) -> BusTls | None:
    """A service's start: the bus TLS its settings configure, checked and installed."""
    tls = BusTls.from_settings(settings)
    install(tls)
    if tls is not None:
        log.info("internal bus over TLS (dialers check the name %s)", tls.server_name)
    elif settings.transport == "tcp" and not is_loopback(settings.effective_bind_host):
        log.warning(
            "the internal bus listens on %s in clear text: task payloads and results cross the "
            "network unencrypted. Set TASKYARD_TRANSPORT=tls+tcp (docs/security.md) across hosts",
            settings.effective_bind_host,
        )
    return tls


def configure_service(settings: _TlsSettings) -> BusTls | None:
    """``configure`` for a service's entry point: a refusal ends the process with its reason."""
    try:
        return configure(settings)
    except BusTlsError as exc:
        raise SystemExit(f"taskyard: {exc}") from None


def current(environ: Mapping[str, str] | None = None) -> BusTls | None:
    """The installed configuration; without one, what the environment configures
    (``TASKYARD_TRANSPORT``, ``TASKYARD_BUS_TLS_*``), so a worker process or a tool
    that inherited a service's environment needs no set-up."""
    global _current, _installed
    with _lock:
        if not _installed:
            from taskyard.core.config import BusSettings  # settings import the bus's modules

            _current = BusTls.from_settings(BusSettings.from_env(os.environ if environ is None else environ))
            _installed = True
        return _current


def socket_options(address: str, *, listening: bool) -> dict[str, Any]:
    """The pynng socket options an endpoint at ``address`` needs: a TLS configuration
    for a tls+tcp address, nothing for another."""
    if not address.startswith(f"{SCHEME}://"):
        return {}
    tls = current()
    if tls is None:
        raise BusTlsError(
            f"{address} is a tls+tcp address, but this process has no bus TLS: "
            "set TASKYARD_TRANSPORT=tls+tcp and TASKYARD_BUS_TLS_CA/_CERT/_KEY"
        )
    return {"tls_config": tls.for_socket(listening=listening)}
