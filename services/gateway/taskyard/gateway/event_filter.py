"""What a WatchEvents stream carries: the request's filters, checked per event,
and the caller's tenant (a tenant's stream carries its own events only)."""

from __future__ import annotations

import dataclasses

from taskyard.v1 import event_service_pb2 as pub

# The suite's own events and the tenants' changes: for operators over every tenant only.
OPERATOR_KINDS: frozenset[int] = frozenset(
    {pub.EVENT_KIND_TENANT, pub.EVENT_KIND_POOL, pub.EVENT_KIND_WORKER}
)
TENANT_KINDS: frozenset[int] = frozenset(
    k for k in pub.EventKind.values() if k != pub.EVENT_KIND_UNSPECIFIED and k not in OPERATOR_KINDS
)
# No event has it: the kinds of a tenant's stream that asked for operators' kinds only.
_NO_KIND: frozenset[int] = frozenset({pub.EVENT_KIND_UNSPECIFIED})


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class EventFilter:
    """Every filter that is set must match; values within one are alternatives.

    A task-only filter (states, task ids, root ids, task names) passes only task
    events; queue names match task events of the queue and the queue's own events."""

    kinds: frozenset[int] = frozenset()
    queues: frozenset[str] = frozenset()
    task_names: frozenset[str] = frozenset()
    states: frozenset[int] = frozenset()
    task_ids: frozenset[str] = frozenset()
    root_ids: frozenset[str] = frozenset()
    # Only this tenant's events (None: every tenant's, an operator's stream).
    tenant: str | None = None

    @classmethod
    def of(cls, req: pub.WatchEventsRequest, tenant: str | None = None) -> EventFilter:
        kinds: frozenset[int] = frozenset(k for k in req.kinds if k != pub.EVENT_KIND_UNSPECIFIED)
        if tenant is not None:
            kinds = (kinds or TENANT_KINDS) - OPERATOR_KINDS or _NO_KIND
        return cls(
            kinds=kinds,
            tenant=tenant,
            queues=frozenset(req.queues),
            task_names=frozenset(req.task_names),
            states=frozenset(req.states),
            task_ids=frozenset(req.task_ids),
            root_ids=frozenset(req.root_ids),
        )

    @property
    def everything(self) -> bool:
        return self.tenant is None and not (
            self.kinds or self.queues or self.task_names or self.states or self.task_ids or self.root_ids
        )

    def matches(self, ev: pub.Event) -> bool:
        if self.tenant is not None and ev.tenant != self.tenant:
            return False
        if self.kinds and ev.kind not in self.kinds:
            return False
        if self.queues and ev.queue not in self.queues:
            return False
        if self.task_names and ev.task_name not in self.task_names:
            return False
        if self.states and (ev.kind != pub.EVENT_KIND_TASK or ev.state not in self.states):
            return False
        if self.task_ids and ev.task_id not in self.task_ids:
            return False
        return not self.root_ids or ev.root_id in self.root_ids
