"""The seal on every internal (NNG) message: an HMAC-SHA256 trailer with a key id.

A sealed message is the original bytes followed by a trailer::

    clear | sent_at_ms (8, big-endian) | nonce (16) | key id | key id length (1) | version (1) | mac (32)

``mac`` is HMAC-SHA256 under the key named by the key id, over everything before
it. The trailer goes at the end so an NNG SUB topic at the front stays in clear
(subscribers filter on it in C) while the MAC still covers it, and so a receiver
needs no framing knowledge of the sender's topic. The nonce is a per-process random
prefix and a counter: unique without a system call per message.

A receiver refuses (drops and counts) a message that is unsigned, names a key it
does not hold, fails its MAC (tampered, or signed with another key under the same
id), was sent outside the clock window, or was already seen by the same socket
(``ReplayGuard``). That guard is one socket's memory; a receiver whose requests
change state keeps what outlives it (a request's id in the database, so another
instance or a restart refuses it too: ``Replayed``). The first key of the keyring
signs; every key verifies, which is what lets keys rotate without a flag day
(docs/security.md, "The internal bus").

A key may be bound to a role (``role/kid:secret``, core.roles): a service signs with
the first key of its own role, and a receiver knows the role of what it verified from
its own keyring, by the key id, so a sender cannot claim another role. What each role
may send is the contract's table (``contract.SENDERS``), enforced by the receiving
gate (core.gate). A reply is sealed under the key its request came with (the
requester holds it), and what goes to worker pools alone under their own role's key
(``for_audience``), so a pool holds no other role's key (``contract.KEYS_HELD``).
A key bound to no role (every key, in a keyring written before roles) may send
anything: a service warns about each one at its start.

With no key configured the seal is absent: messages go out as they are and are not
checked. That is only allowed when every listener is on loopback (``require_safe``).

A process whose key differs from its peers' (or that has none while they seal) is
refused by all of them, and its requests only time out. It learns why from what it
receives anyway (the scheduler's surveys reach every pool that dials it): sealed
messages it cannot verify, while it has verified none. It then says so in one line
(``Seal.owner`` names it). A peer never answers a refused message, so a process
without the key learns nothing from the bus it could not read in the trailers it
already receives.
"""
# Length: the trailer's layout is shared by the keyring, the checks, the reading of a
# peer's seal without a key and the process's seal; split, each would restate it.

from __future__ import annotations

import collections
import hashlib
import hmac
import itertools
import logging
import os
import secrets
import struct
import threading
import time
from collections.abc import Callable, Mapping
from typing import Protocol

from taskyard.core import roles as roles_mod
from taskyard.core import seal_refusals
from taskyard.core.addresses import is_loopback
from taskyard.core.keyring import MAX_KID_BYTES as MAX_KID_BYTES
from taskyard.core.keyring import MIN_KEY_BYTES as MIN_KEY_BYTES
from taskyard.core.keyring import BusKeyError as BusKeyError
from taskyard.core.keyring import Keyring as Keyring
from taskyard.core.keyring import generate_keys as generate_keys
from taskyard.core.keyring import generate_role_keys as generate_role_keys
from taskyard.core.keyring import role_warnings as role_warnings

log = logging.getLogger(__name__)

VERSION = 1
MAC_BYTES = 32
NONCE_BYTES = 16
STAMP_BYTES = 8
# Trailer bytes besides the key id.
FIXED_TRAILER_BYTES = STAMP_BYTES + NONCE_BYTES + 2 + MAC_BYTES

# Nonces a receiving socket remembers; past it the oldest are forgotten and the
# socket refuses anything sent at or before the newest forgotten one (see ReplayGuard).
REPLAY_CACHE_ENTRIES = 1 << 17
# Refusals are logged at most this often per process (the first one at once).
LOG_INTERVAL_SECONDS = 10.0

# "sealed": a sealed message reached a process that has no key to check it.
REASONS = ("unsigned", "unknown_key", "bad_mac", "stale", "replayed", "sealed")
# Refusals that say the sender seals differently from this process (seal_refusals).
KEY_MISMATCH = seal_refusals.KEY_MISMATCH

