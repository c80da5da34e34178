"""``taskyard keys``: bus keys per role for a deployment (docs/security.md, "Keys per role").

``taskyard keys new DIR`` makes one fresh key per role and writes, for each service, the
keyring it is given (``<service>.keys``, mode 0600 in a directory of mode 0700): its own
role's key first, which signs, then the keys of the roles whose messages it verifies
(``contract.KEYS_HELD``). Each file is a ``TASKYARD_BUS_KEYS`` value (or a
``TASKYARD_BUS_KEYS_FILE``), e.g. for one Kubernetes Secret per service. No key is ever
printed.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from taskyard.cli import bus_key, procs
from taskyard.cli.errors import fail
from taskyard.core import roles, seal

# A key id is at most seal.MAX_KID_BYTES: the prefix, a dash and the longest role.
MAX_PREFIX = seal.MAX_KID_BYTES - 1 - max(len(role) for role in roles.ROLES)


@click.group("keys")
def keys_group() -> None:
    """Bus keys per role (docs/security.md, "Keys per role")."""


@keys_group.command("new")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--prefix",
    default="k1",
    show_default=True,
    help="Key ids are <prefix>-<role>: a new prefix for each rotation (k2, ...).",
)
def keys_new(directory: Path, prefix: str) -> None:
    """Write one keyring per service into DIRECTORY (a new directory, or an empty one)."""
    if not prefix or len(prefix) > MAX_PREFIX or not prefix.isascii() or not prefix.isprintable():
        fail(f"--prefix must be 1 to {MAX_PREFIX} printable ASCII characters")
    if "/" in prefix or ":" in prefix or "," in prefix or " " in prefix:
        fail("--prefix may not hold '/', ':', ',' or spaces (they separate a keyring's parts)")
    if directory.exists() and any(directory.iterdir()):
        fail(f"{directory} is not empty: keys new never overwrites keys")
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    every = seal.generate_role_keys(prefix)
    for service in procs.START_ORDER:
        path = directory / f"{service}.keys"
        ring = bus_key.service_keys(every, service).replace(",", "\n")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(f"# the {service}'s bus keyring: its own key first (docs/security.md: Keys per role)\n")
            f.write(ring + "\n")
        click.echo(f"{path}  ({service}: signs with {prefix}-{service})")
