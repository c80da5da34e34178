"""Bearer tokens with scopes, checked by a server interceptor before any RPC runs.

The tokens file (``TASKYARD_AUTH_TOKENS_FILE``) has one token per line::

    # token (or sha256:<hex of its SHA-256>)   scopes              name          [tenant]
    sha256:9f86d081884c7d659a2feaa0c55ad015...  submit,read         ci-producer
    Zq3...long random text...                   admin               ops
    sha256:60303ae22b998861bce3b28f33eec1be...  submit,read         acme-ci       tenant=acme

A token with ``tenant=NAME`` belongs to that tenant: its scopes apply within it
only (docs/tenants.md). A token without one is an operator's, over every tenant.

Blank lines and lines starting with ``#`` are ignored. A token written in clear must be at
least ``MIN_TOKEN_LENGTH`` characters; the gateway keeps only SHA-256 digests
in memory and compares them with ``hmac.compare_digest``. The file is read
again when its modification time changes (checked at most once a second) and
on SIGHUP; a file that fails to parse keeps the previous tokens.
Neither a token nor a line of the file ever goes into a log or an error message.
"""

from __future__ import annotations

import contextvars
import dataclasses
import enum
import hashlib
import hmac
import inspect
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

import grpc
from grpc_health.v1 import health

from taskyard.bus.v1 import tenants_pb2
from taskyard.core import errors, tenants, validation
from taskyard.gateway import admission, reflection

log = logging.getLogger(__name__)

MIN_TOKEN_LENGTH = 16
# How often a call may look at the file's modification time.
RELOAD_CHECK_INTERVAL = 1.0
_DIGEST_PREFIX = "sha256:"
_TENANT_PREFIX = "tenant="


class Scope(enum.Enum):
    SUBMIT = "submit"
    READ = "read"
    ADMIN = "admin"
    # Running tasks as a worker on the public stream (WorkerService).
    WORK = "work"


