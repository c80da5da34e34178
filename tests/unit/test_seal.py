"""The seal on internal messages (core.seal) and the sealed sockets of core.transport."""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Iterator
from pathlib import Path

import pynng
import pytest

from taskyard.bus.v1 import envelope_pb2, tasks_pb2
from taskyard.core import contract, rpc, seal, transport
from taskyard.core.config import Settings

KEY_A = "a:" + base64.b64encode(b"A" * 32).decode()
KEY_B = "b:" + base64.b64encode(b"B" * 32).decode()
KEY_A_OTHER_SECRET = "a:" + base64.b64encode(b"Z" * 32).decode()
TOPIC = b"dp\x00pool-1\x00"


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def make(spec: str, clock: Clock | None = None, window: float = 30.0) -> seal.Seal:
    return seal.Seal(seal.Keyring.parse(spec), window=window, clock=clock or Clock())


def refused(s: seal.Seal) -> dict[str, int]:
    return s.refusals.counts()


# --- the frame -------------------------------------------------------------------


def test_round_trip_keeps_the_topic_in_clear_at_the_front() -> None:
    s = make(KEY_A)
    body = TOPIC + b"envelope bytes"
    sealed = s.seal(body)
    assert sealed.startswith(TOPIC), "SUB prefix filtering must still see the topic"
    assert len(sealed) == len(body) + seal.FIXED_TRAILER_BYTES + len("a")
    assert s.open(sealed, seal.ReplayGuard()) == body
    assert refused(s) == {}


@pytest.mark.parametrize("where", [0, len(TOPIC) + 3, -1, -seal.MAC_BYTES - 3, -seal.MAC_BYTES - 20])
def test_one_flipped_byte_anywhere_is_refused(where: int) -> None:
    """Topic, body, send time, nonce or MAC: the MAC covers all of it."""
    s = make(KEY_A)
    sealed = bytearray(s.seal(TOPIC + b"a report that sets a result"))
    sealed[where] ^= 0x01
    assert s.open(bytes(sealed), seal.ReplayGuard()) is None
    assert sum(refused(s).values()) == 1
    assert set(refused(s)) <= {"bad_mac", "unknown_key", "unsigned"}


def test_a_flipped_body_byte_is_a_bad_mac() -> None:
    s = make(KEY_A)
    sealed = bytearray(s.seal(b"body"))
    sealed[1] ^= 0x80
    assert s.open(bytes(sealed), None) is None
    assert refused(s) == {"bad_mac": 1}


def test_unsigned_and_truncated_messages_are_refused() -> None:
    s = make(KEY_A)
    raw = transport.encode(contract.STORE_REPORT.kind, contract.STORE_REPORT.request())
    assert s.open(raw, None) is None
    assert s.open(b"", None) is None
    assert s.open(s.seal(b"x")[: -seal.MAC_BYTES], None) is None
    assert refused(s) == {"unsigned": 3}


def test_wrong_secret_under_the_same_key_id_is_a_bad_mac() -> None:
    ours, theirs = make(KEY_A), make(KEY_A_OTHER_SECRET)
    assert ours.open(theirs.seal(b"forged"), seal.ReplayGuard()) is None
    assert refused(ours) == {"bad_mac": 1}


def test_unknown_key_id_is_refused() -> None:
    ours, theirs = make(KEY_A), make(KEY_B)
    assert ours.open(theirs.seal(b"forged"), seal.ReplayGuard()) is None
    assert refused(ours) == {"unknown_key": 1}


def test_rotation_with_two_keys() -> None:
    """Add the new key everywhere, then switch the signer, then drop the old key."""
    old_only = make(KEY_A)
    both_old_signs = make(f"{KEY_A},{KEY_B}")
    both_new_signs = make(f"{KEY_B},{KEY_A}")
    new_only = make(KEY_B)
    # Step 1: the new key is added to every verify set; the old one still signs.
    assert both_old_signs.open(old_only.seal(b"m1"), None) == b"m1"
    assert old_only.open(both_old_signs.seal(b"m2"), None) == b"m2"
    # Step 2: the signer switches; processes not yet switched still verify it.
    assert both_old_signs.open(both_new_signs.seal(b"m3"), None) == b"m3"
    assert both_new_signs.open(both_old_signs.seal(b"m4"), None) == b"m4"
    # Step 3: the old key is removed: what it signs is refused from then on.
    assert new_only.open(both_new_signs.seal(b"m5"), None) == b"m5"
    assert new_only.open(old_only.seal(b"m6"), None) is None
    assert refused(new_only) == {"unknown_key": 1}


