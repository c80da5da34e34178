"""The bus key of a ``taskyard dev`` project: written by dev, found by the commands
run from the same directory.

``taskyard dev`` runs its internal bus sealed with keys of its own, one per role
(``role/kid:secret``, docs/security.md "Keys per role"): each service it starts gets its
own keyring (``service_keys``: its role's key, which signs, and the keys of the roles
whose messages it verifies). So that another pool can join it (``taskyard serve
worker-pool``, ``taskyard queue start``), dev keeps every role's key in
``<data-dir>/bus.keys`` (mode 0600, the ``TASKYARD_BUS_KEYS`` format, a key a line), and
``taskyard serve`` / ``taskyard queue start`` run from the directory holding the
default data dir (``.taskyard``) use that file when no key is configured. A key
configured explicitly (``TASKYARD_BUS_KEYS``, ``TASKYARD_BUS_KEYS_FILE`` or the
secrets directory) always wins. Either way one line says where the key came from.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

from taskyard.cli import procs
from taskyard.core import contract, roles, seal

# taskyard dev's default --data-dir, relative to where it runs.
DEFAULT_DATA_DIR = Path(".taskyard")
KEY_FILE_NAME = "bus.keys"
KEYS_VARIABLE = "TASKYARD_BUS_KEYS"
KEYS_FILE_VARIABLE = "TASKYARD_BUS_KEYS_FILE"
OWNER_ONLY = 0o600
# A key file is a few lines; more than this is not one.
MAX_KEY_FILE = 64 * 1024


def key_file(data_dir: Path) -> Path:
    return data_dir / KEY_FILE_NAME


@dataclasses.dataclass(frozen=True, kw_only=True)
class DevKey:
    """The key dev runs with and the file that holds it."""

    keys: str
    path: Path
    created: bool
    # Why the file found there was not used ("" when there was none, or it was).
    distrusted: str = ""


def _read_trusted(path: Path) -> tuple[str | None, str]:
    """The key file's text and "", or None and why it must not be used (None and ""
    when there is none). Trusted: a regular file, not a symbolic link, owned by this
    user, readable and writable by nobody else. Checked on the opened file itself."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, ""
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, "is a symbolic link"
        return None, f"cannot be read ({exc.strerror})"
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            return None, "is not a regular file"
        if info.st_uid != os.getuid():
            return None, f"belongs to uid {info.st_uid}, not this user ({os.getuid()})"
        if stat.S_IMODE(info.st_mode) & ~OWNER_ONLY:
            return None, f"has mode {stat.S_IMODE(info.st_mode):04o}, wider than {OWNER_ONLY:04o}"
        try:
            return f.read(MAX_KEY_FILE).decode(), ""
        except (OSError, UnicodeDecodeError) as exc:
            return None, f"cannot be read ({exc})"


def _write_new(path: Path, keys: str) -> None:
    """``keys`` into ``path``, replacing whatever is there (a symbolic link itself, never
    its target): written whole under a new name in the same directory, created 0600
    and exclusively (no file or link of that name is followed), then renamed, so the
    key is never readable by others and a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{KEY_FILE_NAME}.{secrets.token_hex(8)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, OWNER_ONLY)
    try:
        try:
            os.fchmod(fd, OWNER_ONLY)  # whatever the umask did
            lines = keys.replace(",", "\n")
            head = "# taskyard dev's internal bus keys: one per role (TASKYARD_BUS_KEYS format)"
            os.write(fd, f"{head}\n{lines}\n".encode())
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def dev_key(data_dir: Path) -> DevKey:
    """The keys in ``<data_dir>/bus.keys``, made (0600, one per role) when there are no
    usable ones.

    Kept between runs, so a pool started from the project survives a restart of dev;
    delete the file for new keys. A file another user could have written or read (a
    mode wider than 0600, another owner, a symbolic link) is not used: new keys
    replace it, and ``distrusted`` says why. So does a file whose keys are bound to no
    role (written by a dev of an earlier version), or that lacks a role's key."""
    # The directory resolved, the file itself not: a link in its place is not followed.
    path = data_dir.resolve() / KEY_FILE_NAME
    text, distrusted = _read_trusted(path)
    with contextlib.suppress(seal.BusKeyError):
        keyring = seal.Keyring.parse(text, source=str(path)) if text is not None else None
        if keyring is not None and keyring.keys:
            missing = set(roles.ROLES) - {role for _, role in keyring.roles}
            if not missing:
                # As TASKYARD_BUS_KEYS (the file may hold comments), for the services' environment.
                return DevKey(keys=keyring.spec(), path=path, created=False)
            distrusted = (
                "binds its keys to no role (an earlier taskyard dev's)"
                if not keyring.roles
                else f"has no key for {', '.join(sorted(missing))}"
            )
    keys = seal.generate_role_keys("dev")
    _write_new(path, keys)
    return DevKey(keys=keys, path=path, created=True, distrusted=distrusted)