_STAMP = struct.Struct(">Q")


class Replayed(Exception):
    """A request that was carried out already, found so after the seal let it through:
    its message id is recorded by a receiver that outlives one socket's replay guard
    (the result-store's database, ``result_store/bus_requests.py``). A responder
    counts it as ``replayed`` and answers it with ``reply``, the payload of the reply
    the request got (a requester whose reply was lost sends it again); without one
    (none kept), it is not answered."""

    def __init__(self, kind: int, *, reply: bytes | None = None) -> None:
        super().__init__(f"a request of kind {kind} was carried out already")
        self.kind = kind
        self.reply = reply


class Refusals:
    """A process's refused messages by reason, and their rate-limited log line."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._counts: collections.Counter[str] = collections.Counter()
        self._unlogged: collections.Counter[str] = collections.Counter()
        self._logged_at: float | None = None

    def add(self, reason: str, where: str) -> None:
        with self._lock:
            self._counts[reason] += 1
            self._unlogged[reason] += 1
            now = self._clock()
            if self._logged_at is not None and now - self._logged_at < LOG_INTERVAL_SECONDS:
                return
            self._logged_at = now
            summary = ", ".join(f"{r}={c}" for r, c in sorted(self._unlogged.items()))
            self._unlogged.clear()
        # The reason and the socket only: never the message, which may carry secrets.
        log.warning("refused internal message(s) on %s: %s", where or "a socket", summary)

    def counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self._counts.values())


class ReplayGuard:
    """The nonces one receiving socket has accepted within the window.

    Bounded: past ``limit`` entries the oldest accepted are forgotten, and the
    newest forgotten send time becomes a floor; anything sent at or before it is
    refused as a possible replay. So memory stays bounded and no replay gets
    through, at the price of refusing a sender whose clock lags more than the
    time this socket takes to accept ``limit`` messages."""

    def __init__(self, *, limit: int = REPLAY_CACHE_ENTRIES) -> None:
        self._limit = limit
        self._seen: dict[bytes, int] = {}
        self._floor_ms = -1
        self._lock = threading.Lock()

    def admit(self, nonce: bytes, sent_at_ms: int, oldest_ms: int) -> bool:
        """Record ``nonce``; False when it was seen or is not newer than the floor."""
        with self._lock:
            if sent_at_ms <= self._floor_ms or nonce in self._seen:
                return False
            seen = self._seen
            # Insertion order is arrival order, close to send order: expire from
            # the front what the window refuses anyway.
            while seen:
                first = next(iter(seen))
                if seen[first] >= oldest_ms and len(seen) < self._limit:
                    break
                stamp = seen.pop(first)
                if stamp >= oldest_ms:  # forgotten early: it sets the floor
                    self._floor_ms = max(self._floor_ms, stamp)
            seen[nonce] = sent_at_ms
            return True


class Seal:
    """Signs outgoing and verifies incoming messages under one keyring.

    ``seal`` and ``open`` are the hot path: HMAC objects are keyed once and copied
    per message, and the message body is fed to the MAC without being copied."""

    def __init__(
        self,
        keyring: Keyring,
        *,
        window: float = 30.0,
        clock: Callable[[], float] = time.time,
        refusals: Refusals | None = None,
        owner: str = "process",
        role: str = "",
    ) -> None:
        self.keyring = keyring
        # What this process is, for the line about a key that differs from the suite's.
        self.owner = owner
        # The role this process signs as ("" for a tool or a test: its keyring's first key).
        self.role = role
        # Until a message is verified (or, unsealed, taken), sealed ones this process
        # cannot verify mean the suite refuses it too.
        self._accepted = False
        self._mismatch_said = False
        self.window_ms = int(window * 1000)
        self._clock = clock
        self.refusals = refusals if refusals is not None else Refusals()
        self._macs: dict[bytes, hmac.HMAC] = {
            kid.encode(): hmac.new(key, digestmod=hashlib.sha256) for kid, key in keyring.keys
        }
        # The role of each key id: what a verified message's sender is ("" for none).
        self._roles: dict[bytes, str] = {kid.encode(): role for kid, role in keyring.roles}
        # Whether senders' roles are known, so the contract's table is enforced.
        self.roled = bool(keyring.roles)
        signer = keyring.signer.encode()
        self._signer_mac = self._macs.get(signer)
        self._kid_tail = signer + bytes((len(signer), VERSION))
        self._kid_tails = {kid: kid + bytes((len(kid), VERSION)) for kid in self._macs}
        self._nonce_prefix = secrets.token_bytes(NONCE_BYTES - 8)
        self._sequence = itertools.count()

    @property
    def enabled(self) -> bool:
        return self._signer_mac is not None

    def for_audience(self, role: str) -> Seal:
        """A seal that signs under ``role``'s first key, for a socket whose peers are
        all of that role (a store's stream to the pools, a scheduler's dispatches and
        surveys): they then need no key but their own. It verifies as this one does,
        and counts its refusals with it. This seal itself when its keyring binds no key
        to ``role`` (keys without roles, or a keyring that cannot reach that role)."""
        if not self.roled or role not in {bound for _, bound in self.keyring.roles}:
            return self
        variant = Seal(
            self.keyring.signing_as(role),
            window=self.window_ms / 1000,
            clock=self._clock,
            refusals=self.refusals,
            owner=self.owner,
            role=self.role,
        )
        return variant

    def seal(self, data: bytes, kid: bytes = b"") -> bytes:
        """``data`` (topic included) with its trailer, under the signing key, or under
        ``kid`` when this process holds it (a reply, under its request's key)."""
        base = self._signer_mac
        if base is None:
            return data
        tail = self._kid_tail
        if kid and kid in self._macs:
            base, tail = self._macs[kid], self._kid_tails[kid]
        head = (
            _STAMP.pack(int(self._clock() * 1000))
            + self._nonce_prefix
            + _STAMP.pack(next(self._sequence))
            + tail
        )
        mac = base.copy()
        mac.update(data)
        mac.update(head)
        return b"".join((data, head, mac.digest()))

    def open(self, raw: bytes, guard: ReplayGuard | None, where: str = "") -> bytes | None:
        """The clear part of a sealed message, or None (refused and counted). ``raw``
        may be a memoryview (core.gate hashes NNG's buffer in place); the clear part is
        then a memoryview of it too."""
        if self._signer_mac is None:
            if not self._accepted:
                if looks_sealed(raw, int(self._clock() * 1000), self.window_ms):
                    self._refuse("sealed", raw, where)
                    return None
                self._accepted = True
            return raw
        reason = self._check(raw, guard)
        if reason:
            self._refuse(reason, raw, where)
            return None
        self._accepted = True
        kid_len = raw[-MAC_BYTES - 2]
        return raw[: -(FIXED_TRAILER_BYTES + kid_len)]

    def kid_of(self, raw: bytes | memoryview) -> bytes:
        """The key id in ``raw``'s trailer (b"" when it has none): read, not verified,
        so only for a message ``open`` let through."""
        if self._signer_mac is None or len(raw) < FIXED_TRAILER_BYTES + 1:
            return b""
        kid_len = raw[-MAC_BYTES - 2]
        if not 0 < kid_len <= MAX_KID_BYTES or len(raw) < FIXED_TRAILER_BYTES + kid_len:
            return b""
        return bytes(raw[-MAC_BYTES - 2 - kid_len : -MAC_BYTES - 2])

    def role_of(self, raw: bytes | memoryview) -> str:
        """The role of the key that sealed ``raw`` ("" for a key bound to none, or no
        key): only for a message ``open`` let through."""
        return self._roles.get(self.kid_of(raw), "") if self.roled else ""

    def screen(self, raw: bytes | memoryview) -> str:
        """The refusal reason the trailer alone gives (layout, a key id this process
        holds, a send time within the window), or "": decided before any MAC, so junk
        costs no hashing (core.gate). "" without a key (``open`` decides then)."""
        if self._signer_mac is None:
            return ""
        reason = self._screen(raw)
        if reason in KEY_MISMATCH and not self._accepted and not self._mismatch_said:
            self._say_mismatch(reason, bytes(raw[-(FIXED_TRAILER_BYTES + MAX_KID_BYTES) :]))
        return reason

    def _screen(self, raw: bytes | memoryview) -> str:
        size = len(raw)
        if size < FIXED_TRAILER_BYTES + 1 or raw[-MAC_BYTES - 1] != VERSION:
            return "unsigned"
        kid_len = raw[-MAC_BYTES - 2]
        if not 0 < kid_len <= MAX_KID_BYTES or size < FIXED_TRAILER_BYTES + kid_len:
            return "unsigned"
        if bytes(raw[-MAC_BYTES - 2 - kid_len : -MAC_BYTES - 2]) not in self._macs:
            return "unknown_key"
        (sent_at_ms,) = _STAMP.unpack_from(raw, size - FIXED_TRAILER_BYTES - kid_len)
        if abs(int(self._clock() * 1000) - sent_at_ms) > self.window_ms:
            return "stale"
        return ""

    def _refuse(self, reason: str, raw: bytes, where: str) -> None:
        self.refusals.add(reason, where)
        if reason in KEY_MISMATCH and not self._accepted and not self._mismatch_said:
            self._say_mismatch(reason, raw)

    def _say_mismatch(self, reason: str, raw: bytes) -> None:
        self._mismatch_said = True
        log.error("%s", self.mismatch_line(reason, _trailer_kid(raw)))

    def mismatch_line(self, reason: str, peer_kid: str) -> str:
        """The one line about refused keys (seal_refusals says who it blames)."""
        held = [kid for kid, _ in self.keyring.keys]
        return seal_refusals.line(owner=self.owner, reason=reason, peer_kid=peer_kid, held=held)

    def _check(self, raw: bytes, guard: ReplayGuard | None) -> str:
        size = len(raw)
        if size < FIXED_TRAILER_BYTES + 1 or raw[-MAC_BYTES - 1] != VERSION:
            return "unsigned"
        kid_len = raw[-MAC_BYTES - 2]
        trailer = FIXED_TRAILER_BYTES + kid_len
        if not 0 < kid_len <= MAX_KID_BYTES or size < trailer:
            return "unsigned"
        base = self._macs.get(bytes(raw[-MAC_BYTES - 2 - kid_len : -MAC_BYTES - 2]))
        if base is None:
            return "unknown_key"
        mac = base.copy()
        mac.update(memoryview(raw)[:-MAC_BYTES])  # the body is hashed in place, not copied
        if not hmac.compare_digest(mac.digest(), raw[-MAC_BYTES:]):
            return "bad_mac"
        stamp_at = size - trailer
        (sent_at_ms,) = _STAMP.unpack_from(raw, stamp_at)
        now_ms = int(self._clock() * 1000)
        if abs(now_ms - sent_at_ms) > self.window_ms:
            return "stale"
        if guard is not None:
            nonce = bytes(raw[stamp_at + STAMP_BYTES : stamp_at + STAMP_BYTES + NONCE_BYTES])
            if not guard.admit(nonce, sent_at_ms, now_ms - self.window_ms):
                return "replayed"
        return ""


def looks_sealed(raw: bytes, now_ms: int, window_ms: int) -> bool:
    """Whether ``raw`` ends with a seal's trailer sent within the window of ``now_ms``
    (its MAC unchecked): what a process without a key tells a peer's sealed message by.
    A plain protobuf message almost never ends with a version byte, a printable key id
    and its length behind a send time within seconds of now."""
    size = len(raw)
    if size < FIXED_TRAILER_BYTES + 1 or raw[-MAC_BYTES - 1] != VERSION:
        return False
    kid_len = raw[-MAC_BYTES - 2]
    if not 0 < kid_len <= MAX_KID_BYTES or size < FIXED_TRAILER_BYTES + kid_len:
        return False
    kid = raw[-MAC_BYTES - 2 - kid_len : -MAC_BYTES - 2]
    if not all(0x20 <= byte < 0x7F for byte in kid):
        return False
    sent_at_ms: int = _STAMP.unpack_from(raw, size - FIXED_TRAILER_BYTES - kid_len)[0]
    return abs(now_ms - sent_at_ms) <= window_ms


def _trailer_kid(raw: bytes) -> str:
    """The key id a sealed message names (printable ASCII, or "?")."""
    if len(raw) < FIXED_TRAILER_BYTES + 1:
        return "?"
    kid_len = raw[-MAC_BYTES - 2]
    kid = bytes(raw[-MAC_BYTES - 2 - kid_len : -MAC_BYTES - 2]) if 0 < kid_len <= MAX_KID_BYTES else b""
    return kid.decode("ascii") if kid and all(0x20 <= b < 0x7F for b in kid) else "?"


# --- the process's seal --------------------------------------------------------

_current: Seal | None = None
_current_lock = threading.Lock()


def install(seal: Seal) -> None:
    """Make ``seal`` the one every socket of this process uses from now on."""
    global _current
    with _current_lock:
        _current = seal


def current() -> Seal:
    """The installed seal; without one, the seal the environment configures
    (``TASKYARD_BUS_KEYS`` ...), so tools and in-process tests need no set-up."""
    global _current
    seal = _current
    if seal is not None:
        return seal
    with _current_lock:
        if _current is None:
            _current = from_env(os.environ)
        return _current


def from_env(env: Mapping[str, str]) -> Seal:
    from taskyard.core.config import BusSettings

    return for_settings(BusSettings.from_env(env))


class _BusSettings(Protocol):
    @property
    def bus_keys(self) -> str: ...
    @property
    def bus_keys_file(self) -> str: ...
    @property
    def bus_replay_window(self) -> float: ...


def for_settings(settings: _BusSettings, *, owner: str = "process", role: str = "") -> Seal:
    """The seal ``settings`` configure for a process of ``role`` (signing with that
    role's key; "" for a tool or a test: the keyring's first key)."""
    if role and role not in roles_mod.ROLES:
        raise ValueError(f"no bus role {role!r}: one of {', '.join(roles_mod.ROLES)}")
    source = "TASKYARD_BUS_KEYS" if settings.bus_keys else settings.bus_keys_file or "TASKYARD_BUS_KEYS"
    keyring = Keyring.load(keys=settings.bus_keys, keys_file=settings.bus_keys_file)
    return Seal(
        keyring.signing_as(role, source=source),
        window=settings.bus_replay_window,
        refusals=_current.refusals if _current is not None else None,
        owner=owner,
        role=role,
    )


class _BindSettings(_BusSettings, Protocol):
    @property
    def transport(self) -> str: ...
    @property
    def effective_bind_host(self) -> str: ...


def require_safe(settings: _BindSettings, seal: Seal) -> None:
    """Refuse an unsealed bus that listens beyond this machine's loopback."""
    if seal.enabled or settings.transport == "ipc" or is_loopback(settings.effective_bind_host):
        return
    raise BusKeyError(
        f"NNG would listen on {settings.effective_bind_host} (TASKYARD_BIND_HOST/TASKYARD_HOST) "
        "without bus keys: anyone who reaches those ports could lease and report tasks. "
        "Set TASKYARD_BUS_KEYS or TASKYARD_BUS_KEYS_FILE (see docs/security.md), "
        "or bind to 127.0.0.1."
    )


def configure(settings: _BindSettings, *, owner: str = "process", role: str = "") -> Seal:
    """A service's start: the seal its settings configure, checked and installed;
    ``owner`` names the process in the line about a refused key ("pool"), ``role``
    is what it signs as (core.roles)."""
    seal = for_settings(settings, owner=owner, role=role)
    require_safe(settings, seal)
    install(seal)
    if seal.enabled:
        signer_role = seal.keyring.role_of(seal.keyring.signer)
        log.info(
            "internal bus sealed (signing key %s%s, %d key(s) verify)",
            seal.keyring.signer,
            f" of role {signer_role}" if signer_role else "",
            len(seal.keyring.keys),
        )
        if role:
            for line in role_warnings(seal.keyring):
                log.warning("%s", line)
    return seal


def configure_service(settings: _BindSettings, *, owner: str = "process", role: str = "") -> Seal:
    """``configure`` for a service's entry point: a refusal ends the process with its reason."""
    try:
        return configure(settings, owner=owner, role=role)
    except BusKeyError as exc:
        raise SystemExit(f"taskyard: {exc}") from None
