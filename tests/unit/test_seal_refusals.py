"""The one line about refused keys blames the suite only in a process that dials it (a
pool); a service the pools dial names the key ids it refuses. It is said whether the
refusal is found by the gate's screening (before any MAC) or by the MAC itself, and
for a pool with a key meeting an unsealed suite too."""

from __future__ import annotations

import base64
import logging
import time

import pytest

from taskyard.core import gate, seal

KEY_A = "a:" + base64.b64encode(b"A" * 32).decode()
KEY_B = "b:" + base64.b64encode(b"B" * 32).decode()
KEY_A_OTHER_SECRET = "a:" + base64.b64encode(b"Z" * 32).decode()
SURVEY = b"sv\x00survey"
LOGGER = "taskyard.core.seal"


def _seal(spec: str, owner: str = "process") -> seal.Seal:
    return seal.Seal(seal.Keyring.parse(spec), owner=owner)


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno >= logging.ERROR]


def _through_the_gate(receiver: seal.Seal, raw: bytes) -> bytes | None:
    """As a socket receives: the gate's screen first, then the MAC."""
    return gate.Gate(receiver, seal.ReplayGuard(), "test").open_bytes(raw)


@pytest.mark.parametrize(
    ("own", "peer", "said"),
    [
        (KEY_A, KEY_B, "refusing messages signed with key id 'b'; this process holds 'a'"),
        (
            KEY_A,
            KEY_A_OTHER_SECRET,
            "refusing messages signed with key id 'a' under another secret; this process holds 'a'",
        ),
        ("", KEY_B, "refusing messages signed with key id 'b'; this process has no bus key"),
        (KEY_A, "", "refusing unsigned messages (a peer without a bus key?); this process holds 'a'"),
    ],
)
def test_a_service_the_pools_dial_names_the_key_ids_and_blames_no_one(
    caplog: pytest.LogCaptureFixture, own: str, peer: str, said: str
) -> None:
    # A restarted scheduler whose first message comes from a pool with another key.
    scheduler = _seal(own)
    pool = _seal(peer, owner="pool")
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        for _ in range(3):
            assert _through_the_gate(scheduler, pool.seal(SURVEY + b" %f" % time.time())) is None
    lines = _lines(caplog)
    assert len(lines) == 1, lines
    assert lines[0].startswith(said), lines
    assert "the suite refuses" not in lines[0] and "TASKYARD_BUS_KEYS" in lines[0]


@pytest.mark.parametrize(
    ("own", "suite", "why"),
    [
        (KEY_A, KEY_B, "the suite signs with key id 'b', this pool holds 'a'"),
        (KEY_A, KEY_A_OTHER_SECRET, "same key id 'a', another secret"),
        ("", KEY_B, "the suite seals its internal bus (key id 'b') and this pool has no bus key"),
        (KEY_A, "", "the suite's arrive unsigned (it runs without a bus key) while this pool seals with 'a'"),
    ],
)
def test_a_pool_says_the_suite_refuses_it_whichever_check_refused(
    caplog: pytest.LogCaptureFixture, own: str, suite: str, why: str
) -> None:
    pool = _seal(own, owner="pool")
    scheduler = _seal(suite)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        for _ in range(3):  # the scheduler's surveys
            assert _through_the_gate(pool, scheduler.seal(SURVEY)) is None
    lines = _lines(caplog)
    assert len(lines) == 1, lines
    assert lines[0].startswith("the suite refuses this pool's messages: "), lines
    assert why in lines[0], lines
    assert "survey" not in lines[0]  # never the message's content


def test_nothing_is_said_once_a_peer_was_verified(caplog: pytest.LogCaptureFixture) -> None:
    scheduler = _seal(KEY_A)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert _through_the_gate(scheduler, _seal(KEY_A, owner="pool").seal(SURVEY)) == SURVEY
        assert _through_the_gate(scheduler, _seal(KEY_B, owner="pool").seal(SURVEY)) is None
        assert _through_the_gate(scheduler, SURVEY) is None
    assert _lines(caplog) == []
    assert scheduler.refusals.counts() == {"unknown_key": 1, "unsigned": 1}