def test_messages_outside_the_window_are_stale() -> None:
    sender_clock, receiver_clock = Clock(), Clock()
    sender, receiver = make(KEY_A, sender_clock), make(KEY_A, receiver_clock, window=30)
    early = sender.seal(b"early")
    sender_clock.now += 60
    late = sender.seal(b"late")
    receiver_clock.now += 30  # exactly 30 s from both
    assert receiver.open(early, seal.ReplayGuard()) == b"early"
    assert receiver.open(late, seal.ReplayGuard()) == b"late"
    receiver_clock.now += 0.002
    assert receiver.open(early, seal.ReplayGuard()) is None
    receiver_clock.now -= 0.004
    assert receiver.open(late, seal.ReplayGuard()) is None
    assert refused(receiver) == {"stale": 2}


def test_a_replayed_message_is_refused_by_the_same_socket_only() -> None:
    s = make(KEY_A)
    guard, other = seal.ReplayGuard(), seal.ReplayGuard()
    sealed = s.seal(b"lease task 1")
    assert s.open(sealed, guard) == b"lease task 1"
    assert s.open(sealed, guard) is None
    # Another socket (a hub relaying to a peer in the same process) has its own memory.
    assert s.open(sealed, other) == b"lease task 1"
    assert refused(s) == {"replayed": 1}
    # The same bytes sealed twice are two messages.
    assert s.open(s.seal(b"lease task 1"), guard) == b"lease task 1"


def test_a_full_replay_cache_refuses_what_it_forgot_and_older() -> None:
    clock = Clock()
    s = make(KEY_A, clock)
    guard = seal.ReplayGuard(limit=3)
    first = s.seal(b"m0")
    clock.now += 0.01
    rest = []
    for i in range(1, 4):
        rest.append(s.seal(f"m{i}".encode()))
        clock.now += 0.01
    assert s.open(first, guard) == b"m0"
    for m in rest:
        assert s.open(m, guard) is not None  # m3 pushes m0 out
    assert s.open(first, guard) is None, "a forgotten message is not accepted again"
    assert s.open(rest[-1], guard) is None
    assert refused(s) == {"replayed": 2}
    assert s.open(s.seal(b"new"), guard) == b"new"


def test_without_keys_messages_pass_as_they_are() -> None:
    s = seal.Seal(seal.Keyring())
    assert not s.enabled
    assert s.seal(b"raw") == b"raw"
    assert s.open(b"raw", seal.ReplayGuard()) == b"raw"


# --- keys and settings -------------------------------------------------------------


def test_keyring_parses_lists_and_files(tmp_path: Path) -> None:
    ring = seal.Keyring.parse(f" {KEY_B} , {KEY_A} ")
    assert ring.signer == "b" and [k for k, _ in ring.keys] == ["b", "a"]
    keys_file = tmp_path / "bus.keys"
    keys_file.write_text(f"# rotated 2026-11\n{KEY_A}\n\n{KEY_B}\n")
    assert seal.Keyring.load(keys="", keys_file=str(keys_file)).signer == "a"
    assert seal.Keyring.load(keys=KEY_B, keys_file=str(keys_file)).signer == "b"


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("nokey", "kid:base64secret"),
        ("a:!!notbase64!!", "not valid base64"),
        ("a:" + base64.b64encode(b"short").decode(), "at least 16 bytes"),
        (f"{KEY_A},{KEY_A_OTHER_SECRET}", "appears twice"),
        ("x" * 40 + ":" + base64.b64encode(b"A" * 32).decode(), "at most 32 bytes"),
    ],
)
def test_bad_keys_are_refused_without_echoing_the_secret(spec: str, needle: str) -> None:
    with pytest.raises(seal.BusKeyError) as info:
        seal.Keyring.parse(spec)
    assert needle in str(info.value)
    secret = spec.partition(":")[2]
    if len(secret) > 8:
        assert secret not in str(info.value)


def test_key_material_never_shows_in_reprs() -> None:
    secret = KEY_A.partition(":")[2]
    assert secret not in repr(seal.Keyring.parse(KEY_A))
    settings = Settings.from_env({"TASKYARD_BUS_KEYS": KEY_A})
    assert settings.bus_keys == KEY_A
    assert secret not in repr(settings)


