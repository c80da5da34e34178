"""The bus keys a process holds: ``[role/]kid:base64secret`` entries, parsed and checked.

The first key signs and every key verifies (core.seal); a key may be bound to a role
(core.roles), and a service signs with the first key of its own role
(``Keyring.signing_as``). A key bound to no role may send anything (``role_warnings``
says so at a service's start). docs/security.md, "Keys" and "Keys per role".
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import secrets
from collections.abc import Callable
from pathlib import Path

from taskyard.core import roles as roles_mod

# Key ids are short ASCII names: they travel in every message.
MAX_KID_BYTES = 32
# The smallest key accepted: HMAC-SHA256's block of strength.
MIN_KEY_BYTES = 16


class BusKeyError(ValueError):
    """The bus key configuration is unusable (or missing where it is required)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Keyring:
    """Keys by id, in order: the first one signs, all of them verify. ``roles``
    binds key ids to roles (core.roles); a key id not in it is bound to none."""

    keys: tuple[tuple[str, bytes], ...] = ()
    roles: tuple[tuple[str, str], ...] = ()

    def __repr__(self) -> str:  # never show key material
        return f"Keyring(kids={[kid for kid, _ in self.keys]}, roles={dict(self.roles)})"

    @property
    def signer(self) -> str:
        return self.keys[0][0] if self.keys else ""

    def role_of(self, kid: str) -> str:
        """The role ``kid`` is bound to ("" for none)."""
        return dict(self.roles).get(kid, "")

    @property
    def unbound(self) -> list[str]:
        """The key ids bound to no role (each may send anything)."""
        bound = dict(self.roles)
        return [kid for kid, _ in self.keys if kid not in bound]

    def signing_as(self, role: str, *, source: str = "TASKYARD_BUS_KEYS") -> Keyring:
        """This keyring with the key ``role`` signs with first: its first key bound to
        ``role``, else (keys written before roles) its first key bound to none. A
        keyring that binds keys to roles but none to ``role`` or to no role cannot sign
        for it. Unchanged without keys or ``role``."""
        if not self.keys or not role:
            return self
        bound = dict(self.roles)
        own = [kid for kid, _ in self.keys if bound.get(kid) == role] or self.unbound
        if not own:
            raise BusKeyError(
                f"{source}: no key for role {role!r} (its keys are bound to "
                f"{', '.join(sorted(set(bound.values())))}): add a '{role}/kid:base64secret' key, "
                "see docs/security.md"
            )
        first = next(pair for pair in self.keys if pair[0] == own[0])
        return dataclasses.replace(self, keys=(first, *(pair for pair in self.keys if pair is not first)))

    def only(self, kept: Callable[[str], bool]) -> Keyring:
        """The keys whose role ``kept`` accepts ("" for a key bound to none), in order."""
        bound = dict(self.roles)
        keys = tuple(pair for pair in self.keys if kept(bound.get(pair[0], "")))
        ids = {kid for kid, _ in keys}
        return Keyring(keys=keys, roles=tuple(pair for pair in self.roles if pair[0] in ids))

    def spec(self) -> str:
        """This keyring as a ``TASKYARD_BUS_KEYS`` value (``parse`` reads it back)."""
        bound = dict(self.roles)
        return ",".join(
            f"{bound[kid] + '/' if kid in bound else ''}{kid}:{base64.b64encode(key).decode()}"
            for kid, key in self.keys
        )

    @classmethod
    def parse(cls, spec: str, *, source: str = "TASKYARD_BUS_KEYS") -> Keyring:
        """``kid1:base64secret,kid2:base64secret`` (commas or new lines between keys;
        blank lines and ``#`` comments ignored, for a keys file). A key may name its
        role before its id: ``worker-pool/pool-1:base64secret`` (core.roles.ROLES)."""
        keys: list[tuple[str, bytes]] = []
        bound: list[tuple[str, str]] = []
        seen: set[str] = set()
        for n, item in enumerate(spec.replace("\n", ",").split(","), 1):
            item = item.strip()
            if not item or item.startswith("#"):
                continue
            kid, sep, secret = item.partition(":")
            role, slash, kid = kid.strip().rpartition("/")
            kid, role = kid.strip(), role.strip()
            if not sep or not kid:
                raise BusKeyError(f"{source}: key {n} must be '[role/]kid:base64secret'")
            if slash and role not in roles_mod.ROLES:
                raise BusKeyError(
                    f"{source}: key {kid!r} names the role {role!r}; a role is one of "
                    f"{', '.join(roles_mod.ROLES)} (and a key id has no '/')"
                )
            if len(kid.encode()) > MAX_KID_BYTES or not kid.isascii() or not kid.isprintable():
                raise BusKeyError(
                    f"{source}: key id {kid!r} must be printable ASCII, at most {MAX_KID_BYTES} bytes"
                )
            if kid in seen:
                raise BusKeyError(f"{source}: key id {kid!r} appears twice")
            try:
                key = base64.b64decode(secret.strip(), validate=True)
            except (binascii.Error, ValueError) as exc:
                # The secret itself is never echoed.
                raise BusKeyError(f"{source}: the secret of key {kid!r} is not valid base64") from exc
            if len(key) < MIN_KEY_BYTES:
                raise BusKeyError(
                    f"{source}: the secret of key {kid!r} must be at least {MIN_KEY_BYTES} bytes"
                )
            seen.add(kid)
            keys.append((kid, key))
            if slash:
                bound.append((kid, role))
        return cls(keys=tuple(keys), roles=tuple(bound))

    @classmethod
    def load(cls, *, keys: str, keys_file: str) -> Keyring:
        """From the inline list or, when that is empty, from the keys file."""
        if keys:
            return cls.parse(keys)
        if keys_file:
            try:
                text = Path(keys_file).read_text()
            except OSError as exc:
                raise BusKeyError(f"TASKYARD_BUS_KEYS_FILE: cannot read {keys_file}: {exc.strerror}") from exc
            return cls.parse(text, source=keys_file)
        return cls()


def generate_keys(kid: str = "dev", *, role: str = "") -> str:
    """A fresh one-key ``TASKYARD_BUS_KEYS`` value (``taskyard dev``, tests), bound to
    ``role`` when one is given."""
    if role and role not in roles_mod.ROLES:
        raise BusKeyError(f"no role {role!r}: one of {', '.join(roles_mod.ROLES)}")
    bound = f"{role}/" if role else ""
    return f"{bound}{kid}:{base64.b64encode(secrets.token_bytes(32)).decode()}"


def generate_role_keys(prefix: str = "dev") -> str:
    """A fresh ``TASKYARD_BUS_KEYS`` value with one key per role, ``<prefix>-<role>``
    each (``taskyard dev``, ``taskyard keys``, tests)."""
    return ",".join(generate_keys(f"{prefix}-{role}", role=role) for role in roles_mod.ROLES)


def role_warnings(keyring: Keyring) -> list[str]:
    """What a service says at its start about keys bound to no role: each may send
    anything on the bus (docs/security.md, "Keys per role")."""
    if not keyring.keys:
        return []
    if not keyring.roles:
        return [
            "the bus keys are bound to no role: every process holding them may send anything "
            "(insert and lease tasks included); give each service its own key, "
            "'role/kid:base64secret' (docs/security.md, \"Keys per role\")"
        ]
    return [
        f"bus key {kid!r} is bound to no role: messages signed with it may send anything; "
        'remove it once every service signs with its own role\'s key (docs/security.md, "Keys per role")'
        for kid in keyring.unbound
    ]
