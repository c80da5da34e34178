"""The internal contract: every request/reply method on the bus, declared once.

A ``Method`` names its envelope kind, its request type and its reply type. Callers
send through it (``rpc.Requester.call(contract.STORE_GET, request)`` returns a
``GetTasksReply``, typed) and responders serve it (``rpc.serve(contract.STORE_GET,
handler)``), so mypy rejects a caller or a handler that pairs the wrong types, and a
responder refuses at start-up a route that does not match this table or a handler
whose annotations disagree with it (``check_handler``).

Adding a method is one line here (and its ``Kind`` in envelope.proto) plus its handler,
and a line in ``SENDERS``: which roles may send it (core.roles), to whom.
The messages that are not request/reply (streams, PAIR dispatches, announcements)
are declared in ``STREAMS``.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar

from google.protobuf.message import Message

from taskyard.bus.v1 import (
    counters_pb2,
    dispatch_pb2,
    envelope_pb2,
    event_log_pb2,
    event_pb2,
    failures_pb2,
    flow_pb2,
    graph_pb2,
    lanes_pb2,
    leader_pb2,
    leases_pb2,
    logs_pb2,
    pools_pb2,
    queues_pb2,
    schedule_pb2,
    tasks_pb2,
    tenants_pb2,
)
from taskyard.core.roles import GATEWAY, RESULT_STORE, ROLES, SCHEDULER, WORKER_POOL

K = envelope_pb2
Rq = TypeVar("Rq", bound=Message)
Rp = TypeVar("Rp", bound=Message)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Method(Generic[Rq, Rp]):
    """One request/reply method: served by ``service``, carried under ``kind``."""

    service: str
    name: str
    kind: int
    request: type[Rq]
    reply: type[Rp]

    def __str__(self) -> str:
        return f"{self.service}.{self.name}"


def _method(service: str, name: str, kind: int, request: type[Rq], reply: type[Rp]) -> Method[Rq, Rp]:
    return Method(service=service, name=name, kind=kind, request=request, reply=reply)


STORE = "result-store"
LANE = "scheduler lane"
REGISTRATION = "scheduler registration"

# --- a scheduler's lanes (one REQ/REP port per priority) -------------------------
SUBMIT = _method(LANE, "Submit", K.KIND_SUBMIT, dispatch_pb2.SubmitRequest, dispatch_pb2.SubmitReply)
SCHEDULE_TRIGGER = _method(
    LANE,
    "TriggerSchedule",
    K.KIND_SCHEDULE_TRIGGER,
    schedule_pb2.FireSchedulesRequest,
    schedule_pb2.FireSchedulesReply,
)

FLOW_GATES = _method(LANE, "FlowGates", K.KIND_FLOW_GATES, flow_pb2.FlowGatesRequest, flow_pb2.FlowGatesReply)

# --- a scheduler's registration port ------------------------------------------------
REGISTER = _method(
    REGISTRATION, "Register", K.KIND_REGISTER, dispatch_pb2.Register, dispatch_pb2.RegisterReply
)

# --- the result-store: tasks ----------------------------------------------------------
STORE_INSERT = _method(
    STORE, "InsertTasks", K.KIND_STORE_INSERT, tasks_pb2.InsertTasksRequest, tasks_pb2.InsertTasksReply
)
STORE_GET = _method(STORE, "GetTasks", K.KIND_STORE_GET, tasks_pb2.GetTasksRequest, tasks_pb2.GetTasksReply)
STORE_LIST = _method(
    STORE, "ListTasks", K.KIND_STORE_LIST, tasks_pb2.ListTasksRequest, tasks_pb2.ListTasksReply
)
STORE_LEASE = _method(
    STORE, "LeaseTasks", K.KIND_STORE_LEASE, leases_pb2.LeaseTasksRequest, leases_pb2.LeaseTasksReply
)
STORE_REPORT = _method(STORE, "Report", K.KIND_STORE_REPORT, leases_pb2.ReportRequest, leases_pb2.ReportReply)
STORE_RENEW = _method(
    STORE, "RenewLeases", K.KIND_STORE_RENEW, leases_pb2.RenewLeasesRequest, leases_pb2.RenewLeasesReply
)
STORE_RESCUE = _method(STORE, "Rescue", K.KIND_STORE_RESCUE, leases_pb2.RescueRequest, leases_pb2.RescueReply)
STORE_CANCEL = _method(
    STORE, "CancelTasks", K.KIND_STORE_CANCEL, tasks_pb2.CancelTasksRequest, tasks_pb2.CancelTasksReply
)
STORE_LOAD_QUEUED = _method(
    STORE, "LoadQueued", K.KIND_STORE_LOAD_QUEUED, lanes_pb2.LoadQueuedRequest, lanes_pb2.LoadQueuedReply
)
STORE_PROMOTE_DUE = _method(
    STORE, "PromoteDue", K.KIND_STORE_PROMOTE_DUE, lanes_pb2.PromoteDueRequest, lanes_pb2.PromoteDueReply
)
STORE_HEARTBEAT = _method(
    STORE, "Heartbeat", K.KIND_STORE_HEARTBEAT, pools_pb2.HeartbeatRequest, pools_pb2.HeartbeatReply
)
STORE_TASK_NAMES = _method(
    STORE, "TaskNames", K.KIND_STORE_TASK_NAMES, pools_pb2.TaskNamesRequest, pools_pb2.TaskNamesReply
)
# TaskNamesRequest.max_age_ms of a gateway's readiness probe: the declared names the
# store holds already, read from the database only when it holds none; a store
# that cannot commit refuses it with STORE_NOT_READY. An older store reads every
# declared name for it (any max_age_ms <= 0).
TASK_NAMES_HELD = -1
STORE_NOT_READY = "STORE_NOT_READY"
STORE_TREE = _method(STORE, "TaskTree", K.KIND_STORE_TREE, graph_pb2.TaskTreeRequest, graph_pb2.TaskTreeReply)

# --- the result-store: supervision, recovery, time --------------------------------------
STORE_COUNTERS = _method(
    STORE, "Counters", K.KIND_STORE_COUNTERS, counters_pb2.CountersRequest, counters_pb2.CountersReply
)
STORE_RECONCILE = _method(
    STORE, "Reconcile", K.KIND_STORE_RECONCILE, leases_pb2.ReconcileRequest, leases_pb2.ReconcileReply
)
STORE_LOAD_DUE = _method(
    STORE, "LoadDue", K.KIND_STORE_LOAD_DUE, lanes_pb2.LoadDueRequest, lanes_pb2.LoadDueReply
)
STORE_FAILURES = _method(
    STORE, "GetFailures", K.KIND_STORE_FAILURES, tasks_pb2.GetFailuresRequest, tasks_pb2.GetFailuresReply
)
STORE_EXPLAIN = _method(
    STORE, "ExplainFacts", K.KIND_STORE_EXPLAIN, tasks_pb2.ExplainFactsRequest, tasks_pb2.ExplainFactsReply
)
# The schedulers' election: acquire, renew or release the leader's row (leader.proto).
STORE_LEADERSHIP = _method(
    STORE,
    "Leadership",
    K.KIND_STORE_LEADERSHIP,
    leader_pb2.LeadershipRequest,
    leader_pb2.LeadershipReply,
)

# --- the result-store: periodic schedules --------------------------------------------
STORE_SCHEDULE_SAVE = _method(
    STORE,
    "SaveSchedules",
    K.KIND_STORE_SCHEDULE_SAVE,
    schedule_pb2.SaveSchedulesRequest,
    schedule_pb2.SaveSchedulesReply,
)
STORE_SCHEDULE_READ = _method(
    STORE,
    "ReadSchedules",
    K.KIND_STORE_SCHEDULE_READ,
    schedule_pb2.ReadSchedulesRequest,
    schedule_pb2.ReadSchedulesReply,
)
STORE_SCHEDULE_CHANGE = _method(
    STORE,
    "ChangeSchedule",
    K.KIND_STORE_SCHEDULE_CHANGE,
    schedule_pb2.ChangeScheduleRequest,
    schedule_pb2.ChangeScheduleReply,
)
STORE_SCHEDULE_FIRE = _method(
    STORE,
    "FireSchedules",
    K.KIND_STORE_SCHEDULE_FIRE,
    schedule_pb2.FireSchedulesRequest,
    schedule_pb2.FireSchedulesReply,
)

# --- the result-store: logs and queue operations --------------------------------------
STORE_LOGS = _method(STORE, "WriteLogs", K.KIND_STORE_LOGS, logs_pb2.LogBatch, logs_pb2.LogBatchReply)
STORE_GET_LOGS = _method(
    STORE, "GetLogs", K.KIND_STORE_GET_LOGS, logs_pb2.GetLogsRequest, logs_pb2.GetLogsReply
)
STORE_QUEUE_OP = _method(
    STORE, "QueueOp", K.KIND_STORE_QUEUE_OP, queues_pb2.QueueOpRequest, queues_pb2.QueueOpReply
)
STORE_QUEUE_STATUS = _method(
    STORE,
    "QueueStatus",
    K.KIND_STORE_QUEUE_STATUS,
    queues_pb2.QueueStatusRequest,
    queues_pb2.QueueStatusReply,
)
STORE_SERVERS = _method(
    STORE, "Servers", K.KIND_STORE_SERVERS, pools_pb2.ServersRequest, pools_pb2.ServersReply
)

# --- the result-store: the durable event log (WatchEvents) ---------------------------------
STORE_READ_EVENTS = _method(
    STORE,
    "ReadEvents",
    K.KIND_STORE_READ_EVENTS,
    event_log_pb2.ReadEventsRequest,
    event_log_pb2.ReadEventsReply,
)
STORE_SUMMARIZE_EVENTS = _method(
    STORE,
    "SummarizeEvents",
    K.KIND_STORE_SUMMARIZE_EVENTS,
    event_log_pb2.SummarizeEventsRequest,
    event_log_pb2.SummarizeEventsReply,
)

# --- the result-store: flow control (limits, fairness weights) -------------------------
STORE_LIMITS = _method(
    STORE, "ReadLimits", K.KIND_STORE_LIMITS, flow_pb2.ReadLimitsRequest, flow_pb2.ReadLimitsReply
)
STORE_LIMIT_CHANGE = _method(
    STORE, "ChangeLimit", K.KIND_STORE_LIMIT_CHANGE, flow_pb2.ChangeLimitRequest, flow_pb2.ChangeLimitReply
)
STORE_LEASED_FLOW = _method(
    STORE, "LeasedFlow", K.KIND_STORE_LEASED_FLOW, flow_pb2.LeasedFlowRequest, flow_pb2.LeasedFlowReply
)
# The leading scheduler's circuit breakers that opened or closed, for the event log.
STORE_BREAKER_EVENTS = _method(
    STORE,
    "BreakerEvents",
    K.KIND_STORE_BREAKER_EVENTS,
    flow_pb2.BreakerEventsRequest,
    flow_pb2.BreakerEventsReply,
)
# Failed attempts the leader's breakers counted as an outage's: refunded, fenced by its term.
STORE_BREAKER_REFUNDS = _method(
    STORE,
    "BreakerRefunds",
    K.KIND_STORE_BREAKER_REFUNDS,
    flow_pb2.BreakerRefundsRequest,
    flow_pb2.BreakerRefundsReply,
)

# --- the result-store: dead letters and redrives ----------------------------------------
F = failures_pb2
STORE_FAILURE_GROUPS = _method(
    STORE, "FailureGroups", K.KIND_STORE_FAILURE_GROUPS, F.FailureGroupsRequest, F.FailureGroupsReply
)
STORE_DEAD_LETTERS = _method(
    STORE, "DeadLetters", K.KIND_STORE_DEAD_LETTERS, F.DeadLettersRequest, F.DeadLettersReply
)
STORE_PURGE_DEAD_LETTERS = _method(
    STORE,
    "PurgeDeadLetters",
    K.KIND_STORE_PURGE_DEAD_LETTERS,
    F.PurgeDeadLettersRequest,
    F.PurgeDeadLettersReply,
)
STORE_REDRIVE_CREATE = _method(
    STORE, "CreateRedrive", K.KIND_STORE_REDRIVE_CREATE, F.CreateRedriveRequest, F.CreateRedriveReply
)
STORE_REDRIVE_CONTROL = _method(
    STORE, "RedriveControl", K.KIND_STORE_REDRIVE_CONTROL, F.RedriveControlRequest, F.RedriveControlReply
)
STORE_REDRIVE_LIST = _method(
    STORE, "RedriveList", K.KIND_STORE_REDRIVE_LIST, F.RedriveListRequest, F.RedriveListReply
)
STORE_REDRIVE_STEP = _method(
    STORE, "RedriveStep", K.KIND_STORE_REDRIVE_STEP, F.RedriveStepRequest, F.RedriveStepReply
)
STORE_REDRIVES_ACTIVE = _method(
    STORE, "ActiveRedrives", K.KIND_STORE_REDRIVES_ACTIVE, F.ActiveRedrivesRequest, F.ActiveRedrivesReply
)

# --- the result-store: tenants ----------------------------------------------------------
T = tenants_pb2
STORE_TENANTS = _method(STORE, "Tenants", K.KIND_STORE_TENANTS, T.ReadTenantsRequest, T.ReadTenantsReply)
STORE_TENANT_CHANGE = _method(
    STORE, "ChangeTenant", K.KIND_STORE_TENANT_CHANGE, T.ChangeTenantRequest, T.ChangeTenantReply
)

_DECLARED = [v for v in dict(globals()).values() if isinstance(v, Method)]
METHODS: Mapping[int, Method[Any, Any]] = {m.kind: m for m in _DECLARED}

# The messages that are not request/reply, by kind: what each carries.
STREAMS: Mapping[int, type[Message]] = {
    K.KIND_ANNOUNCE: dispatch_pb2.Announcement,  # BUS discovery
    K.KIND_DISPATCH: dispatch_pb2.Dispatch,  # leased attempts, to a pool
    K.KIND_POOL_REPORT: dispatch_pb2.PoolReport,  # a pool's slot notices
    K.KIND_SURVEY: dispatch_pb2.Survey,  # SURVEYOR -> RESPONDENT (answered by a SurveyReply)
    K.KIND_EVENTS: event_pb2.EventBatch,  # the store's PUB, after COMMIT
    K.KIND_GRAPH_RELEASED: graph_pb2.ReleasedTasks,  # dependents released, on the events stream
    K.KIND_GRAPH_RESOLVE: graph_pb2.ResolveRequest,  # the store's own writer, never on the wire
    K.KIND_STORE_LOSE_POOLS: pools_pb2.LosePoolsRequest,  # the store's own sweep, never on the wire
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
    SUBMIT.kind: _senders((GATEWAY, WORKER_POOL), _SCHEDULER),  # a pool's child tasks
    SCHEDULE_TRIGGER.kind: _senders((GATEWAY,), _SCHEDULER),
    FLOW_GATES.kind: _senders((GATEWAY,), _SCHEDULER),
    REGISTER.kind: _senders(_POOL, _SCHEDULER),
    # the result-store: tasks
    STORE_INSERT.kind: _senders(_SCHEDULER, _STORE),
    STORE_GET.kind: _senders(_BOTH, _STORE),
    STORE_LIST.kind: _senders(_BOTH, _STORE),
    STORE_LEASE.kind: _senders(_SCHEDULER, _STORE),
    STORE_REPORT.kind: _senders((SCHEDULER, WORKER_POOL), _STORE),
    STORE_RENEW.kind: _senders((SCHEDULER, WORKER_POOL), _STORE),
    STORE_RESCUE.kind: _senders(_SCHEDULER, _STORE),
    STORE_CANCEL.kind: _senders((GATEWAY,), _STORE),
    STORE_LOAD_QUEUED.kind: _senders(_SCHEDULER, _STORE),
    STORE_PROMOTE_DUE.kind: _senders(_SCHEDULER, _STORE),
    STORE_HEARTBEAT.kind: _senders(_POOL, _STORE),
    STORE_TASK_NAMES.kind: _senders((GATEWAY, SCHEDULER, WORKER_POOL), _STORE),
    STORE_TREE.kind: _senders(_BOTH, _STORE),
    # supervision, recovery, time
    STORE_COUNTERS.kind: _senders(_BOTH, _STORE),
    STORE_RECONCILE.kind: _senders((SCHEDULER, WORKER_POOL), _STORE),
    STORE_LOAD_DUE.kind: _senders(_SCHEDULER, _STORE),
    STORE_FAILURES.kind: _senders(_BOTH, _STORE),
    STORE_EXPLAIN.kind: _senders(_BOTH, _STORE),
    STORE_LEADERSHIP.kind: _senders(_SCHEDULER, _STORE),
    # periodic schedules (a pool saves the schedules its tasks declare)
    STORE_SCHEDULE_SAVE.kind: _senders((GATEWAY, WORKER_POOL), _STORE),
    STORE_SCHEDULE_READ.kind: _senders(_BOTH, _STORE),
    STORE_SCHEDULE_CHANGE.kind: _senders((GATEWAY,), _STORE),
    STORE_SCHEDULE_FIRE.kind: _senders(_SCHEDULER, _STORE),
    # logs and queue operations
    STORE_LOGS.kind: _senders(_POOL, _STORE),
    STORE_GET_LOGS.kind: _senders(_BOTH, _STORE),
    STORE_QUEUE_OP.kind: _senders((GATEWAY,), _STORE),
    STORE_QUEUE_STATUS.kind: _senders(_BOTH, _STORE),
    STORE_SERVERS.kind: _senders(_BOTH, _STORE),
    # the durable event log
    STORE_READ_EVENTS.kind: _senders(_BOTH, _STORE),
    STORE_SUMMARIZE_EVENTS.kind: _senders(_BOTH, _STORE),
    # flow control (a pool declares the limits its tasks name)
    STORE_LIMITS.kind: _senders(_BOTH, _STORE),
    STORE_LIMIT_CHANGE.kind: _senders((GATEWAY, WORKER_POOL), _STORE),
    STORE_LEASED_FLOW.kind: _senders(_SCHEDULER, _STORE),
    STORE_BREAKER_EVENTS.kind: _senders(_SCHEDULER, _STORE),
    STORE_BREAKER_REFUNDS.kind: _senders(_SCHEDULER, _STORE),
    # dead letters and redrives: the gateway reads and steers, the leader runs them
    STORE_FAILURE_GROUPS.kind: _senders(_BOTH, _STORE),
    STORE_DEAD_LETTERS.kind: _senders(_BOTH, _STORE),
    STORE_PURGE_DEAD_LETTERS.kind: _senders((GATEWAY,), _STORE),
    STORE_REDRIVE_CREATE.kind: _senders((GATEWAY,), _STORE),
    STORE_REDRIVE_CONTROL.kind: _senders(_BOTH, _STORE),
    STORE_REDRIVE_LIST.kind: _senders(_BOTH, _STORE),
    STORE_REDRIVE_STEP.kind: _senders(_SCHEDULER, _STORE),
    STORE_REDRIVES_ACTIVE.kind: _senders(_SCHEDULER, _STORE),
    # tenants: the gateway and the scheduler read them, the gateway changes them
    STORE_TENANTS.kind: _senders(_BOTH, _STORE),
    STORE_TENANT_CHANGE.kind: _senders((GATEWAY,), _STORE),
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
    """Every kind of the envelope has exactly one declaration, and a line in SENDERS
    naming only known roles, a method's receiver being the role that serves it."""
    declared = [m.kind for m in _DECLARED] + list(STREAMS)
    kinds = [v for v in K.Kind.values() if v != K.KIND_UNSPECIFIED]
    missing = sorted(set(kinds) - set(declared))
    if missing or len(declared) != len(set(declared)):
        names = [K.Kind.Name(k) for k in missing]
        raise TypeError(f"bus contract: kinds declared twice or not at all: {names}")
    unlisted = sorted(set(kinds) ^ set(SENDERS))
    if unlisted:
        raise TypeError(f"bus contract: kinds without senders: {[K.Kind.Name(k) for k in unlisted]}")
    for kind, senders in SENDERS.items():
        if not (senders.by | senders.to) <= set(ROLES):
            raise TypeError(f"bus contract: {K.Kind.Name(kind)} names an unknown role")
        method = METHODS.get(kind)
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
