"""How the CLI reaches the gateway: target, TLS and token options, and the one place channels are made.

Each option has an environment twin, so a shell can be set up once::

    export TASKYARD_TARGET=gw.example.com:50051 TASKYARD_TLS_CA=ca.pem TASKYARD_TOKEN_FILE=~/.taskyard-token

The options may be given on a command group or after the subcommand; the
values live in the click context object next to ``target``. ``--tenant NAME`` (or
``TASKYARD_TENANT``), also given before any command (``taskyard --tenant acme task list``),
has an operator token act as that one tenant: every call carries ``taskyard-tenant``
metadata (docs/tenants.md).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
import grpc

from taskyard.client import DEFAULT_TARGET, Endpoint
from taskyard.core import tenants

F = TypeVar("F", bound=Callable[..., Any])

TARGET_ENVIRONMENT = "TASKYARD_TARGET"
# An option given anywhere on the command line wins over its environment twin.
ENVIRONMENT = {
    "tls_ca": "TASKYARD_TLS_CA",
    "tls_cert": "TASKYARD_TLS_CLIENT_CERT",
    "tls_key": "TASKYARD_TLS_CLIENT_KEY",
    "token": "TASKYARD_TOKEN",
    "token_file": "TASKYARD_TOKEN_FILE",
    "tenant": "TASKYARD_TENANT",
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Connection:
    target: str
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    token: str | None = None
    # The tenant an operator token acts as; None: every tenant (or the token's own).
    tenant: str | None = None

    @classmethod
    def current(cls, target: str | None = None) -> Connection:
        """From the click context (options and environment); ``target`` wins when given."""
        ctx = click.get_current_context(silent=True)
        obj: dict[str, Any] = (ctx.find_root().obj if ctx is not None else None) or {}
        if ctx is not None and isinstance(ctx.obj, dict):
            obj = {**obj, **ctx.obj}
        given = {key: obj.get(key) or None for key in ENVIRONMENT}
        env = {key: os.environ.get(name) or None for key, name in ENVIRONMENT.items()}
        token = given["token"]
        if token is None and given["token_file"] is not None:
            token = _read_token(given["token_file"])
        if token is None and env["token"] is None and env["token_file"] is not None:
            token = _read_token(env["token_file"])
        for key in ("tls_ca", "tls_cert", "tls_key", "tenant"):
            given[key] = given[key] or env[key]
        if given["tenant"] is not None and (problem := tenants.problem(given["tenant"])) is not None:
            raise click.UsageError(f"--tenant (or {ENVIRONMENT['tenant']}): the tenant name {problem}")
        return cls(
            target=target or obj.get("target") or os.environ.get(TARGET_ENVIRONMENT) or DEFAULT_TARGET,
            tls_ca=given["tls_ca"],
            tls_cert=given["tls_cert"],
            tls_key=given["tls_key"],
            # None: the client falls back to $TASKYARD_TOKEN itself.
            token=token or env["token"],
            tenant=given["tenant"],
        )

    def channel(self) -> grpc.Channel:
        """A channel to the gateway with these credentials (gateway.py calls the stubs on it),
        made as the Python client makes its own, so the two secure a connection alike."""
        endpoint = Endpoint(
            self.target,
            token=self.token,
            tls_ca=self.tls_ca,
            tls_cert=self.tls_cert,
            tls_key=self.tls_key,
            tenant=self.tenant,
        )
        try:
            return endpoint.channel()
        except (OSError, ValueError) as exc:
            raise click.UsageError(str(exc)) from None


def _read_token(path: str) -> str:
    try:
        return Path(path).expanduser().read_text("utf-8").strip()
    except OSError as exc:
        raise click.UsageError(f"--token-file: cannot read {path}: {exc.strerror}") from None


def _store(key: str) -> Callable[[click.Context, click.Parameter, str | None], None]:
    def store(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
        if value:
            ctx.ensure_object(dict)
            ctx.obj[key] = value

    return store


def security_options(func: F) -> F:
    """``--tls-ca``, ``--tls-cert``, ``--tls-key``, ``--token``, ``--token-file`` (and env twins)."""
    specs = (
        ("--tls-ca", "tls_ca", "CA certificate (PEM) that signed the gateway's; turns TLS on."),
        ("--tls-cert", "tls_cert", "Client certificate (PEM), for a gateway that asks for one (mTLS)."),
        ("--tls-key", "tls_key", "Private key (PEM) of --tls-cert."),
        ("--token", "token", "Bearer token (prefer --token-file: a command line is visible to others)."),
        ("--token-file", "token_file", "File holding the bearer token."),
    )
    for flag, key, text in reversed(specs):
        func = click.option(
            flag,
            expose_value=False,
            callback=_store(key),
            default=None,
            help=f"{text} (env {ENVIRONMENT[key]})",
        )(func)
    return func


def tenant_option(func: F) -> F:
    """``--tenant NAME`` (env TASKYARD_TENANT): an operator token acting as one tenant."""
    return click.option(
        "--tenant",
        expose_value=False,
        callback=_store("tenant"),
        default=None,
        metavar="NAME",
        help="Act as tenant NAME (an operator token; the calls carry taskyard-tenant) "
        f"(env {ENVIRONMENT['tenant']}).",
    )(func)


def target_options(func: F) -> F:
    """``--target``, ``--tenant`` and the security options, on a group or a command: the
    one given last on the command line wins, then the environment, then localhost:50051."""
    return click.option(
        "--target",
        expose_value=False,
        callback=_store("target"),
        default=None,
        help=f"Gateway address host:port (env {TARGET_ENVIRONMENT}, default {DEFAULT_TARGET}).",
    )(tenant_option(security_options(func)))
