"""Sockets that dial every instance of a role on one socket: every result-store,
every scheduler (``Settings.store_addresses``, ``lane_addresses(p)``, ...).

NNG keeps one pipe per connected peer and redials each address by itself, so one
socket does what the role needs: a REQ's requests go out on whichever connected pipe
takes them, a SUB receives what each PUB it reached publishes, a BUS peer hears each
hub. An address nobody listens on (a standby scheduler) never gets a pipe; it only
costs a redial now and then, and is reached as soon as it listens.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from taskyard.core import transport


def address_list(addresses: str | Sequence[str]) -> tuple[str, ...]:
    """One address or several, as a tuple (never empty)."""
    found = (addresses,) if isinstance(addresses, str) else tuple(addresses)
    if not found or not all(found):
        raise ValueError(f"no address to dial in {addresses!r}")
    return found


def open_dialer(
    cls: type[Any], addresses: str | Sequence[str], *, max_message_bytes: int, **options: Any
) -> Any:
    """A sealed socket (``transport.open_socket``) dialing every one of ``addresses``
    without waiting for any."""
    first, *rest = address_list(addresses)
    sock = transport.open_socket(cls, max_message_bytes=max_message_bytes, dial=first, **options)
    for address in rest:
        sock.dial(address, block=False)
    return sock
