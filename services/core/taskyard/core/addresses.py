"""NNG addresses: where each service listens and where the others dial it, from the
host, port and transport settings (``taskyard.core.config.Settings`` has them all).

``X_listen_address`` is where the owning service listens (bind host); ``X_addresses``
are where the others dial it: one address per scheduler or store host, all dialed on
one socket (``X_address`` is the first, for what needs only one). With ipc there is
one socket file per role, the same for listening and dialing.
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path
from typing import TYPE_CHECKING

from taskyard.core.priority import Priority

# Offsets from the base port, after the seed: lanes at +0..+3.
RESULT_QUERY_OFFSET = 4
REGISTRATION_OFFSET = 5
SURVEY_OFFSET = 6
EVENTS_OFFSET = 7
# The store's streams for one audience each (NNG SUB filters topics on the
# subscriber's side, so every PUB message crosses every subscriber's pipe and
# wakes its process): the leases and cancels of pools, and the scheduler's
# share of the events. The full stream at +7 stays for the gateway and tools.
POOL_STREAM_OFFSET = 8
SCHEDULER_STREAM_OFFSET = 9

# Listening on every interface: such a host can be listened on, never announced.
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", "[::]"})


def url_host(host: str) -> str:
    """``host`` as it goes into a ``tcp://host:port`` URL (IPv6 literals in brackets)."""
    if ":" in host and not host.startswith("["):
        return f"[{host}]"
    return host


