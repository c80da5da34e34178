"""Test clusters' ports: below the ephemeral range (an outgoing connection cannot
take one between its choice and its bind), and apart between xdist workers."""

from __future__ import annotations

import pytest
from support import ports


def test_each_worker_has_its_own_share_below_the_ephemeral_range(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    first = ports._share()
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    second = ports._share()
    assert first[1] <= second[0] and second[1] <= 32768
    assert first[0] >= 1024


def test_ports_handed_out_are_not_handed_out_again_soon() -> None:
    handed = [ports.free_port() for _ in range(50)]
    assert len(set(handed)) == 50
    low, high = ports._SHARE
    assert all(low <= p < high for p in handed)
    block = ports.free_port_block(10)
    assert not set(range(block, block + 10)) & set(handed)