class TokensFileError(ValueError):
    """The tokens file cannot be used (its message never quotes the file's content)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Token:
    name: str
    digest: bytes
    scopes: frozenset[Scope]
    # The tenant it belongs to; None: an operator's token, over every tenant.
    tenant: str | None = None

    def allows(self, scope: Scope | None) -> bool:
        """``None`` asks only for a valid token; ``admin`` implies every scope."""
        return scope is None or Scope.ADMIN in self.scopes or scope in self.scopes


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def parse_tokens(text: str, *, source: str = "tokens file") -> tuple[Token, ...]:
    tokens: list[Token] = []
    names: set[str] = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) not in (3, 4):
            raise TokensFileError(
                f"{source}, line {number}: expected 'TOKEN SCOPES NAME' (3 fields), "
                "or 'TOKEN SCOPES NAME tenant=TENANT' (4 fields)"
            )
        secret, scope_text, name = fields[:3]
        tenant = _tenant_field(fields[3], source, number) if len(fields) == 4 else None
        if secret.startswith(_DIGEST_PREFIX):
            try:
                value = bytes.fromhex(secret.removeprefix(_DIGEST_PREFIX))
            except ValueError:
                value = b""
            if len(value) != hashlib.sha256().digest_size:
                raise TokensFileError(f"{source}, line {number}: a sha256: digest is 64 hex digits")
        elif len(secret) < MIN_TOKEN_LENGTH:
            raise TokensFileError(
                f"{source}, line {number}: a token must be at least {MIN_TOKEN_LENGTH} characters"
            )
        else:
            value = digest(secret)
        try:
            scopes = frozenset(Scope(s) for s in scope_text.lower().split(",") if s)
        except ValueError:
            raise TokensFileError(
                f"{source}, line {number}: scopes are a comma-separated list of "
                + ", ".join(s.value for s in Scope)
            ) from None
        if not scopes:
            raise TokensFileError(f"{source}, line {number}: no scope")
        if name in names:
            raise TokensFileError(f"{source}, line {number}: the name {name!r} is used twice")
        names.add(name)
        tokens.append(Token(name=name, digest=value, scopes=scopes, tenant=tenant))
    return tuple(tokens)


def _tenant_field(text: str, source: str, number: int) -> str:
    """The tenant of a 4th field ``tenant=NAME`` (its text is no secret: quoted)."""
    if not text.startswith(_TENANT_PREFIX):
        raise TokensFileError(f"{source}, line {number}: the 4th field is 'tenant=NAME'")
    name = text.removeprefix(_TENANT_PREFIX)
    problem = tenants.problem(name)
    if problem is not None:
        raise TokensFileError(f"{source}, line {number}: the tenant name {problem}")
    return name


class TokensFile:
    """The tokens of a file, read again when it changes."""

    def __init__(self, path: str, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self._clock = clock
        self._mtime = self._stat()
        self.tokens = self._read()
        self._checked = clock()

    def _stat(self) -> int:
        try:
            return os.stat(self.path).st_mtime_ns
        except OSError as exc:
            raise TokensFileError(f"cannot read {self.path}: {exc.strerror}") from None

    def _read(self) -> tuple[Token, ...]:
        try:
            with open(self.path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise TokensFileError(f"cannot read {self.path}: {type(exc).__name__}") from None
        tokens = parse_tokens(text, source=self.path)
        if not tokens:
            raise TokensFileError(f"{self.path} holds no token")
        return tokens

    def reload(self) -> bool:
        """Read the file again; on failure keep the current tokens (and say so). True if it changed."""
        try:
            mtime = self._stat()
            tokens = self._read()
        except TokensFileError as exc:
            log.error("tokens not reloaded, the previous %d stay: %s", len(self.tokens), exc)
            return False
        self._mtime = mtime
        changed = {(t.digest, t.scopes, t.tenant) for t in tokens} != {
            (t.digest, t.scopes, t.tenant) for t in self.tokens
        }
        self.tokens = tokens
        log.info("tokens loaded from %s: %s", self.path, ", ".join(t.name for t in tokens))
        return changed

    def _maybe_reload(self) -> None:
        now = self._clock()
        if now - self._checked < RELOAD_CHECK_INTERVAL:
            return
        self._checked = now
        try:
            mtime = self._stat()
        except TokensFileError:
            return  # a secret being replaced may vanish for a moment: keep what we have
        if mtime != self._mtime:
            self.reload()

    def find(self, presented: str) -> Token | None:
        self._maybe_reload()
        wanted = digest(presented)
        found: Token | None = None
        # Every digest is compared, so the time taken says nothing about which one matched.
        for token in self.tokens:
            if hmac.compare_digest(token.digest, wanted):
                found = token
        return found


# --- the policy: which scope each RPC needs ----------------------------------------

_TASKS = "/taskyard.v1.TaskService/"
_SCHEDULES = "/taskyard.v1.ScheduleService/"
_QUEUES = "/taskyard.v1.QueueService/"
_LIMITS = "/taskyard.v1.LimitService/"
_FAILURES = "/taskyard.v1.FailureService/"
_TENANTS = "/taskyard.v1.TenantService/"

REQUIRED_SCOPES: Mapping[str, Scope | None] = {
    # RunTask reads back only the task it submitted, as SubmitTask does for a repeated request_id.
    **{_TASKS + m: Scope.SUBMIT for m in ("SubmitTask", "BatchSubmitTasks", "RunTask", "CancelTask")},
    **{
        _TASKS + m: Scope.READ
        for m in (
            "GetTask",
            "WaitTask",
            "ListTasks",
            "GetTaskTree",
            "ExplainTask",
            "GetTaskLogs",
            "StreamTaskLogs",
        )
    },
    **{_SCHEDULES + m: Scope.READ for m in ("GetSchedule", "ListSchedules")},
    **{
        _SCHEDULES + m: Scope.ADMIN
        for m in ("CreateSchedule", "PauseSchedule", "ResumeSchedule", "DeleteSchedule", "TriggerSchedule")
    },
    **{_LIMITS + m: Scope.READ for m in ("GetLimit", "ListLimits", "ListKeyWeights")},
    **{_LIMITS + m: Scope.ADMIN for m in ("CreateLimit", "UpdateLimit", "DeleteLimit", "SetKeyWeight")},
    **{_QUEUES + m: Scope.READ for m in ("GetQueueStatus", "ListServers")},
    # An operator's only but GetTenant (tenancy.py), with these scopes.
    **{_TENANTS + m: Scope.READ for m in ("GetTenant", "ListTenants")},
    **{_TENANTS + m: Scope.ADMIN for m in ("CreateTenant", "UpdateTenant", "SuspendTenant", "ResumeTenant")},
    "/taskyard.v1.EventService/WatchEvents": Scope.READ,
    "/taskyard.worker.v1.WorkerService/Work": Scope.WORK,
    **{
        _FAILURES + m: Scope.READ
        for m in ("ListFailureGroups", "ListFailures", "GetRedrive", "ListRedrives", "ListRedriveItems")
    },
    # A dry run too: it reads what a filter would redrive, a step before doing it.
    **{
        _FAILURES + m: Scope.ADMIN
        for m in ("Redrive", "PauseRedrive", "ResumeRedrive", "CancelRedrive", "PurgeDeadLetters")
    },
    **{
        _QUEUES + m: Scope.ADMIN
        for m in ("PauseQueue", "ResumeQueue", "ClearQueue", "RetryTasks", "PurgeTasks")
    },
    # Reflection describes the API: any valid token (both versions, reflection.py).
    **{f"/{name}/{reflection.METHOD}": None for name in reflection.SERVICE_NAMES},
}
# TenantService but GetTenant (a tenant's token reads its own): an operator token's only.
OPERATOR_METHODS = frozenset(
    _TENANTS + m for m in ("CreateTenant", "ListTenants", "UpdateTenant", "SuspendTenant", "ResumeTenant")
)
# Probes carry no token.
OPEN_METHODS = frozenset(f"/{health.SERVICE_NAME}/{m}" for m in ("Check", "Watch"))


def required_scope(method: str) -> Scope | None:
    """What ``method`` needs; a method the table does not name needs ``admin``."""
    return REQUIRED_SCOPES.get(method, Scope.ADMIN)


# Who a call came from on a gateway without tokens (the audit's created_by).
NO_TOKENS_CALLER = "dev"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Identity:
    """Who the call being served came from: the token's name, and whose rows it reaches."""

    name: str
    # The token's tenant; None: an operator's token (or a gateway without tokens).
    tenant: str | None = None
    # An operator acting as one tenant (the ``taskyard-tenant`` metadata).
    acting: str | None = None

    @property
    def operator(self) -> bool:
        return self.tenant is None

    @property
    def within(self) -> str | None:
        """The one tenant the call is confined to; None: every tenant (an operator's reads)."""
        return self.tenant if self.tenant is not None else self.acting

    @property
    def home(self) -> str:
        """The tenant the call's submissions and named objects belong to."""
        within = self.within
        return "" if within is None else within

    def scope(self) -> tenants_pb2.TenantScope:
        within = self.within
        return tenants_pb2.TenantScope(all=True) if within is None else tenants_pb2.TenantScope(tenant=within)

    def sees(self, tenant: str) -> bool:
        """Whether a row of ``tenant`` is within the call's reach."""
        within = self.within
        return within is None or within == tenant


