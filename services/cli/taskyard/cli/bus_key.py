"""The bus key of a ``taskyard dev`` project: written by dev, found by the commands
run from the same directory.

``taskyard dev`` runs its internal bus sealed with a key of its own. So that another
pool can join it (``taskyard serve worker-pool``, ``taskyard queue start``), dev keeps
that key in ``<data-dir>/bus.keys`` (mode 0600, the ``TASKYARD_BUS_KEYS`` format), and
``taskyard serve`` / ``taskyard queue start`` run from the directory holding the
default data dir (``.taskyard``) use that file when no key is configured. A key
configured explicitly (``TASKYARD_BUS_KEYS``, ``TASKYARD_BUS_KEYS_FILE`` or the
secrets directory) always wins. Either way one line says where the key came from.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from taskyard.core import seal
from taskyard.core.config import Settings

# taskyard dev's default --data-dir, relative to where it runs.
DEFAULT_DATA_DIR = Path(".taskyard")
KEY_FILE_NAME = "bus.keys"
KEYS_VARIABLE = "TASKYARD_BUS_KEYS"
KEYS_FILE_VARIABLE = "TASKYARD_BUS_KEYS_FILE"
OWNER_ONLY = 0o600


def key_file(data_dir: Path) -> Path:
    return data_dir / KEY_FILE_NAME


@dataclasses.dataclass(frozen=True, kw_only=True)
class DevKey:
    """The key dev runs with and the file that holds it."""

    keys: str
    path: Path
    created: bool


def dev_key(data_dir: Path) -> DevKey:
    """The key in ``<data_dir>/bus.keys``, made (0600) when there is no usable one.

    Kept between runs, so a pool started from the project survives a restart of dev;
    delete the file for a new key."""
    path = key_file(data_dir).resolve()
    with contextlib.suppress(OSError, seal.BusKeyError):
        keyring = seal.Keyring.parse(path.read_text(), source=str(path))
        if keyring.keys:
            if stat.S_IMODE(path.stat().st_mode) != OWNER_ONLY:
                path.chmod(OWNER_ONLY)
            # As TASKYARD_BUS_KEYS (the file may hold comments), for the services' environment.
            keys = ",".join(f"{kid}:{base64.b64encode(key).decode()}" for kid, key in keyring.keys)
            return DevKey(keys=keys, path=path, created=False)
    keys = seal.generate_keys()
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written whole under a temporary name created 0600, then renamed: the key is
    # never readable by others, and a reader never sees half a file.
    temporary = path.with_name(f".{KEY_FILE_NAME}.{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, OWNER_ONLY)
    try:
        os.write(fd, f"# taskyard dev's internal bus key (TASKYARD_BUS_KEYS format)\n{keys}\n".encode())
    finally:
        os.close(fd)
    os.chmod(temporary, OWNER_ONLY)  # whatever the umask did
    os.replace(temporary, path)
    return DevKey(keys=keys, path=path, created=True)


def explicit_source(env: Mapping[str, str]) -> str:
    """Where the key configured by ``env`` comes from ("" when none is)."""
    if env.get(KEYS_VARIABLE, "").strip():
        return KEYS_VARIABLE
    if env.get(KEYS_FILE_VARIABLE, "").strip():
        return f"{KEYS_FILE_VARIABLE} ({env[KEYS_FILE_VARIABLE].strip()})"
    try:
        settings = Settings.from_env(env)
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


def project_env(env: Mapping[str, str], cwd: Path | None = None) -> KeyChoice:
    """``env``, with ``TASKYARD_BUS_KEYS_FILE`` set to the dev project's key file when
    no key is configured and ``<cwd>/.taskyard/bus.keys`` exists."""
    chosen = dict(env)
    source = explicit_source(env)
    if source:
        return KeyChoice(env=chosen, line=f"bus key from {source}")
    where = (cwd or Path.cwd()) / key_file(DEFAULT_DATA_DIR)
    if where.is_file():
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
