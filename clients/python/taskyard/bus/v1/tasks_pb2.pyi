from taskyard.bus.v1 import contract_pb2 as _contract_pb2
from taskyard.bus.v1 import leases_pb2 as _leases_pb2
from taskyard.bus.v1 import task_record_pb2 as _task_record_pb2
from taskyard.bus.v1 import tenants_pb2 as _tenants_pb2
from taskyard.v1 import task_pb2 as _task_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class InsertTasksRequest(_message.Message):
    __slots__ = ("tasks", "pool_id", "lease_ms", "leases", "lease_term")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_MS_FIELD_NUMBER: _ClassVar[int]
    LEASES_FIELD_NUMBER: _ClassVar[int]
    LEASE_TERM_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.TaskRecord]
    pool_id: str
    lease_ms: int
    leases: _containers.RepeatedCompositeFieldContainer[_leases_pb2.Lease]
    lease_term: int
    def __init__(self, tasks: _Optional[_Iterable[_Union[_task_record_pb2.TaskRecord, _Mapping]]] = ..., pool_id: _Optional[str] = ..., lease_ms: _Optional[int] = ..., leases: _Optional[_Iterable[_Union[_leases_pb2.Lease, _Mapping]]] = ..., lease_term: _Optional[int] = ...) -> None: ...

class InsertedTask(_message.Message):
    __slots__ = ("id", "state", "created", "priority", "name", "queue", "flow", "tenant")
    ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    FLOW_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    id: str
    state: _task_pb2.TaskState
    created: bool
    priority: _task_pb2.Priority
    name: str
    queue: str
    flow: _task_record_pb2.FlowControl
    tenant: str
    def __init__(self, id: _Optional[str] = ..., state: _Optional[_Union[_task_pb2.TaskState, str]] = ..., created: bool = ..., priority: _Optional[_Union[_task_pb2.Priority, str]] = ..., name: _Optional[str] = ..., queue: _Optional[str] = ..., flow: _Optional[_Union[_task_record_pb2.FlowControl, _Mapping]] = ..., tenant: _Optional[str] = ...) -> None: ...

class InsertTasksReply(_message.Message):
    __slots__ = ("tasks", "leased")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    LEASED_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[InsertedTask]
    leased: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.TaskRecord]
    def __init__(self, tasks: _Optional[_Iterable[_Union[InsertedTask, _Mapping]]] = ..., leased: _Optional[_Iterable[_Union[_task_record_pb2.TaskRecord, _Mapping]]] = ...) -> None: ...