def service_keys(keys: str, service: str) -> str:
    """The keyring a service of ``taskyard dev`` gets out of every role's ``keys``: its
    own role's key first (it signs), then the keys of the roles whose messages it
    verifies (``contract.KEYS_HELD``): a worker pool's own key alone. ``keys`` bound
    to no role: as they are."""
    keyring = seal.Keyring.parse(keys)
    if not keyring.roles:
        return keys
    role = procs.canonical(service)
    held = {role, *contract.KEYS_HELD[role]}
    return keyring.signing_as(role).only(lambda bound: bound in held).spec()


def explicit_source(env: Mapping[str, str]) -> str:
    """Where the key configured by ``env`` comes from ("" when none is)."""
    if env.get(KEYS_VARIABLE, "").strip():
        return KEYS_VARIABLE
    if env.get(KEYS_FILE_VARIABLE, "").strip():
        return f"{KEYS_FILE_VARIABLE} ({env[KEYS_FILE_VARIABLE].strip()})"
    # Imported here: pydantic-settings is most of a CLI command's start-up, and only the
    # commands that start services read settings.
    from taskyard.core.config import BusSettings

    try:
        # The bus's variables only: a bad one of another part is its service's to report.
        settings = BusSettings.from_env(env)
    except ValueError:
        return ""  # the service itself reports the bad variable
    if settings.bus_keys or settings.bus_keys_file:
        return "the secrets directory (TASKYARD_SECRETS_DIR)"
    return ""


@dataclasses.dataclass(frozen=True, kw_only=True)
class KeyChoice:
    """The environment a service is started with, and the line saying which key it uses."""

    env: dict[str, str]
    line: str


def project_env(env: Mapping[str, str], cwd: Path | None = None, *, service: str = "") -> KeyChoice:
    """``env``, with ``TASKYARD_BUS_KEYS_FILE`` set to the dev project's key file when
    no key is configured and ``<cwd>/.taskyard/bus.keys`` exists. With ``service``
    and keys bound to roles in that file: the service's own keyring alone, as
    taskyard dev hands it out (a pool joining the project holds its own key only)."""
    chosen = dict(env)
    source = explicit_source(env)
    if source:
        return KeyChoice(env=chosen, line=f"bus key from {source}")
    where = (cwd or Path.cwd()) / key_file(DEFAULT_DATA_DIR)
    if where.is_file():
        try:
            keys = ",".join(line.strip() for line in where.read_text().splitlines() if line.strip())
            own = service_keys(keys, service) if service else keys
        except (OSError, ValueError):  # the service reads the file, and says what is wrong with it
            keys = own = ""
        if own != keys:
            chosen[KEYS_VARIABLE] = own
            return KeyChoice(
                env=chosen,
                line=f"bus key from {where.resolve()} (taskyard dev's, found in this directory: "
                f"the {procs.canonical(service)}'s own keyring; {KEYS_VARIABLE} or "
                f"{KEYS_FILE_VARIABLE} would win)",
            )
        chosen[KEYS_FILE_VARIABLE] = str(where.resolve())
        return KeyChoice(
            env=chosen,
            line=f"bus key from {where.resolve()} (taskyard dev's, found in this directory; "
            f"{KEYS_VARIABLE} or {KEYS_FILE_VARIABLE} would win)",
        )
    return KeyChoice(
        env=chosen,
        line=f"no bus key ({KEYS_VARIABLE}, {KEYS_FILE_VARIABLE} or ./{key_file(DEFAULT_DATA_DIR)}): "
        "the internal bus is unsealed, and a sealed suite (taskyard dev) refuses it",
    )
