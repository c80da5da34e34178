"""Bus keys bound to roles: the keyring's ``role/kid:secret`` entries, the contract's
table of who may send what, and its enforcement by a responder's gate over real NNG
sockets (the suite's processes: tests/integration/test_bus_roles_cluster.py)."""

from __future__ import annotations

import asyncio
import base64
import logging
import os
from collections.abc import Iterator
from typing import Any

import pynng
import pytest
from google.protobuf.message import Message

from taskyard.bus.v1 import counters_pb2, envelope_pb2, leases_pb2, tasks_pb2
from taskyard.core import contract, errors, gate, roles, rpc, seal, transport

K = envelope_pb2


def _secret() -> str:
    return base64.b64encode(os.urandom(32)).decode()


def test_a_key_names_its_role_before_its_id() -> None:
    spec = f"worker-pool/p1:{_secret()},\n# comment\nscheduler/s1:{_secret()},old:{_secret()}"
    ring = seal.Keyring.parse(spec)
    assert [kid for kid, _ in ring.keys] == ["p1", "s1", "old"]
    assert ring.role_of("p1") == roles.WORKER_POOL
    assert ring.role_of("s1") == roles.SCHEDULER
    assert ring.role_of("old") == ""
    assert ring.unbound == ["old"]
    # Written back, it reads the same (taskyard dev hands services their keyrings so).
    assert seal.Keyring.parse(ring.spec()) == ring
    shown = repr(ring)
    assert "'p1': 'worker-pool'" in shown  # ids and roles, never the secrets
    assert not any(base64.b64encode(key).decode()[:12] in shown for _, key in ring.keys)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "pool/p1:{s}",
            "names the role 'pool'; a role is one of gateway, scheduler, result-store, worker-pool",
        ),
        ("/p1:{s}", "names the role ''"),
        ("worker-pool/:{s}", "must be '[role/]kid:base64secret'"),
    ],
)
def test_a_role_that_is_not_one_is_refused(spec: str, message: str) -> None:
    with pytest.raises(seal.BusKeyError, match="TASKYARD_BUS_KEYS: ") as caught:
        seal.Keyring.parse(spec.format(s=_secret()))
    assert message in str(caught.value)


def test_a_service_signs_with_its_own_roles_first_key() -> None:
    spec = f"gateway/g1:{_secret()},worker-pool/p2:{_secret()},worker-pool/p1:{_secret()}"
    ring = seal.Keyring.parse(spec)
    assert ring.signing_as(roles.WORKER_POOL).signer == "p2"
    assert ring.signing_as(roles.GATEWAY).signer == "g1"
    # Every key still verifies, in the order given otherwise.
    assert [kid for kid, _ in ring.signing_as(roles.WORKER_POOL).keys] == ["p2", "g1", "p1"]
    assert ring.signing_as("").signer == "g1"  # a tool or a test: the first key
    with pytest.raises(seal.BusKeyError, match="no key for role 'scheduler'"):
        ring.signing_as(roles.SCHEDULER)


def test_a_key_bound_to_no_role_signs_for_a_role_that_has_none_yet() -> None:
    # Half way through moving to keys per role: the old shared key still signs for a
    # service whose own key is not given yet.
    ring = seal.Keyring.parse(f"gateway/g1:{_secret()},shared:{_secret()}")
    assert ring.signing_as(roles.SCHEDULER).signer == "shared"
    assert ring.signing_as(roles.GATEWAY).signer == "g1"


def test_keys_without_roles_are_said_at_start() -> None:
    assert seal.role_warnings(seal.Keyring()) == []
    [line] = seal.role_warnings(seal.Keyring.parse(f"k1:{_secret()},k2:{_secret()}"))
    assert "bound to no role: every process holding them may send anything" in line
    [line] = seal.role_warnings(seal.Keyring.parse(f"gateway/g1:{_secret()},k1:{_secret()}"))
    assert line.startswith("bus key 'k1' is bound to no role")
    assert seal.role_warnings(seal.Keyring.parse(seal.generate_role_keys())) == []


def test_generated_keys_bind_one_key_to_each_role() -> None:
    ring = seal.Keyring.parse(seal.generate_role_keys("dev"))
    assert dict(ring.roles) == {f"dev-{role}": role for role in roles.ROLES}
    assert seal.Keyring.parse(seal.generate_keys("k", role=roles.SCHEDULER)).role_of("k") == roles.SCHEDULER
    with pytest.raises(seal.BusKeyError, match="no role 'admin'"):
        seal.generate_keys("k", role="admin")