class Addresses:
    """The address properties of Settings, from its fields of the same names."""

    if TYPE_CHECKING:
        # The settings fields this reads; declared for the type checker only, so the
        # settings model alone declares (and validates) them.
        host: str
        bind_host: str
        scheduler_host: str
        store_host: str
        scheduler_hosts: tuple[str, ...]
        store_hosts: tuple[str, ...]
        advertise_host: str
        base_port: int
        discovery_port: int
        pool_pair_port: int
        transport: str
        ipc_dir: str

    # --- hosts --------------------------------------------------------------
    # Each role's host, with the fallbacks applied (the fields keep "" = unset).
    @property
    def effective_bind_host(self) -> str:
        return self.bind_host or self.host

    @property
    def effective_scheduler_hosts(self) -> tuple[str, ...]:
        """Every scheduler's host: the list when set, else the one host."""
        return self.scheduler_hosts or (self.scheduler_host or self.host,)

    @property
    def effective_store_hosts(self) -> tuple[str, ...]:
        """Every result-store's host: the list when set, else the one host."""
        return self.store_hosts or (self.store_host or self.host,)

    @property
    def effective_scheduler_host(self) -> str:
        return self.effective_scheduler_hosts[0]

    @property
    def effective_store_host(self) -> str:
        return self.effective_store_hosts[0]

    @property
    def effective_advertise_host(self) -> str:
        """What a pool announces: TASKYARD_ADVERTISE_HOST, else the bind host, else (when
        that is a wildcard such as 0.0.0.0, which nobody can dial) this machine's name."""
        if self.advertise_host:
            return self.advertise_host
        bind = self.effective_bind_host
        return socket.gethostname() if bind in WILDCARD_HOSTS else bind

    # --- addresses -------------------------------------------------------
    def _address(self, name: str, port: int, host: str) -> str:
        if self.transport == "ipc":
            return f"ipc://{Path(self.ipc_dir) / name}.sock"
        return f"{self.transport}://{url_host(host)}:{port}"

    def _addresses(self, name: str, port: int, hosts: tuple[str, ...]) -> tuple[str, ...]:
        # ipc names a socket file per role: one machine, one instance of each.
        if self.transport == "ipc":
            return (self._address(name, port, ""),)
        return tuple(self._address(name, port, host) for host in hosts)

    def _scheduler(self, name: str, port: int) -> tuple[str, ...]:
        return self._addresses(name, port, self.effective_scheduler_hosts)

    def _store(self, name: str, port: int) -> tuple[str, ...]:
        return self._addresses(name, port, self.effective_store_hosts)

    @staticmethod
    def _lane_name(priority: Priority) -> str:
        return f"lane-{priority.name.lower()}"

    def lane_addresses(self, priority: Priority) -> tuple[str, ...]:
        return self._scheduler(self._lane_name(priority), self.base_port + priority.lane_offset)

    def lane_address(self, priority: Priority) -> str:
        return self.lane_addresses(priority)[0]

    def lane_listen_address(self, priority: Priority) -> str:
        return self._address(
            self._lane_name(priority), self.base_port + priority.lane_offset, self.effective_bind_host
        )

    @property
    def store_addresses(self) -> tuple[str, ...]:
        return self._store("store", self.base_port + RESULT_QUERY_OFFSET)

    @property
    def store_address(self) -> str:
        return self.store_addresses[0]

    @property
    def store_listen_address(self) -> str:
        return self._address("store", self.base_port + RESULT_QUERY_OFFSET, self.effective_bind_host)

    @property
    def registration_addresses(self) -> tuple[str, ...]:
        return self._scheduler("registration", self.base_port + REGISTRATION_OFFSET)

    @property
    def registration_address(self) -> str:
        return self.registration_addresses[0]

    @property
    def registration_listen_address(self) -> str:
        return self._address("registration", self.base_port + REGISTRATION_OFFSET, self.effective_bind_host)

    @property
    def survey_addresses(self) -> tuple[str, ...]:
        return self._scheduler("survey", self.base_port + SURVEY_OFFSET)

    @property
    def survey_address(self) -> str:
        return self.survey_addresses[0]

    @property
    def survey_listen_address(self) -> str:
        return self._address("survey", self.base_port + SURVEY_OFFSET, self.effective_bind_host)

    @property
    def advertised_survey_address(self) -> str:
        """The survey address a scheduler hands the pools that register with it: its
        own. With one scheduler host that host names it (pools dial it under that
        name), unless TASKYARD_ADVERTISE_HOST says otherwise; with several, the first
        may be another scheduler, so it is the advertise host (as a pool's PAIR address)."""
        one = len(self.effective_scheduler_hosts) == 1 and not self.advertise_host
        host = self.effective_scheduler_host if one else self.effective_advertise_host
        return self._address("survey", self.base_port + SURVEY_OFFSET, host)

    @property
    def events_addresses(self) -> tuple[str, ...]:
        return self._store("events", self.base_port + EVENTS_OFFSET)

    @property
    def events_address(self) -> str:
        return self.events_addresses[0]

    @property
    def events_listen_address(self) -> str:
        return self._address("events", self.base_port + EVENTS_OFFSET, self.effective_bind_host)

    @property
    def pool_stream_addresses(self) -> tuple[str, ...]:
        return self._store("events-pools", self.base_port + POOL_STREAM_OFFSET)

    @property
    def pool_stream_address(self) -> str:
        return self.pool_stream_addresses[0]

    @property
    def pool_stream_listen_address(self) -> str:
        return self._address("events-pools", self.base_port + POOL_STREAM_OFFSET, self.effective_bind_host)

    @property
    def scheduler_stream_addresses(self) -> tuple[str, ...]:
        return self._store("events-scheduler", self.base_port + SCHEDULER_STREAM_OFFSET)

    @property
    def scheduler_stream_address(self) -> str:
        return self.scheduler_stream_addresses[0]

    @property
    def scheduler_stream_listen_address(self) -> str:
        return self._address(
            "events-scheduler", self.base_port + SCHEDULER_STREAM_OFFSET, self.effective_bind_host
        )

    @property
    def discovery_addresses(self) -> tuple[str, ...]:
        return self._scheduler("discovery", self.discovery_port)

    @property
    def discovery_address(self) -> str:
        return self.discovery_addresses[0]

    @property
    def discovery_listen_address(self) -> str:
        return self._address("discovery", self.discovery_port, self.effective_bind_host)

    def pool_pair_listen_address(self, pool_id: str) -> str:
        """Where a pool's PAIR socket listens; port 0 (the default) lets the OS choose."""
        return self._address(f"pool-{pool_id}", self.pool_pair_port, self.effective_bind_host)

    def advertised_pair_address(self, bound: str) -> str:
        """The address a pool registers and announces for its PAIR socket, from the one it
        actually bound (``transport.listen_address``): the same port on the advertise host.
        ipc addresses are returned unchanged."""
        if self.transport == "ipc" or not bound.startswith(f"{self.transport}://"):
            return bound
        port = bound.rsplit(":", 1)[1]
        return f"{self.transport}://{url_host(self.effective_advertise_host)}:{port}"


# Names that are this machine's loopback wherever they are resolved.
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """``localhost`` (and its aliases) and loopback addresses, IPv6 with or without
    brackets. Other names are not resolved: they count as remote (a name can change
    what it resolves to; the safe answer for "may this listen without credentials" is no)."""
    inner = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if inner.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(inner).is_loopback
    except ValueError:
        return False
