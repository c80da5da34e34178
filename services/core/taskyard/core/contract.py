"""The internal contract: every request/reply method on the bus, declared once.

The protos declare it (taskyard/bus/v1/contract.proto: a service per endpoint or
stream family, each method's envelope kind as its option) and ``make gen`` writes
it as ``taskyard.bus.v1.contract``, whose declarations this module re-exports: a
``Method`` names its envelope kind, its request type and its reply type. Callers
send through it (``rpc.Requester.call(contract.STORE_GET, request)`` returns a
``GetTasksReply``, typed) and responders serve it (``rpc.serve(contract.STORE_GET,
handler)``), so mypy rejects a caller or a handler that pairs the wrong types, and a
responder refuses at start-up a route that does not match this table or a handler
whose annotations disagree with it (``check_handler``).

The messages that are not request/reply (streams, PAIR dispatches, announcements)
are ``Stream`` objects (``contract.DISPATCH.open(raw)``, ``contract.EVENTS.encode(batch)``),
so a call site names one declaration, not a kind and a type that must agree.

Adding a method is an rpc in the bus protos (and its ``Kind`` in envelope.proto),
``make gen``, its handler, and a line in ``SENDERS`` here: which roles may send it
(core.roles), to whom. This module holds the policy; the declarations are the protos'.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from google.protobuf.message import Message

from taskyard.bus.v1 import contract as generated
from taskyard.bus.v1 import envelope_pb2

# Every declaration, by its kind's name (SUBMIT, STORE_GET, DISPATCH ...).
from taskyard.bus.v1.contract import *  # noqa: F403
from taskyard.bus.v1.contract import Method as Method
from taskyard.bus.v1.contract import Stream as Stream
from taskyard.core.roles import GATEWAY, RESULT_STORE, ROLES, SCHEDULER, WORKER_POOL

K = envelope_pb2

# The endpoints that serve methods (``Method.service``, the protos' ``endpoint``).
STORE = "result-store"
LANE = "scheduler lane"
REGISTRATION = "scheduler registration"

# TaskNamesRequest.max_age_ms of a gateway's readiness probe: the declared names the
# store holds already, read from the database only when it holds none; a store
# that cannot commit refuses it with STORE_NOT_READY. An older store reads every
# declared name for it (any max_age_ms <= 0).
TASK_NAMES_HELD = -1
STORE_NOT_READY = "STORE_NOT_READY"

# The request/reply methods on the wire, by kind.
METHODS: Mapping[int, Method[Any, Any]] = generated.METHODS
# The result-store's own writes (its committer's requests), never on the wire.
LOCAL: Mapping[int, Method[Any, Any]] = generated.LOCAL
# The messages that are not request/reply, by kind: what each carries (the store's
# own writes carry their request).
STREAMS: Mapping[int, type[Message]] = {
    **{kind: stream.message for kind, stream in generated.STREAMS.items()},
    **{kind: method.request for kind, method in generated.LOCAL.items()},
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Senders:
    """Which roles may send a kind (``by``), and the roles that receive it (``to``)."""

    by: frozenset[str]
    to: frozenset[str]


def _senders(by: Iterable[str], to: Iterable[str]) -> Senders:
    return Senders(by=frozenset(by), to=frozenset(to))


_STORE = (RESULT_STORE,)
_SCHEDULER = (SCHEDULER,)
_POOL = (WORKER_POOL,)
_BOTH = (GATEWAY, SCHEDULER)  # reads both make

# Least privilege on the bus: who may send each kind, to whom (the roles of core.roles,
# bound to keys by the keyring, core.seal). A receiver refuses a request whose signer's
# role is not in ``by`` (core.gate), as it refuses an unauthenticated one. A worker pool
# runs its users' code: it reports, renews, logs and heartbeats its own attempts, submits
# child tasks through a scheduler and declares its names, schedules and limits; it never
# inserts, leases, rescues or cancels.
SENDERS: Mapping[int, Senders] = {
    # a scheduler's lanes and registration port
    K.KIND_SUBMIT: _senders((GATEWAY, WORKER_POOL), _SCHEDULER),  # a pool's child tasks
    K.KIND_SCHEDULE_TRIGGER: _senders((GATEWAY,), _SCHEDULER),
    K.KIND_FLOW_GATES: _senders((GATEWAY,), _SCHEDULER),
    K.KIND_REGISTER: _senders(_POOL, _SCHEDULER),
    # the result-store: tasks
    K.KIND_STORE_INSERT: _senders(_SCHEDULER, _STORE),
    K.KIND_STORE_GET: _senders(_BOTH, _STORE),
    K.KIND_STORE_LIST: _senders(_BOTH, _STORE),
    K.KIND_STORE_LEASE: _senders(_SCHEDULER, _STORE),
    K.KIND_STORE_REPORT: _senders((SCHEDULER, WORKER_POOL), _STORE),
    K.KIND_STORE_RENEW: _senders((SCHEDULER, WORKER_POOL), _STORE),
    K.KIND_STORE_RESCUE: _senders(_SCHEDULER, _STORE),
    K.KIND_STORE_CANCEL: _senders((GATEWAY,), _STORE),
    K.KIND_STORE_LOAD_QUEUED: _senders(_SCHEDULER, _STORE),
    K.KIND_STORE_PROMOTE_DUE: _senders(_SCHEDULER, _STORE),
    K.KIND_STORE_HEARTBEAT: _senders(_POOL, _STORE),
    K.KIND_STORE_TASK_NAMES: _senders((GATEWAY, SCHEDULER, WORKER_POOL), _STORE),
    K.KIND_STORE_TREE: _senders(_BOTH, _STORE),
    # supervision, recovery, time
    K.KIND_STORE_COUNTERS: _senders(_BOTH, _STORE),
    K.KIND_STORE_RECONCILE: _senders((SCHEDULER, WORKER_POOL), _STORE),
    K.KIND_STORE_LOAD_DUE: _senders(_SCHEDULER, _STORE),
    K.KIND_STORE_FAILURES: _senders(_BOTH, _STORE),
    K.KIND_STORE_EXPLAIN: _senders(_BOTH, _STORE),
    K.KIND_STORE_LEADERSHIP: _senders(_SCHEDULER, _STORE),
    # periodic schedules (a pool saves the schedules its tasks declare)
    K.KIND_STORE_SCHEDULE_SAVE: _senders((GATEWAY, WORKER_POOL), _STORE),
    K.KIND_STORE_SCHEDULE_READ: _senders(_BOTH, _STORE),
    K.KIND_STORE_SCHEDULE_CHANGE: _senders((GATEWAY,), _STORE),
    K.KIND_STORE_SCHEDULE_FIRE: _senders(_SCHEDULER, _STORE),
    # logs and queue operations
    K.KIND_STORE_LOGS: _senders(_POOL, _STORE),
    K.KIND_STORE_GET_LOGS: _senders(_BOTH, _STORE),
    K.KIND_STORE_QUEUE_OP: _senders((GATEWAY,), _STORE),
    K.KIND_STORE_QUEUE_STATUS: _senders(_BOTH, _STORE),
    K.KIND_STORE_SERVERS: _senders(_BOTH, _STORE),
    # the durable event log
    K.KIND_STORE_READ_EVENTS: _senders(_BOTH, _STORE),
    K.KIND_STORE_SUMMARIZE_EVENTS: _senders(_BOTH, _STORE),
    # flow control (a pool declares the limits its tasks name)
    K.KIND_STORE_LIMITS: _senders(_BOTH, _STORE),
    K.KIND_STORE_LIMIT_CHANGE: _senders((GATEWAY, WORKER_POOL), _STORE),
    K.KIND_STORE_LEASED_FLOW: _senders(_SCHEDULER, _STORE),
    K.KIND_STORE_BREAKER_EVENTS: _senders(_SCHEDULER, _STORE),
    K.KIND_STORE_BREAKER_REFUNDS: _senders(_SCHEDULER, _STORE),
    # dead letters and redrives: the gateway reads and steers, the leader runs them
    K.KIND_STORE_FAILURE_GROUPS: _senders(_BOTH, _STORE),
    K.KIND_STORE_DEAD_LETTERS: _senders(_BOTH, _STORE),
    K.KIND_STORE_PURGE_DEAD_LETTERS: _senders((GATEWAY,), _STORE),
    K.KIND_STORE_REDRIVE_CREATE: _senders((GATEWAY,), _STORE),
    K.KIND_STORE_REDRIVE_CONTROL: _senders(_BOTH, _STORE),
    K.KIND_STORE_REDRIVE_LIST: _senders(_BOTH, _STORE),
    K.KIND_STORE_REDRIVE_STEP: _senders(_SCHEDULER, _STORE),
    K.KIND_STORE_REDRIVES_ACTIVE: _senders(_SCHEDULER, _STORE),
    # tenants: the gateway and the scheduler read them, the gateway changes them
    K.KIND_STORE_TENANTS: _senders(_BOTH, _STORE),
    K.KIND_STORE_TENANT_CHANGE: _senders((GATEWAY,), _STORE),
    # streams
    K.KIND_ANNOUNCE: _senders(ROLES, ROLES),
    K.KIND_DISPATCH: _senders((SCHEDULER, RESULT_STORE), _POOL),
    K.KIND_POOL_REPORT: _senders(_POOL, _SCHEDULER),
    # The scheduler's survey, and a pool's answer under the same kind.
    K.KIND_SURVEY: _senders((SCHEDULER, WORKER_POOL), (SCHEDULER, WORKER_POOL)),
    K.KIND_EVENTS: _senders(_STORE, (GATEWAY, SCHEDULER, WORKER_POOL)),
    K.KIND_GRAPH_RELEASED: _senders(_STORE, (SCHEDULER,)),
    # The store's own work items: never on the wire, so nobody may send them.
    K.KIND_GRAPH_RESOLVE: _senders((), _STORE),
    K.KIND_STORE_LOSE_POOLS: _senders((), _STORE),
}


# The other roles' keys each role holds, to verify what they send it: its requests'
# senders, the store's events and the discovery hub's relays. A reply comes under its
# request's own key, and what goes to worker pools alone (a scheduler's dispatches and
# surveys, the store's stream to the pools, the hub's relays) under the pools' key
# (``seal.Seal.for_audience``), so a pool holds no other role's key. HMAC keys are
# shared secrets: a process that verifies a role's messages could also sign as that
# role, so this is also what each role could pretend to be (docs/security.md, "Keys
# per role").
KEYS_HELD: Mapping[str, frozenset[str]] = {
    GATEWAY: frozenset({RESULT_STORE, WORKER_POOL}),
    SCHEDULER: frozenset({GATEWAY, RESULT_STORE, WORKER_POOL}),
    RESULT_STORE: frozenset({GATEWAY, SCHEDULER, WORKER_POOL}),
    WORKER_POOL: frozenset(),
}
# The kinds that reach worker pools alone, sealed under their own role's key.
TO_POOLS_UNDER_THEIR_KEY = frozenset({K.KIND_DISPATCH, K.KIND_SURVEY, K.KIND_EVENTS, K.KIND_ANNOUNCE})


def may_send(role: str, kind: int) -> bool:
    """Whether a message of ``kind`` signed by a key of ``role`` is accepted. A key
    bound to no role ("", keys written before roles) may send anything; a kind
    missing from the table, nothing."""
    if not role:
        return True
    senders = SENDERS.get(kind)
    return senders is not None and role in senders.by


def senders_to(role: str, kinds: Iterable[int]) -> dict[int, frozenset[str]]:
    """The roles that may send each of ``kinds`` to a receiver of ``role`` (a kind
    ``role`` does not receive: none), for its gate (``core.gate.Gate(senders=...)``)."""
    table: dict[int, frozenset[str]] = {}
    for kind in kinds:
        senders = SENDERS.get(kind)
        table[kind] = senders.by if senders is not None and role in senders.to else frozenset()
    return table


def _check_table() -> None:
    """Every kind of the envelope has exactly one declaration (the generator refuses
    protos that say otherwise; a module older than envelope_pb2 is refused here), and
    a line in SENDERS naming only known roles, a method's receiver being the role
    that serves it."""
    declared = [*METHODS, *STREAMS]
    kinds = [v for v in K.Kind.values() if v != K.KIND_UNSPECIFIED]
    if sorted(declared) != sorted(kinds) or list(generated.KINDS) != sorted(kinds):
        names = [K.Kind.Name(k) for k in sorted(set(kinds) ^ set(declared))]
        raise TypeError(f"bus contract: kinds declared twice or not at all: {names} (make gen)")
    unlisted = sorted(set(kinds) ^ set(SENDERS))
    if unlisted:
        raise TypeError(f"bus contract: kinds without senders: {[K.Kind.Name(k) for k in unlisted]}")
    for kind, senders in SENDERS.items():
        if not (senders.by | senders.to) <= set(ROLES):
            raise TypeError(f"bus contract: {K.Kind.Name(kind)} names an unknown role")
        method = METHODS.get(kind) or LOCAL.get(kind)
        if method is not None and senders.to != {SERVED_BY[method.service]}:
            raise TypeError(f"bus contract: {method} is served by {SERVED_BY[method.service]}")


# The role of the service that serves each method's ``service``.
SERVED_BY: Mapping[str, str] = {STORE: RESULT_STORE, LANE: SCHEDULER, REGISTRATION: SCHEDULER}

_check_table()


def check_handler(method: Method[Any, Any], handler: Callable[..., Any], *, raw: bool = False) -> None:
    """Refuse a handler whose annotations name other types than ``method`` declares.

    A handler without annotations, or annotated with a type variable or the base
    ``Message``, passes (mypy checks those at their call site)."""
    target = inspect.unwrap(handler)
    try:
        hints = typing.get_type_hints(target)
    except Exception:  # unresolvable annotations: nothing to compare
        return
    params = [p for p in inspect.signature(target).parameters.values() if p.name != "self"]
    if params and not raw:
        got = hints.get(params[0].name)
        if _concrete(got) and got is not method.request:
            raise TypeError(
                f"{method}: handler takes {got.__name__}, the method's request is {method.request.__name__}"
            )
    returned = hints.get("return")
    if _concrete(returned) and returned is not method.reply:
        raise TypeError(
            f"{method}: handler returns {returned.__name__}, the method's reply is {method.reply.__name__}"
        )


def _concrete(annotation: object) -> typing.TypeGuard[type[Message]]:
    """A particular message type (not the base class, a type variable or a union)."""
    return isinstance(annotation, type) and issubclass(annotation, Message) and annotation is not Message
