"""``taskyard keys``: bus keys per role, and gateway tokens, for a deployment (docs/security.md).

``taskyard keys new DIR`` makes one fresh key per role and writes, for each service, the
keyring it is given (``<service>.keys``, mode 0600 in a directory of mode 0700): its own
role's key first, which signs, then the keys of the roles whose messages it verifies
(``contract.KEYS_HELD``). Each file is a ``TASKYARD_BUS_KEYS`` value (or a
``TASKYARD_BUS_KEYS_FILE``), e.g. for one Kubernetes Secret per service. No key is ever
printed.

``taskyard keys token NAME --scopes submit,read [--tenant acme] [--tokens-file FILE]`` makes
a bearer token and its line of the gateway's tokens file (docs/security.md, "Tokens"): the
token's SHA-256, its scopes, its name and, for a tenant's token, ``tenant=NAME`` as the 4th
field (a token without it is an operator's, over every tenant: docs/tenants.md). With
``--tokens-file`` the line is appended there (the gateway reads the file again when it
changes); the token itself is printed once and kept nowhere.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path

import click
from google.protobuf import struct_pb2
from rich.console import RenderableType

from taskyard.cli import bus_key, procs
from taskyard.cli.errors import fail
from taskyard.cli.output import Output, fields, output_option
from taskyard.core import roles, seal, tenants

# A key id is at most seal.MAX_KID_BYTES: the prefix, a dash and the longest role.
MAX_PREFIX = seal.MAX_KID_BYTES - 1 - max(len(role) for role in roles.ROLES)
# The gateway's scopes (auth.Scope): admin implies the others.
SCOPES = ("submit", "read", "work", "admin")
# Random bytes of a new token (43 characters of URL-safe base64).
TOKEN_BYTES = 32


@click.group("keys")
def keys_group() -> None:
    """Bus keys per role, and gateway tokens (docs/security.md)."""


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


def _scopes(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    given = [s.strip().lower() for s in value.split(",") if s.strip()]
    if not given or any(s not in SCOPES for s in given):
        raise click.BadParameter(f"a comma-separated list of {', '.join(SCOPES)}, got {value!r}")
    return ",".join(dict.fromkeys(given))


def _tenant(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is not None and (problem := tenants.problem(value)) is not None:
        raise click.BadParameter(f"the tenant name {problem}")
    return value


def _names_in(path: Path) -> set[str]:
    """The token names a tokens file already has (its lines' 3rd fields)."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return set()
    except OSError as exc:
        fail(f"--tokens-file: cannot read {path}: {exc.strerror}")
    found = (line.split() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    return {f[2] for f in found if len(f) >= 3}


def _append(path: Path, line: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        # A file whose last line has no newline would have this one glued to it.
        if f.tell() and not path.read_bytes().endswith(b"\n"):
            f.write("\n")
        f.write(line + "\n")


def _made(reply: struct_pb2.Struct) -> RenderableType:
    rows: list[tuple[str, RenderableType]] = [("token", str(reply["token"])), ("line", str(reply["line"]))]
    if reply["tokens_file"]:
        rows.append(("appended_to", str(reply["tokens_file"])))
    return fields(rows)


@keys_group.command("token")
@click.argument("name")
@click.option(
    "--scopes",
    required=True,
    callback=_scopes,
    help="Comma-separated: submit, read, work (a worker), admin (admin: all).",
)
@click.option(
    "--tenant",
    callback=_tenant,
    default=None,
    metavar="NAME",
    help="The tenant it belongs to (tenant=NAME in its line); without it, an operator's token.",
)
@click.option(
    "--tokens-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Append its line to this tokens file (TASKYARD_AUTH_TOKENS_FILE; made 0600 if new).",
)
@output_option
def keys_token(name: str, scopes: str, tenant: str | None, tokens_file: Path | None, output: Output) -> None:
    """Make a bearer token NAME and its tokens-file line (only the token's SHA-256 in it).

    \b
    Examples:
      taskyard keys token acme-ci --scopes submit,read --tenant acme --tokens-file tokens
      taskyard keys token ops --scopes admin
    """
    if not name.isprintable() or any(c.isspace() for c in name) or name.startswith("#"):
        fail("NAME must be printable, without spaces, and not start with '#'")
    if tokens_file is not None and name in _names_in(tokens_file):
        fail(f"{tokens_file} already has a token named {name!r}: names are unique")
    token = secrets.token_urlsafe(TOKEN_BYTES)
    fields_ = [f"sha256:{hashlib.sha256(token.encode()).hexdigest()}", scopes, name]
    if tenant is not None:
        fields_.append(f"tenant={tenant}")
    line = "  ".join(fields_)
    if tokens_file is not None:
        _append(tokens_file, line)
    reply = struct_pb2.Struct()
    reply.update(
        {
            "name": name,
            "scopes": scopes,
            "tenant": tenant or "",
            "token": token,
            "line": line,
            "tokens_file": str(tokens_file or ""),
        }
    )
    output.emit(reply, _made)
    output.note("the token is shown once and kept nowhere: give it to its holder now")