def test_settings_carry_the_keys_to_children() -> None:
    env = {"TASKYARD_BUS_KEYS": KEY_A, "TASKYARD_BUS_REPLAY_WINDOW": "12.5"}
    settings = Settings.from_env(env)
    child = Settings.from_env(settings.to_env())
    assert (child.bus_keys, child.bus_replay_window) == (KEY_A, 12.5)
    # Unset keys are left out, so a child keeps those its environment inherits.
    assert "TASKYARD_BUS_KEYS" not in Settings().to_env()


@pytest.mark.parametrize(
    ("changes", "refused_start"),
    [
        ({"transport": "tcp", "host": "127.0.0.1"}, False),
        ({"transport": "tcp", "host": "::1"}, False),
        ({"transport": "tcp", "host": "localhost"}, False),
        ({"transport": "ipc", "bind_host": "0.0.0.0"}, False),
        ({"transport": "tcp", "bind_host": "0.0.0.0"}, True),
        ({"transport": "tcp", "host": "10.0.0.5"}, True),
        ({"transport": "tcp", "bind_host": "0.0.0.0", "bus_keys": KEY_A}, False),
    ],
)
def test_unsealed_bus_only_on_loopback(changes: dict[str, str], refused_start: bool) -> None:
    settings = Settings(**changes)  # type: ignore[arg-type]
    previous = seal.current()
    try:
        if refused_start:
            with pytest.raises(seal.BusKeyError, match="TASKYARD_BUS_KEYS"):
                seal.configure(settings)
            with pytest.raises(SystemExit):
                seal.configure_service(settings)
        else:
            seal.configure(settings)
    finally:
        seal.install(previous)


def test_refusals_are_logged_rate_limited_without_content(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock(0.0)
    s = seal.Seal(seal.Keyring.parse(KEY_A), refusals=seal.Refusals(clock=clock))
    forged = b"SECRET-PAYLOAD" + b"\x00" * 80
    with caplog.at_level(logging.WARNING, logger="taskyard.core.seal"):
        for _ in range(3):
            s.open(forged, None, "ipc:///store.sock")
        clock.now += seal.LOG_INTERVAL_SECONDS
        s.open(forged, None, "ipc:///store.sock")
    said = [r.getMessage() for r in caplog.records]
    assert not any("SECRET" in line for line in said), said
    # (Besides the one line about a peer without a key: seal_refusals.)
    lines = [line for line in said if line.startswith("refused internal message")]
    assert len(lines) == 2, said
    assert "unsigned=1" in lines[0] and "unsigned=3" in lines[1], lines
    assert all("ipc:///store.sock" in line for line in lines)
    assert s.refusals.total == 4


# --- sealed sockets ----------------------------------------------------------------


@pytest.fixture
def sealed_process() -> Iterator[seal.Seal]:
    """This process seals with KEY_A while the test runs."""
    previous = seal.current()
    s = seal.Seal(seal.Keyring.parse(KEY_A))
    seal.install(s)
    try:
        yield s
    finally:
        seal.install(previous)


def ipc(tmp_path: Path, name: str) -> str:
    return f"ipc://{tmp_path / name}.sock"


async def test_a_sealed_responder_drops_unsealed_requests(tmp_path: Path, sealed_process: seal.Seal) -> None:
    calls: list[str] = []

    async def handler(req: tasks_pb2.GetTasksRequest, env: envelope_pb2.Envelope) -> tasks_pb2.GetTasksReply:
        calls.append(req.ids[0])
        return tasks_pb2.GetTasksReply()

    address = ipc(tmp_path, "store")
    responder = rpc.Responder(address, [rpc.serve(contract.STORE_GET, handler)], max_message_bytes=1 << 20)
    serving = asyncio.create_task(responder.serve())
    forger = pynng.Req0(recv_timeout=300, dial=address)
    requester = rpc.Requester(address, max_message_bytes=1 << 20, timeout=5)
    try:
        unsealed = transport.encode(contract.STORE_GET.kind, contract.STORE_GET.request(ids=["forged"]))
        await forger.asend(unsealed)
        with pytest.raises(pynng.Timeout):
            await forger.arecv()
        await requester.call(contract.STORE_GET, tasks_pb2.GetTasksRequest(ids=["sealed"]))
        assert calls == ["sealed"]
        assert sealed_process.refusals.counts() == {"unsigned": 1}
    finally:
        forger.close()
        requester.close()
        responder.close()
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)