def test_a_service_role_must_be_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from taskyard.core.config import Settings

    with pytest.raises(ValueError, match="no bus role 'pool'"):
        seal.for_settings(Settings(bus_keys=seal.generate_role_keys()), role="pool")


def test_the_role_of_a_verified_message_comes_from_the_receivers_keyring() -> None:
    spec = seal.generate_role_keys()
    pool = seal.Seal(seal.Keyring.parse(spec).signing_as(roles.WORKER_POOL))
    store = seal.Seal(seal.Keyring.parse(spec).signing_as(roles.RESULT_STORE))
    sealed = pool.seal(b"hello")
    assert store.open(sealed, None) == b"hello"
    assert store.role_of(sealed) == roles.WORKER_POOL
    # A reply under the request's key: the pool reads it with its own key alone.
    pool_only = seal.Seal(seal.Keyring.parse(spec).only(lambda role: role == roles.WORKER_POOL))
    reply = store.seal(b"reply", store.kid_of(sealed))
    assert pool_only.open(reply, None) == b"reply"
    assert pool_only.open(store.seal(b"reply"), None) is None  # under the store's own: unknown
    # A keyring without roles knows none.
    plain = seal.Seal(seal.Keyring.parse(f"k:{_secret()}"))
    assert not plain.roled and plain.role_of(plain.seal(b"x")) == ""


# --- the contract's table -------------------------------------------------------------


def test_a_pool_may_not_insert_lease_rescue_or_cancel() -> None:
    refused: tuple[contract.Method[Any, Any], ...] = (
        contract.STORE_INSERT,
        contract.STORE_LEASE,
        contract.STORE_RESCUE,
        contract.STORE_CANCEL,
        contract.STORE_LOAD_QUEUED,
        contract.STORE_LEADERSHIP,
        contract.STORE_QUEUE_OP,
        contract.SCHEDULE_TRIGGER,
    )
    for method in refused:
        assert not contract.may_send(roles.WORKER_POOL, method.kind), method
    for method in (contract.STORE_INSERT, contract.STORE_LEASE, contract.STORE_RESCUE):
        assert contract.may_send(roles.SCHEDULER, method.kind), method
        assert not contract.may_send(roles.GATEWAY, method.kind), method
    # What a pool does for its own attempts, and its child tasks through a scheduler.
    allowed: tuple[contract.Method[Any, Any], ...] = (
        contract.STORE_REPORT,
        contract.STORE_RENEW,
        contract.STORE_HEARTBEAT,
        contract.STORE_LOGS,
        contract.SUBMIT,
        contract.REGISTER,
    )
    for method in allowed:
        assert contract.may_send(roles.WORKER_POOL, method.kind), method


def test_every_kind_has_its_senders_and_its_receivers() -> None:
    kinds = {v for v in K.Kind.values() if v != K.KIND_UNSPECIFIED}
    assert set(contract.SENDERS) == kinds
    for kind, senders in contract.SENDERS.items():
        assert senders.by <= set(roles.ROLES) and senders.to <= set(roles.ROLES)
        method = contract.METHODS.get(kind)
        if method is not None:
            assert senders.to == {contract.SERVED_BY[method.service]}
    # Nothing a store only makes for itself comes from the wire.
    for kind in (K.KIND_GRAPH_RESOLVE, K.KIND_STORE_LOSE_POOLS):
        assert not any(contract.may_send(role, kind) for role in roles.ROLES)
    # A key bound to no role (written before roles) may send anything.
    assert contract.may_send("", contract.STORE_INSERT.kind)


def test_a_receiver_takes_from_the_table_only_what_is_sent_to_its_role() -> None:
    table = contract.senders_to(roles.RESULT_STORE, [contract.STORE_INSERT.kind, contract.SUBMIT.kind])
    assert table[contract.STORE_INSERT.kind] == {roles.SCHEDULER}
    assert table[contract.SUBMIT.kind] == frozenset()  # a lane's, not the store's


# --- enforced by a responder, over real sockets ----------------------------------------


@pytest.fixture
def installed() -> Iterator[None]:
    """Each socket takes the process's seal when it opens: the test installs one per
    role before opening that role's socket, and puts the session's back after."""
    before = seal.current()
    yield
    seal.install(before)


def _seal_of(spec: str, role: str) -> seal.Seal:
    return seal.Seal(seal.Keyring.parse(spec).signing_as(role), role=role)