class GetTasksRequest(_message.Message):
    __slots__ = ("ids", "scope")
    IDS_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    scope: _tenants_pb2.TenantScope
    def __init__(self, ids: _Optional[_Iterable[str]] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class GetTasksReply(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.TaskRecord]
    def __init__(self, tasks: _Optional[_Iterable[_Union[_task_record_pb2.TaskRecord, _Mapping]]] = ...) -> None: ...

class ListTasksRequest(_message.Message):
    __slots__ = ("states", "name", "queue", "priority", "limit", "cursor", "scope")
    STATES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    states: _containers.RepeatedScalarFieldContainer[_task_pb2.TaskState]
    name: str
    queue: str
    priority: _task_pb2.Priority
    limit: int
    cursor: str
    scope: _tenants_pb2.TenantScope
    def __init__(self, states: _Optional[_Iterable[_Union[_task_pb2.TaskState, str]]] = ..., name: _Optional[str] = ..., queue: _Optional[str] = ..., priority: _Optional[_Union[_task_pb2.Priority, str]] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class ListTasksReply(_message.Message):
    __slots__ = ("tasks", "next_cursor")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.TaskRecord]
    next_cursor: str
    def __init__(self, tasks: _Optional[_Iterable[_Union[_task_record_pb2.TaskRecord, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class CancelTasksRequest(_message.Message):
    __slots__ = ("ids", "reason", "scope")
    IDS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    reason: str
    scope: _tenants_pb2.TenantScope
    def __init__(self, ids: _Optional[_Iterable[str]] = ..., reason: _Optional[str] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class CancelOutcome(_message.Message):
    __slots__ = ("id", "cancelled", "flagged", "not_found", "already_final")
    ID_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    FLAGGED_FIELD_NUMBER: _ClassVar[int]
    NOT_FOUND_FIELD_NUMBER: _ClassVar[int]
    ALREADY_FINAL_FIELD_NUMBER: _ClassVar[int]
    id: str
    cancelled: bool
    flagged: bool
    not_found: bool
    already_final: bool
    def __init__(self, id: _Optional[str] = ..., cancelled: bool = ..., flagged: bool = ..., not_found: bool = ..., already_final: bool = ...) -> None: ...

class CancelTasksReply(_message.Message):
    __slots__ = ("outcomes", "tasks", "cancelled_children")
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_CHILDREN_FIELD_NUMBER: _ClassVar[int]
    outcomes: _containers.RepeatedCompositeFieldContainer[CancelOutcome]
    tasks: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.TaskRecord]
    cancelled_children: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, outcomes: _Optional[_Iterable[_Union[CancelOutcome, _Mapping]]] = ..., tasks: _Optional[_Iterable[_Union[_task_record_pb2.TaskRecord, _Mapping]]] = ..., cancelled_children: _Optional[_Iterable[str]] = ...) -> None: ...

class GetFailuresRequest(_message.Message):
    __slots__ = ("task_ids", "counts_only", "scope")
    TASK_IDS_FIELD_NUMBER: _ClassVar[int]
    COUNTS_ONLY_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    task_ids: _containers.RepeatedScalarFieldContainer[str]
    counts_only: bool
    scope: _tenants_pb2.TenantScope
    def __init__(self, task_ids: _Optional[_Iterable[str]] = ..., counts_only: bool = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class TaskFailures(_message.Message):
    __slots__ = ("task_id", "failures", "earlier", "refunded")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    EARLIER_FIELD_NUMBER: _ClassVar[int]
    REFUNDED_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    failures: _containers.RepeatedCompositeFieldContainer[_task_pb2.TaskFailure]
    earlier: int
    refunded: int
    def __init__(self, task_id: _Optional[str] = ..., failures: _Optional[_Iterable[_Union[_task_pb2.TaskFailure, _Mapping]]] = ..., earlier: _Optional[int] = ..., refunded: _Optional[int] = ...) -> None: ...

class GetFailuresReply(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[TaskFailures]
    def __init__(self, tasks: _Optional[_Iterable[_Union[TaskFailures, _Mapping]]] = ...) -> None: ...

class ExplainFactsRequest(_message.Message):
    __slots__ = ("task_id", "max_age_ms", "scope")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    MAX_AGE_MS_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    max_age_ms: int
    scope: _tenants_pb2.TenantScope
    def __init__(self, task_id: _Optional[str] = ..., max_age_ms: _Optional[int] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class ExplainFactsReply(_message.Message):
    __slots__ = ("found", "queue_paused", "pools", "capacity", "running", "depth_ahead", "waiting_on")
    FOUND_FIELD_NUMBER: _ClassVar[int]
    QUEUE_PAUSED_FIELD_NUMBER: _ClassVar[int]
    POOLS_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    DEPTH_AHEAD_FIELD_NUMBER: _ClassVar[int]
    WAITING_ON_FIELD_NUMBER: _ClassVar[int]
    found: bool
    queue_paused: bool
    pools: int
    capacity: int
    running: int
    depth_ahead: int
    waiting_on: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, found: bool = ..., queue_paused: bool = ..., pools: _Optional[int] = ..., capacity: _Optional[int] = ..., running: _Optional[int] = ..., depth_ahead: _Optional[int] = ..., waiting_on: _Optional[_Iterable[str]] = ...) -> None: ...