async def test_sealed_pub_sub_filters_topics_and_drops_forgeries(
    tmp_path: Path, sealed_process: seal.Seal
) -> None:
    address = ipc(tmp_path, "events")
    pub = transport.open_socket(pynng.Pub0, max_message_bytes=1 << 20, listen=address)
    connected = asyncio.Event()
    loop = asyncio.get_running_loop()
    pub.add_post_pipe_connect_cb(lambda _p: loop.call_soon_threadsafe(connected.set))
    sub = transport.open_socket(pynng.Sub0, max_message_bytes=1 << 20, dial=address)
    sub.subscribe(TOPIC)
    inbox = transport.Inbox(sub)
    try:
        await asyncio.wait_for(connected.wait(), 5)
        # Unsealed sends on the same pipe (pynng's own send), so the order is kept:
        # the one under another topic is filtered in C and never reaches the seal.
        pynng.Pub0.send(pub, b"other-topic:unsealed")
        pynng.Pub0.send(pub, TOPIC + b"forged")
        pub.send(TOPIC + b"dispatch")
        assert await asyncio.wait_for(inbox.recv(), 5) == TOPIC + b"dispatch"
        assert sealed_process.refusals.counts() == {"unsigned": 1}
    finally:
        inbox.close()
        pub.close()


# --- a key that differs from the suite's ---------------------------------------------


def _mismatch_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "the suite refuses" in r.getMessage()]


@pytest.mark.parametrize(
    ("own", "suite_key", "reason", "why"),
    [
        (KEY_A, KEY_B, "unknown_key", "the suite signs with key id 'b', this pool holds 'a'"),
        (KEY_A, KEY_A_OTHER_SECRET, "bad_mac", "same key id 'a', another secret"),
        ("", KEY_A, "sealed", "the suite seals its internal bus (key id 'a') and this pool has no bus key"),
    ],
)
def test_a_pool_refused_for_its_key_says_so_in_one_line(
    caplog: pytest.LogCaptureFixture, own: str, suite_key: str, reason: str, why: str
) -> None:
    clock = Clock()
    pool = seal.Seal(seal.Keyring.parse(own), clock=clock, owner="pool")
    suite = make(suite_key, clock)
    with caplog.at_level(logging.WARNING, logger="taskyard.core.seal"):
        for n in range(3):  # e.g. the scheduler's surveys
            assert pool.open(suite.seal(TOPIC + b"survey %d" % n), seal.ReplayGuard()) is None
    assert refused(pool) == {reason: 3}
    lines = _mismatch_lines(caplog)
    assert len(lines) == 1, lines
    assert lines[0].startswith("the suite refuses this pool's messages: "), lines
    assert why in lines[0] and "TASKYARD_BUS_KEYS" in lines[0] and ".taskyard/bus.keys" in lines[0]
    assert "survey" not in lines[0]  # never the message's content


def test_no_line_once_the_suite_was_heard(caplog: pytest.LogCaptureFixture) -> None:
    # A verified message says the keys agree: a forged one later is only counted.
    clock = Clock()
    pool = seal.Seal(seal.Keyring.parse(KEY_A), clock=clock, owner="pool")
    with caplog.at_level(logging.WARNING, logger="taskyard.core.seal"):
        assert pool.open(make(KEY_A, clock).seal(b"hello"), None) == b"hello"
        assert pool.open(make(KEY_B, clock).seal(b"forged"), None) is None
    assert _mismatch_lines(caplog) == []
    assert refused(pool) == {"unknown_key": 1}


def test_an_unsealed_process_takes_plain_messages_as_they_are(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    unsealed = seal.Seal(seal.Keyring(), clock=clock)
    # A protobuf ending like a trailer's tail (version 1 after a short printable "key id")
    # but without a send time near now is not taken for a sealed message.
    plain = envelope_pb2.Envelope(message_id="x" * 60).SerializeToString()
    looks_like = plain[:-2] + b"\x00" * 40 + b"abc\x03\x01" + b"\x00" * 32
    with caplog.at_level(logging.WARNING, logger="taskyard.core.seal"):
        assert unsealed.open(looks_like, None) == looks_like
        assert unsealed.open(plain, None) == plain
    assert not caplog.records and unsealed.refusals.total == 0
    assert seal.looks_sealed(make(KEY_A, clock).seal(b"x"), int(clock.now * 1000), 30_000)
    assert not seal.looks_sealed(make(KEY_A, clock).seal(b"x"), int(clock.now * 1000) + 31_000, 30_000)