async def _exchange(spec: str, address: str, *, senders_seen: list[str]) -> dict[str, object]:
    async def insert(request: tasks_pb2.InsertTasksRequest, env: K.Envelope) -> tasks_pb2.InsertTasksReply:
        senders_seen.append(rpc.sender_role())
        return tasks_pb2.InsertTasksReply()

    async def counters(request: counters_pb2.CountersRequest, env: K.Envelope) -> counters_pb2.CountersReply:
        senders_seen.append(rpc.sender_role())
        return counters_pb2.CountersReply()

    async def lease(request: leases_pb2.LeaseTasksRequest, env: K.Envelope) -> leases_pb2.LeaseTasksReply:
        senders_seen.append(rpc.sender_role())
        return leases_pb2.LeaseTasksReply()

    store_seal = _seal_of(spec, roles.RESULT_STORE)
    seal.install(store_seal)
    responder = rpc.Responder(
        address,
        [
            rpc.serve(contract.STORE_INSERT, insert),
            rpc.serve(contract.STORE_COUNTERS, counters),
            rpc.serve(contract.STORE_LEASE, lease),
        ],
        max_message_bytes=1 << 20,
        concurrency=2,
    )
    serving = asyncio.create_task(responder.serve())
    requesters: dict[str, rpc.Requester] = {}
    try:
        for role in (roles.SCHEDULER, roles.WORKER_POOL, roles.GATEWAY):
            seal.install(_seal_of(spec, role))
            requesters[role] = rpc.Requester(address, max_message_bytes=1 << 20, timeout=0.5)
        got: dict[str, object] = {}
        for role, req in requesters.items():
            calls: tuple[tuple[contract.Method[Any, Any], Message], ...] = (
                (contract.STORE_INSERT, tasks_pb2.InsertTasksRequest()),
                (contract.STORE_LEASE, leases_pb2.LeaseTasksRequest()),
                (contract.STORE_COUNTERS, counters_pb2.CountersRequest()),
            )
            for method, request in calls:
                try:
                    await req.call(method, request)
                    got[f"{role} {method.name}"] = "answered"
                except errors.TaskyardError as exc:
                    got[f"{role} {method.name}"] = "no reply" if "no reply from" in str(exc) else str(exc)
        got["refusals"] = store_seal.refusals.counts()
        return got
    finally:
        for req in requesters.values():
            req.close()
        responder.close()
        serving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await serving


def _address(tmp_path: object) -> str:
    # Short: a unix socket's path is limited to ~100 bytes.
    return f"ipc:///tmp/ty-roles-{os.getpid()}-{os.urandom(4).hex()}.sock"


@pytest.mark.usefixtures("installed")
def test_a_pools_insert_and_lease_are_refused_unanswered_and_counted(
    tmp_path: object, caplog: pytest.LogCaptureFixture
) -> None:
    spec = seal.generate_role_keys("t")
    seen: list[str] = []
    with caplog.at_level(logging.WARNING, logger="taskyard.core.gate"):
        got = asyncio.run(_exchange(spec, _address(tmp_path), senders_seen=seen))
    refused = "no reply"  # as an unauthenticated request: never answered
    assert got == {
        "scheduler InsertTasks": "answered",
        "scheduler LeaseTasks": "answered",
        "scheduler Counters": "answered",
        "worker-pool InsertTasks": refused,
        "worker-pool LeaseTasks": refused,
        "worker-pool Counters": refused,
        "gateway InsertTasks": refused,
        "gateway LeaseTasks": refused,
        "gateway Counters": "answered",
        "refusals": {gate.FORBIDDEN: 5},
    }
    # Each handler learnt who sent what reached it.
    assert seen == [roles.SCHEDULER, roles.SCHEDULER, roles.SCHEDULER, roles.GATEWAY]
    lines = [r.getMessage() for r in caplog.records if "which may not send it" in r.getMessage()]
    assert len(lines) == 5  # once per role and kind
    assert any(
        "refused KIND_STORE_INSERT" in line
        and "key 't-worker-pool' of role worker-pool" in line
        and "(scheduler may" in line
        for line in lines
    )


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        if not n:
            return bytes(out + bytes([low]))
        out.append(low | 0x80)


