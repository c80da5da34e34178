"""One rule for "this machine only", used wherever a listener may go without credentials
(the bus unsealed, metrics without a token, the gateway without TLS, the dashboard's
Host check)."""

from __future__ import annotations

import pytest

from taskyard.core.addresses import is_loopback


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "LOCALHOST",
        "localhost.localdomain",
        "ip6-localhost",
        "127.0.0.1",
        "127.0.0.2",
        "::1",
        "[::1]",
    ],
)
def test_loopback(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize(
    "host", ["0.0.0.0", "::", "[::]", "10.0.0.1", "example.com", "localhost.example.com", ""]
)
def test_not_loopback(host: str) -> None:
    assert not is_loopback(host)
