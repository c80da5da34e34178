"""Environment variables: the kinds of value a setting reads from one, where the
values come from (any mapping, plus a directory of secret files), and the error that
names the variable a bad value came from.

The settings model itself is ``taskyard.core.config.Settings``; this module knows
nothing of its fields.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeAlias

from pydantic import AfterValidator, AliasChoices, BeforeValidator, Field, SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, EnvSettingsSource, NoDecode, SecretsSettingsSource
from pydantic_settings.sources.utils import parse_env_vars

from taskyard.core import tenants as tenant_names

PREFIX = "TASKYARD_"
# A directory of files named like the variables (a mounted Kubernetes secret): they
# supply the settings the environment leaves unset, under any of their names.
SECRETS_DIR = PREFIX + "SECRETS_DIR"


def variable(name: str) -> str:
    """The variable of the attribute ``name``, unless its field names others."""
    return PREFIX + name.upper()


@dataclasses.dataclass(frozen=True)
class Expect:
    """What a variable must hold, as the error about a bad value says it. With
    ``detail``, the error also says what was wrong (which entry of a list)."""

    text: str
    detail: bool = False


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def _flag(value: object) -> object:
    # Stricter than pydantic's booleans: "t", "y" or "n" are typos more often than intent.
    if not isinstance(value, str):
        return value
    word = value.strip().lower()
    if word not in _TRUE | _FALSE:
        raise ValueError("not a flag")
    return word in _TRUE


def _positive(value: float) -> float:
    # There is no "no timeout": 0 would fail every attempt at once and make the
    # watchdog kill every busy worker.
    if not value > 0:  # also NaN
        raise ValueError("not positive")
    return value


# Lenient on purpose: it catches a scheme, a port, a path or spaces, not every RFC rule.
_HOST_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


def valid_host(value: str) -> bool:
    """A host name or an IP address (IPv6 with or without brackets); no scheme, no port."""
    inner = value[1:-1] if value.startswith("[") and value.endswith("]") else value
    try:
        ipaddress.ip_address(inner)
        return True
    except ValueError:
        pass
    return inner == value and bool(_HOST_NAME.match(value)) and len(value) <= 253


def _host(value: str) -> str:
    if value == "":  # unset: the role follows TASKYARD_HOST
        return value
    host = value.strip()
    if not valid_host(host):
        raise ValueError("not a host")
    return host


def _hosts(value: tuple[str, ...]) -> tuple[str, ...]:
    for host in value:
        if not valid_host(host):
            raise ValueError(f"{host!r} is not a host")
    # Listed twice, one instance would be dialed twice: every event it publishes
    # would then reach each subscriber twice.
    seen: set[str] = set()
    for host in value:
        if host.lower() in seen:
            raise ValueError(f"{host!r} is listed twice")
        seen.add(host.lower())
    return value


TRANSPORTS = ("tcp", "tls+tcp", "ipc")


def _transport(value: str) -> str:
    if value not in TRANSPORTS:
        raise ValueError("not a transport")
    return value


def _comma_list(value: object) -> object:
    if isinstance(value, str):
        return tuple(m.strip() for m in value.split(",") if m.strip())
    return value


Flag = Annotated[bool, BeforeValidator(_flag), Expect("one of true/false/1/0/yes/no/on/off")]
Host = Annotated[str, AfterValidator(_host), Expect("a host name or IP address (no scheme, no port)")]
# "10.0.0.1, store-b": the instances of one role, split here, never read as JSON.
Hosts = Annotated[
    tuple[str, ...],
    NoDecode,
    BeforeValidator(_comma_list),
    AfterValidator(_hosts),
    Expect("a comma-separated list of host names or IP addresses (no scheme, no port)", detail=True),
]
Port = Annotated[int, Field(ge=0, le=65535), Expect("a port number from 0 to 65535")]
Timeout = Annotated[
    float, AfterValidator(_positive), Expect("a positive number of seconds (there is no 'no timeout')")
]
Transport = Annotated[str, AfterValidator(_transport), Expect(f"one of {', '.join(TRANSPORTS)}")]
# "a.tasks, b.jobs": split here, never read as JSON.
Modules = Annotated[tuple[str, ...], NoDecode, BeforeValidator(_comma_list)]
# The name that stands for the default tenant in a list of tenants (``pool_tenants``).
DEFAULT_TENANT_NAME = tenant_names.DEFAULT_TENANT_NAME


def _tenants(value: tuple[str, ...]) -> tuple[str, ...]:
    seen: set[str] = set()
    for name in value:
        if name != DEFAULT_TENANT_NAME and not tenant_names.fits(name):
            raise ValueError(f"{name!r} {tenant_names.problem(name)}")
        if name in seen:
            raise ValueError(f"{name!r} is listed twice")
        seen.add(name)
    return value


# "acme, default": tenants' names, "default" the default tenant's; split here, never read as JSON.
Tenants = Annotated[
    tuple[str, ...],
    NoDecode,
    BeforeValidator(_comma_list),
    AfterValidator(_tenants),
    Expect(
        f"a comma-separated list of tenant names ({tenant_names.CHARSET}; "
        f"{DEFAULT_TENANT_NAME!r} for the default tenant)",
        detail=True,
    ),
]
if TYPE_CHECKING:
    # Callers hand secrets over as plain strings; the model keeps them as SecretStr.
    Secret: TypeAlias = str | SecretStr
else:
    Secret = SecretStr


def reveal(value: str | SecretStr) -> str:
    return value.get_secret_value() if isinstance(value, SecretStr) else value


def text(value: object) -> str:
    """``value`` as a variable holds it: what reading the variable turns back into it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(value)
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    return str(value)