# A call without a token (a gateway without tokens, or a background task of the
# gateway's own): an operator's, over every tenant.
OPERATOR = Identity(name="")
# Who the call being served came from (each call is its own task, so its own
# context): set by the handler the Authenticator wraps, then by Tenancy's.
_IDENTITY: contextvars.ContextVar[Identity] = contextvars.ContextVar(
    "taskyard_gateway_caller", default=OPERATOR
)


def identity() -> Identity:
    """The identity of the call being served (OPERATOR outside a call)."""
    return _IDENTITY.get()


def set_identity(who: Identity) -> None:
    """Serve the rest of the call being served as ``who``'s."""
    _IDENTITY.set(who)


def scope() -> tenants_pb2.TenantScope:
    """The TenantScope of the call being served, for the bus requests it sends."""
    return _IDENTITY.get().scope()


def caller_name(tokens: TokensFile | None) -> str:
    """The name of the token the call being served came with, for an audit record;
    ``NO_TOKENS_CALLER`` on a gateway without tokens. It is the token the
    Authenticator accepted, passed along with the call, never looked up again: the
    file may be reloaded in between, and the token gone from it or renamed."""
    if tokens is None:
        return NO_TOKENS_CALLER
    return _IDENTITY.get().name


def with_identity(handler: admission.Handler, who: Identity) -> admission.Handler:
    """``handler``, its calls served as ``who``'s."""
    behavior = admission.behavior_of(handler)

    if inspect.isasyncgenfunction(behavior):

        async def stream(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
            _IDENTITY.set(who)
            async for item in behavior(request, context):
                yield item

        return admission.handler_like(handler, stream)

    async def call(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        _IDENTITY.set(who)
        result = behavior(request, context)
        return await result if inspect.isawaitable(result) else result

    return admission.handler_like(handler, call)


def with_caller(handler: admission.Handler, name: str) -> admission.Handler:
    """``handler``, its calls served with ``name`` as their ``caller_name`` (an operator's)."""
    return with_identity(handler, Identity(name=name))


def act_as(metadata: Iterable[tuple[str, str | bytes]] | None, who: Identity) -> Identity:
    """``who`` with the tenant the ``taskyard-tenant`` metadata names. Raises
    INVALID_ARGUMENT (INVALID_TENANT) for a bad name, PERMISSION_DENIED
    (OPERATOR_ONLY) for a tenant token naming another tenant; its own is ignored."""
    wanted: str | None = None
    for key, value in metadata or ():
        if key == tenants.METADATA_KEY:
            wanted = value.decode("latin-1") if isinstance(value, bytes) else value
    if not wanted:
        return who
    problem = tenants.problem(wanted)
    if problem is not None:
        raise errors.TaskyardError(
            errors.Code.INVALID_ARGUMENT,
            tenants.INVALID_TENANT,
            f"metadata {tenants.METADATA_KEY}: {problem}",
            (
                validation.Violation(
                    field=f"metadata.{tenants.METADATA_KEY}",
                    description=problem,
                    reason=tenants.INVALID_TENANT,
                ),
            ),
        )
    if who.tenant is not None:
        if wanted == who.tenant:
            return who
        raise errors.TaskyardError(
            errors.Code.PERMISSION_DENIED,
            tenants.OPERATOR_ONLY,
            f"only an operator token may act as another tenant ({tenants.METADATA_KEY}); "
            f"token '{who.name}' belongs to a tenant",
        )
    return dataclasses.replace(who, acting=wanted)


def _refusal(code: errors.Code, reason: str, message: str) -> errors.TaskyardError:
    return errors.TaskyardError(code, reason, message)


def bearer(metadata: Sequence[tuple[str, str | bytes]] | None) -> str | None:
    """The token of the ``authorization: Bearer`` header; "" when the header is not a bearer token."""
    for key, value in metadata or ():
        if key != "authorization":
            continue
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        scheme, _, token = text.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return ""
        return token.strip()
    return None


class Authenticator(admission.Interceptor):
    """UNAUTHENTICATED without a valid token, PERMISSION_DENIED without the scope."""

    def __init__(self, tokens: TokensFile) -> None:
        self.tokens = tokens
        self.refused = 0

    def check(
        self,
        method: str,
        metadata: Sequence[tuple[str, str | bytes]] | None,
        *,
        scope_checked: bool = True,
    ) -> errors.TaskyardError | None:
        """The refusal of a call to ``method``, or None. Without ``scope_checked``
        only the token is checked (a method nobody serves needs no scope)."""
        return self.authorize(method, metadata, scope_checked=scope_checked)[0]

    def authorize(
        self,
        method: str,
        metadata: Sequence[tuple[str, str | bytes]] | None,
        *,
        scope_checked: bool = True,
    ) -> tuple[errors.TaskyardError | None, Token | None]:
        """``check``'s refusal, or None and the token accepted (None for an open method)."""
        if method in OPEN_METHODS:
            return None, None
        presented = bearer(metadata)
        if presented is None:
            return _refusal(
                errors.Code.UNAUTHENTICATED,
                "TOKEN_MISSING",
                "this gateway needs a token: send the header 'authorization: Bearer <token>'",
            ), None
        token = self.tokens.find(presented) if presented else None
        if token is None:
            return _refusal(
                errors.Code.UNAUTHENTICATED,
                "TOKEN_INVALID",
                "the token is not valid here (header 'authorization: Bearer <token>')",
            ), None
        if scope_checked and token.tenant is not None and method in OPERATOR_METHODS:
            # Whose the token is comes before what it may do: no scope would let a
            # tenant's token call this, so SCOPE_MISSING would point the wrong way.
            return _refusal(
                errors.Code.PERMISSION_DENIED,
                tenants.OPERATOR_ONLY,
                f"{method.rsplit('/', 1)[-1]} is for operator tokens only; "
                f"token '{token.name}' belongs to a tenant",
            ), token
        scope = required_scope(method)
        if scope_checked and not token.allows(scope):
            assert scope is not None
            return _refusal(
                errors.Code.PERMISSION_DENIED,
                "SCOPE_MISSING",
                f"{method.rsplit('/', 1)[-1]} needs the scope '{scope.value}'"
                + ("" if scope is Scope.ADMIN else " (or 'admin')")
                + "; "
                f"token '{token.name}' has {', '.join(sorted(s.value for s in token.scopes))}",
            ), token
        return None, token

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[admission.Handler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> admission.Handler:
        method = handler_call_details.method
        handler = await continuation(handler_call_details)
        if handler is None:
            # A method this gateway does not serve: the caller learns that it does
            # not (UNIMPLEMENTED) only with a valid token, so the API cannot be
            # mapped by probing names without one.
            refusal = self.check(method, handler_call_details.invocation_metadata, scope_checked=False)
            if refusal is None:
                return None
            self.refused += 1
            log.info("refused %s (not served): %s", method[:200], refusal.reason)
            return admission.refusing_any(refusal)
        refusal, token = self.authorize(method, handler_call_details.invocation_metadata)
        if refusal is None:
            # The servicer learns who called from this token (caller_name), not from a
            # second look-up a reload of the file could answer differently.
            if token is None:
                return handler
            return with_identity(handler, Identity(name=token.name, tenant=token.tenant))
        self.refused += 1
        log.info("refused %s: %s", method, refusal.reason)
        return admission.refusing(handler, refusal)
