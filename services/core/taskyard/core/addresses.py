"""NNG addresses: where each service listens and where the others dial it, from the
host, port and transport settings (``taskyard.core.config.Settings`` has them all).

``X_listen_address`` is where the owning service listens (bind host); ``X_address``
is where the others dial it (scheduler or store host). With ipc both are the same
socket file.
"""

from __future__ import annotations

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
    def effective_scheduler_host(self) -> str:
        return self.scheduler_host or self.host

    @property
    def effective_store_host(self) -> str:
        return self.store_host or self.host

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
        return f"tcp://{url_host(host)}:{port}"

    def _lane(self, priority: Priority, host: str) -> str:
        return self._address(f"lane-{priority.name.lower()}", self.base_port + priority.lane_offset, host)

    def lane_address(self, priority: Priority) -> str:
        return self._lane(priority, self.effective_scheduler_host)

    def lane_listen_address(self, priority: Priority) -> str:
        return self._lane(priority, self.effective_bind_host)

    @property
    def store_address(self) -> str:
        return self._address("store", self.base_port + RESULT_QUERY_OFFSET, self.effective_store_host)

    @property
    def store_listen_address(self) -> str:
        return self._address("store", self.base_port + RESULT_QUERY_OFFSET, self.effective_bind_host)

    @property
    def registration_address(self) -> str:
        return self._address(
            "registration", self.base_port + REGISTRATION_OFFSET, self.effective_scheduler_host
        )

    @property
    def registration_listen_address(self) -> str:
        return self._address("registration", self.base_port + REGISTRATION_OFFSET, self.effective_bind_host)

    @property
    def survey_address(self) -> str:
        return self._address("survey", self.base_port + SURVEY_OFFSET, self.effective_scheduler_host)

    @property
    def survey_listen_address(self) -> str:
        return self._address("survey", self.base_port + SURVEY_OFFSET, self.effective_bind_host)

    @property
    def events_address(self) -> str:
        return self._address("events", self.base_port + EVENTS_OFFSET, self.effective_store_host)

    @property
    def events_listen_address(self) -> str:
        return self._address("events", self.base_port + EVENTS_OFFSET, self.effective_bind_host)

    @property
    def pool_stream_address(self) -> str:
        return self._address("events-pools", self.base_port + POOL_STREAM_OFFSET, self.effective_store_host)

    @property
    def pool_stream_listen_address(self) -> str:
        return self._address("events-pools", self.base_port + POOL_STREAM_OFFSET, self.effective_bind_host)

    @property
    def scheduler_stream_address(self) -> str:
        return self._address(
            "events-scheduler", self.base_port + SCHEDULER_STREAM_OFFSET, self.effective_store_host
        )

    @property
    def scheduler_stream_listen_address(self) -> str:
        return self._address(
            "events-scheduler", self.base_port + SCHEDULER_STREAM_OFFSET, self.effective_bind_host
        )

    @property
    def discovery_address(self) -> str:
        return self._address("discovery", self.discovery_port, self.effective_scheduler_host)

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
        if self.transport == "ipc" or not bound.startswith("tcp://"):
            return bound
        port = bound.rsplit(":", 1)[1]
        return f"tcp://{url_host(self.effective_advertise_host)}:{port}"