async def _send_forged(
    spec: str, address: str, bodies: dict[str, bytes], seen: list[str]
) -> dict[str, object]:
    """Each envelope of ``bodies`` sealed by a pool's key, to a store port serving
    inserts and reports."""

    async def insert(request: tasks_pb2.InsertTasksRequest, env: K.Envelope) -> tasks_pb2.InsertTasksReply:
        seen.append(rpc.sender_role())
        return tasks_pb2.InsertTasksReply()

    async def report(request: leases_pb2.ReportRequest, env: K.Envelope) -> leases_pb2.ReportReply:
        seen.append(f"report from {rpc.sender_role()}")
        return leases_pb2.ReportReply()

    store_seal = _seal_of(spec, roles.RESULT_STORE)
    seal.install(store_seal)
    responder = rpc.Responder(
        address,
        [rpc.serve(contract.STORE_INSERT, insert), rpc.serve(contract.STORE_REPORT, report)],
        max_message_bytes=1 << 20,
        concurrency=2,
    )
    serving = asyncio.create_task(responder.serve())
    pool = _seal_of(spec, roles.WORKER_POOL)
    got: dict[str, object] = {}
    try:
        for name, body in bodies.items():
            with pynng.Req0(dial=address, recv_timeout=500) as sock:
                await sock.asend(pool.seal(body))
                try:
                    await sock.arecv()
                    got[name] = "answered"
                except pynng.Timeout:
                    got[name] = "no reply"
        got["refusals"] = store_seal.refusals.counts()
        return got
    finally:
        responder.close()
        serving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await serving


@pytest.mark.usefixtures("installed")
def test_a_pool_cannot_pass_an_insert_off_as_a_kind_it_may_send(tmp_path: object) -> None:
    """The kind that picks the handler is the decoded envelope's: an insert whose
    kind the gate's early read of the first bytes misses, or reads as a report
    (which a pool may send), is refused all the same."""
    spec = seal.generate_role_keys("t")
    payload = tasks_pb2.InsertTasksRequest().SerializeToString()
    insert_kind = b"\x10" + _varint(K.KIND_STORE_INSERT)
    bodies = {
        "behind a long message id": transport.encode(K.KIND_STORE_INSERT, payload, message_id="x" * 200),
        "a report, then the kind again": transport.encode(K.KIND_STORE_REPORT, payload) + insert_kind,
        "after the payload": b"\x0a\x04abcd\x2a" + _varint(len(payload)) + payload + insert_kind,
    }
    for body in bodies.values():
        assert transport.decode(body).kind == K.KIND_STORE_INSERT
    seen: list[str] = []
    got = asyncio.run(_send_forged(spec, _address(tmp_path), bodies, seen))
    assert got == {**dict.fromkeys(bodies, "no reply"), "refusals": {gate.FORBIDDEN: 3}}
    assert seen == []


@pytest.mark.usefixtures("installed")
def test_keys_without_roles_let_every_key_send_anything(tmp_path: object) -> None:
    spec = f"k1:{_secret()}"
    seen: list[str] = []
    got = asyncio.run(_exchange(spec, _address(tmp_path), senders_seen=seen))
    assert {v for k, v in got.items() if k != "refusals"} == {"answered"}
    assert got["refusals"] == {}
    assert seen == [""] * 9


def test_each_role_holds_the_keys_of_the_roles_that_send_to_it() -> None:
    # Requests and streams: a reply comes under its request's key, what goes to pools
    # alone under the pools' key, and the hub's relays (announcements) too.
    for role in roles.ROLES:
        senders = {
            sender
            for kind, s in contract.SENDERS.items()
            if role in s.to
            and kind != K.KIND_ANNOUNCE
            and not (role == roles.WORKER_POOL and kind in contract.TO_POOLS_UNDER_THEIR_KEY)
            for sender in s.by
        } - {role}
        relays = {roles.WORKER_POOL} - {role}
        assert contract.KEYS_HELD[role] == senders | relays, role
    assert contract.KEYS_HELD[roles.WORKER_POOL] == frozenset()


def test_what_goes_to_pools_alone_is_sealed_under_their_key() -> None:
    spec = seal.generate_role_keys()
    scheduler = _seal_of(spec, roles.SCHEDULER)
    to_pools = scheduler.for_audience(roles.WORKER_POOL)
    pool_only = seal.Seal(seal.Keyring.parse(spec).only(lambda role: role == roles.WORKER_POOL))
    assert pool_only.open(to_pools.seal(b"dispatch"), None) == b"dispatch"
    assert pool_only.open(scheduler.seal(b"dispatch"), None) is None
    # It verifies as the scheduler's own seal does, and counts with it.
    assert to_pools.refusals is scheduler.refusals and to_pools.role == roles.SCHEDULER
    assert to_pools.open(scheduler.seal(b"x"), None) == b"x"
    # Keys without roles: the seal itself.
    plain = seal.Seal(seal.Keyring.parse(f"k:{_secret()}"))
    assert plain.for_audience(roles.WORKER_POOL) is plain