def names(field: FieldInfo) -> tuple[str, ...]:
    """The variables a field is read from, the preferred one first."""
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        return tuple(c for c in alias.choices if isinstance(c, str))
    return (alias,) if isinstance(alias, str) else ()


class _Environment(EnvSettingsSource):
    """The variables of any mapping (a child's environment, a test's dict), not only os.environ."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        # Only the declared names: pydantic-settings would also try prefix + attribute
        # (TASKYARD_host), a spelling nobody documents.
        declared = {n for field in self.settings_cls.model_fields.values() for n in names(field)}
        environ = {k: v for k, v in self._environ.items() if k in declared}
        return parse_env_vars(environ, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str)


def read(settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> dict[str, Any]:
    """The raw values ``environ`` and its secrets directory give, each under its
    field's preferred variable; for one setting, the environment wins over a file."""
    values: dict[str, Any] = {}
    directory = environ.get(SECRETS_DIR, "")
    if directory:
        if not Path(directory).is_dir():
            raise ValueError(f"{SECRETS_DIR} must be a directory, got {directory!r}")
        values.update(SecretsSettingsSource(settings_cls, secrets_dir=directory)())
    values.update(_Environment(settings_cls, environ)())
    return values


def _expect(field: FieldInfo) -> Expect | None:
    for item in field.metadata:
        if isinstance(item, Expect):
            return item
    return None


def _expectation(field: FieldInfo) -> str:
    expect = _expect(field)
    if expect is not None:
        return expect.text
    if field.annotation is int:
        return "an integer"
    return "a number" if field.annotation is float else "valid"


def _detail(field: FieldInfo, error: Any) -> str:
    """What a validator of a detailed field said was wrong ("" when nothing to add)."""
    expect = _expect(field)
    if expect is None or not expect.detail or error.get("type") != "value_error":
        return ""
    return str(error.get("ctx", {}).get("error", ""))


def _origin(field: FieldInfo, environ: Mapping[str, str]) -> str:
    """The variable a field's value came from: its first name set in the environment,
    else its first name with a file in the secrets directory (the order they are read in)."""
    candidates = names(field)
    directory = environ.get(SECRETS_DIR, "")
    for name in candidates:
        if environ.get(name):
            return name
    for name in candidates:
        if directory and (Path(directory) / name).is_file():
            return name
    return candidates[0]


def describe(
    exc: ValidationError,
    settings_cls: type[BaseSettings],
    values: Mapping[str, Any],
    environ: Mapping[str, str],
) -> str:
    """One line per bad value: the variable it came from, what it must be, what it was
    (never for a secret). ``values`` is what ``read`` gave, by preferred name."""
    fields: dict[str, FieldInfo] = {}
    for name, info in settings_cls.model_fields.items():
        fields.update(dict.fromkeys((name, *names(info)), info))
    lines: dict[str, None] = {}
    for error in exc.errors(include_url=False):
        key = str(error["loc"][0]) if error["loc"] else settings_cls.__name__
        field = fields.get(key)
        if field is None:
            lines[f"{key}: {error['msg']}"] = None
            continue
        line = f"{_origin(field, environ)} must be {_expectation(field)}"
        detail = _detail(field, error)
        if detail:
            line += f" ({detail})"
        if field.annotation is not SecretStr:
            line += f", got {values.get(key)!r}"
        lines[line] = None
    return "; ".join(lines)