# --- the documented moves, checked on every path the bus carries -----------------------


def _paths() -> set[tuple[str, str, bool]]:
    """(sender, receiver, under the pools' key) for every message the table lets cross
    between two roles, the discovery hub's relays (a scheduler's, to everyone) included."""
    paths = {
        (sender, receiver, receiver == roles.WORKER_POOL and kind in contract.TO_POOLS_UNDER_THEIR_KEY)
        for kind, s in contract.SENDERS.items()
        if kind != K.KIND_ANNOUNCE
        for sender in s.by
        for receiver in s.to
        if sender != receiver
    }
    paths |= {(role, roles.SCHEDULER, False) for role in roles.ROLES if role != roles.SCHEDULER}
    paths |= {(roles.SCHEDULER, role, True) for role in roles.ROLES}
    return paths


def _passes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """What fails to verify while a rolling restart takes each service from its keyring
    in ``before`` to the one in ``after`` (any mix of the two), requests, replies and
    streams alike."""
    failed = []
    for sender, receiver, to_pools in _paths():
        for sender_spec in (before[sender], after[sender]):
            for receiver_spec in (before[receiver], after[receiver]):
                out = _seal_of(sender_spec, sender)
                into = _seal_of(receiver_spec, receiver)
                sealed = (out.for_audience(roles.WORKER_POOL) if to_pools else out).seal(b"m")
                if into.open(sealed, None) is None:
                    failed.append(f"{sender} -> {receiver}")
                    continue
                reply = into.seal(b"r", into.kid_of(sealed))
                if not to_pools and out.open(reply, None) is None:
                    failed.append(f"{receiver} -> {sender} (reply)")
    return failed


def _keyrings(keys: dict[str, str], bound: bool, only_held: bool) -> dict[str, str]:
    """Each service's keyring out of ``keys`` (role -> "kid:secret" entries)."""
    rings = {}
    for role in roles.ROLES:
        held = {role, *contract.KEYS_HELD[role]} if only_held else set(roles.ROLES)
        rings[role] = ",".join(
            f"{r}/{entry}" if bound else entry
            for r, entries in keys.items()
            if r in held
            for entry in entries.split(",")
        )
    return rings


def test_moving_from_a_shared_key_to_keys_per_role_refuses_nothing_on_the_way() -> None:
    shared = f"shared:{_secret()}"
    new = {role: f"{role[0]}1:{_secret()}" for role in roles.ROLES}
    step0 = dict.fromkeys(roles.ROLES, shared)
    step1 = {role: f"{shared},{','.join(new.values())}" for role in roles.ROLES}
    step2 = {role: f"{shared},{_keyrings(new, bound=True, only_held=False)[role]}" for role in roles.ROLES}
    step3 = _keyrings(new, bound=True, only_held=True)
    assert _passes(step0, step1) == []
    assert _passes(step1, step2) == []
    assert _passes(step2, step3) == []
    assert _keyrings(new, bound=True, only_held=True)[roles.WORKER_POOL].count(":") == 1
    # Binding roles before every service holds the new keys refuses.
    assert _passes(step0, step2) != []


def test_rotating_one_roles_key_refuses_nothing_on_the_way() -> None:
    keys = {role: f"{role[0]}1:{_secret()}" for role in roles.ROLES}
    p2 = f"p2:{_secret()}"
    step0 = _keyrings(keys, bound=True, only_held=True)
    step1 = _keyrings(
        {**keys, roles.WORKER_POOL: f"{keys[roles.WORKER_POOL]},{p2}"}, bound=True, only_held=True
    )
    step2 = _keyrings(
        {**keys, roles.WORKER_POOL: f"{p2},{keys[roles.WORKER_POOL]}"}, bound=True, only_held=True
    )
    step3 = _keyrings({**keys, roles.WORKER_POOL: p2}, bound=True, only_held=True)
    assert _passes(step0, step1) == []
    assert _passes(step1, step2) == []
    assert _passes(step2, step3) == []
    # Skipping the middle step refuses: what goes to pools is still under the old key.
    assert _passes(step1, step3) != []
