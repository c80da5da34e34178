from taskyard.bus.v1 import supervision_pb2 as _supervision_pb2
from taskyard.bus.v1 import task_record_pb2 as _task_record_pb2
from taskyard.v1 import task_pb2 as _task_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class InsertTasksRequest(_message.Message):
    __slots__ = ("tasks", "pool_id", "lease_ms", "leases")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_MS_FIELD_NUMBER: _ClassVar[int]
    LEASES_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.TaskRecord]
    pool_id: str
    lease_ms: int
    leases: _containers.RepeatedCompositeFieldContainer[Lease]
    def __init__(self, tasks: _Optional[_Iterable[_Union[_task_record_pb2.TaskRecord, _Mapping]]] = ..., pool_id: _Optional[str] = ..., lease_ms: _Optional[int] = ..., leases: _Optional[_Iterable[_Union[Lease, _Mapping]]] = ...) -> None: ...

class InsertedTask(_message.Message):
    __slots__ = ("id", "state", "created", "priority", "name", "queue")
    ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    id: str
    state: _task_pb2.TaskState
    created: bool
    priority: _task_pb2.Priority
    name: str
    queue: str
    def __init__(self, id: _Optional[str] = ..., state: _Optional[_Union[_task_pb2.TaskState, str]] = ..., created: bool = ..., priority: _Optional[_Union[_task_pb2.Priority, str]] = ..., name: _Optional[str] = ..., queue: _Optional[str] = ...) -> None: ...

class InsertTasksReply(_message.Message):
    __slots__ = ("tasks", "leased")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    LEASED_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[InsertedTask]
    leased: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.TaskRecord]
    def __init__(self, tasks: _Optional[_Iterable[_Union[InsertedTask, _Mapping]]] = ..., leased: _Optional[_Iterable[_Union[_task_record_pb2.TaskRecord, _Mapping]]] = ...) -> None: ...

class GetTasksRequest(_message.Message):
    __slots__ = ("ids",)
    IDS_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, ids: _Optional[_Iterable[str]] = ...) -> None: ...

class GetTasksReply(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.TaskRecord]
    def __init__(self, tasks: _Optional[_Iterable[_Union[_task_record_pb2.TaskRecord, _Mapping]]] = ...) -> None: ...

class ListTasksRequest(_message.Message):
    __slots__ = ("states", "name", "queue", "priority", "limit", "cursor")
    STATES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    states: _containers.RepeatedScalarFieldContainer[_task_pb2.TaskState]
    name: str
    queue: str
    priority: _task_pb2.Priority
    limit: int
    cursor: str
    def __init__(self, states: _Optional[_Iterable[_Union[_task_pb2.TaskState, str]]] = ..., name: _Optional[str] = ..., queue: _Optional[str] = ..., priority: _Optional[_Union[_task_pb2.Priority, str]] = ..., limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class ListTasksReply(_message.Message):
    __slots__ = ("tasks", "next_cursor")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.TaskRecord]
    next_cursor: str
    def __init__(self, tasks: _Optional[_Iterable[_Union[_task_record_pb2.TaskRecord, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class LeaseTasksRequest(_message.Message):
    __slots__ = ("pool_id", "lease_ms", "leases")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_MS_FIELD_NUMBER: _ClassVar[int]
    LEASES_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    lease_ms: int
    leases: _containers.RepeatedCompositeFieldContainer[Lease]
    def __init__(self, pool_id: _Optional[str] = ..., lease_ms: _Optional[int] = ..., leases: _Optional[_Iterable[_Union[Lease, _Mapping]]] = ...) -> None: ...

class Lease(_message.Message):
    __slots__ = ("task_id", "lease_token")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    lease_token: str
    def __init__(self, task_id: _Optional[str] = ..., lease_token: _Optional[str] = ...) -> None: ...

class LeaseTasksReply(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.TaskRecord]
    def __init__(self, tasks: _Optional[_Iterable[_Union[_task_record_pb2.TaskRecord, _Mapping]]] = ...) -> None: ...

class ReportRequest(_message.Message):
    __slots__ = ("started", "completed", "released", "died")
    STARTED_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    RELEASED_FIELD_NUMBER: _ClassVar[int]
    DIED_FIELD_NUMBER: _ClassVar[int]
    started: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.AttemptRef]
    completed: _containers.RepeatedCompositeFieldContainer[Completion]
    released: _containers.RepeatedCompositeFieldContainer[Release]
    died: _containers.RepeatedCompositeFieldContainer[Death]
    def __init__(self, started: _Optional[_Iterable[_Union[_task_record_pb2.AttemptRef, _Mapping]]] = ..., completed: _Optional[_Iterable[_Union[Completion, _Mapping]]] = ..., released: _Optional[_Iterable[_Union[Release, _Mapping]]] = ..., died: _Optional[_Iterable[_Union[Death, _Mapping]]] = ...) -> None: ...

class Completion(_message.Message):
    __slots__ = ("ref", "success", "result_json", "failure", "retryable", "retry_delay_ms", "started_at_us", "max_retries", "cancel_step", "hops")
    REF_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    RETRYABLE_FIELD_NUMBER: _ClassVar[int]
    RETRY_DELAY_MS_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_US_FIELD_NUMBER: _ClassVar[int]
    MAX_RETRIES_FIELD_NUMBER: _ClassVar[int]
    CANCEL_STEP_FIELD_NUMBER: _ClassVar[int]
    HOPS_FIELD_NUMBER: _ClassVar[int]
    ref: _task_record_pb2.AttemptRef
    success: bool
    result_json: bytes
    failure: _task_pb2.TaskFailure
    retryable: bool
    retry_delay_ms: int
    started_at_us: int
    max_retries: int
    cancel_step: _task_pb2.CancelStep
    hops: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.HopStamp]
    def __init__(self, ref: _Optional[_Union[_task_record_pb2.AttemptRef, _Mapping]] = ..., success: bool = ..., result_json: _Optional[bytes] = ..., failure: _Optional[_Union[_task_pb2.TaskFailure, _Mapping]] = ..., retryable: bool = ..., retry_delay_ms: _Optional[int] = ..., started_at_us: _Optional[int] = ..., max_retries: _Optional[int] = ..., cancel_step: _Optional[_Union[_task_pb2.CancelStep, str]] = ..., hops: _Optional[_Iterable[_Union[_task_record_pb2.HopStamp, _Mapping]]] = ...) -> None: ...

class Release(_message.Message):
    __slots__ = ("ref", "resume_requested")
    REF_FIELD_NUMBER: _ClassVar[int]
    RESUME_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    ref: _task_record_pb2.AttemptRef
    resume_requested: bool
    def __init__(self, ref: _Optional[_Union[_task_record_pb2.AttemptRef, _Mapping]] = ..., resume_requested: bool = ...) -> None: ...

class Death(_message.Message):
    __slots__ = ("ref", "started", "retry_delay_ms", "max_retries", "cancel_step", "max_rescues")
    REF_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    RETRY_DELAY_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_RETRIES_FIELD_NUMBER: _ClassVar[int]
    CANCEL_STEP_FIELD_NUMBER: _ClassVar[int]
    MAX_RESCUES_FIELD_NUMBER: _ClassVar[int]
    ref: _task_record_pb2.AttemptRef
    started: bool
    retry_delay_ms: int
    max_retries: int
    cancel_step: _task_pb2.CancelStep
    max_rescues: int
    def __init__(self, ref: _Optional[_Union[_task_record_pb2.AttemptRef, _Mapping]] = ..., started: bool = ..., retry_delay_ms: _Optional[int] = ..., max_retries: _Optional[int] = ..., cancel_step: _Optional[_Union[_task_pb2.CancelStep, str]] = ..., max_rescues: _Optional[int] = ...) -> None: ...

class ReportReply(_message.Message):
    __slots__ = ("refused", "started", "completed", "released", "died")
    REFUSED_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    RELEASED_FIELD_NUMBER: _ClassVar[int]
    DIED_FIELD_NUMBER: _ClassVar[int]
    refused: int
    started: _containers.RepeatedScalarFieldContainer[str]
    completed: _containers.RepeatedScalarFieldContainer[str]
    released: _containers.RepeatedScalarFieldContainer[str]
    died: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, refused: _Optional[int] = ..., started: _Optional[_Iterable[str]] = ..., completed: _Optional[_Iterable[str]] = ..., released: _Optional[_Iterable[str]] = ..., died: _Optional[_Iterable[str]] = ...) -> None: ...

class RenewLeasesRequest(_message.Message):
    __slots__ = ("refs", "lease_ms")
    REFS_FIELD_NUMBER: _ClassVar[int]
    LEASE_MS_FIELD_NUMBER: _ClassVar[int]
    refs: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.AttemptRef]
    lease_ms: int
    def __init__(self, refs: _Optional[_Iterable[_Union[_task_record_pb2.AttemptRef, _Mapping]]] = ..., lease_ms: _Optional[int] = ...) -> None: ...

class RenewLeasesReply(_message.Message):
    __slots__ = ("lost", "cancel_requested")
    LOST_FIELD_NUMBER: _ClassVar[int]
    CANCEL_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    lost: _containers.RepeatedScalarFieldContainer[str]
    cancel_requested: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, lost: _Optional[_Iterable[str]] = ..., cancel_requested: _Optional[_Iterable[str]] = ...) -> None: ...

class RescueRequest(_message.Message):
    __slots__ = ("limit", "retry_delay_ms", "default_max_retries", "max_rescues")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    RETRY_DELAY_MS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_MAX_RETRIES_FIELD_NUMBER: _ClassVar[int]
    MAX_RESCUES_FIELD_NUMBER: _ClassVar[int]
    limit: int
    retry_delay_ms: int
    default_max_retries: int
    max_rescues: int
    def __init__(self, limit: _Optional[int] = ..., retry_delay_ms: _Optional[int] = ..., default_max_retries: _Optional[int] = ..., max_rescues: _Optional[int] = ...) -> None: ...

class RescueReply(_message.Message):
    __slots__ = ("requeued", "failed")
    REQUEUED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    requeued: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.TaskRecord]
    failed: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.TaskRecord]
    def __init__(self, requeued: _Optional[_Iterable[_Union[_task_record_pb2.TaskRecord, _Mapping]]] = ..., failed: _Optional[_Iterable[_Union[_task_record_pb2.TaskRecord, _Mapping]]] = ...) -> None: ...

class CancelTasksRequest(_message.Message):
    __slots__ = ("ids", "reason")
    IDS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    reason: str
    def __init__(self, ids: _Optional[_Iterable[str]] = ..., reason: _Optional[str] = ...) -> None: ...

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

class LoadQueuedRequest(_message.Message):
    __slots__ = ("limit", "cursor")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    limit: int
    cursor: str
    def __init__(self, limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class QueuedRef(_message.Message):
    __slots__ = ("id", "name", "priority", "queue", "created_at_us")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_US_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    priority: _task_pb2.Priority
    queue: str
    created_at_us: int
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., priority: _Optional[_Union[_task_pb2.Priority, str]] = ..., queue: _Optional[str] = ..., created_at_us: _Optional[int] = ...) -> None: ...

class LoadQueuedReply(_message.Message):
    __slots__ = ("tasks", "next_cursor")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[QueuedRef]
    next_cursor: str
    def __init__(self, tasks: _Optional[_Iterable[_Union[QueuedRef, _Mapping]]] = ..., next_cursor: _Optional[str] = ...) -> None: ...

class PromoteDueRequest(_message.Message):
    __slots__ = ("limit",)
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    limit: int
    def __init__(self, limit: _Optional[int] = ...) -> None: ...

class PromoteDueReply(_message.Message):
    __slots__ = ("tasks", "next_due_us")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    NEXT_DUE_US_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[QueuedRef]
    next_due_us: int
    def __init__(self, tasks: _Optional[_Iterable[_Union[QueuedRef, _Mapping]]] = ..., next_due_us: _Optional[int] = ...) -> None: ...

class HeartbeatRequest(_message.Message):
    __slots__ = ("pool_id", "server_name", "max_workers", "active_workers", "idle_workers", "running_tasks", "is_running", "task_names", "state", "rss_bytes", "capacity", "concurrency", "processes", "last_dispatch_at_us")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    SERVER_NAME_FIELD_NUMBER: _ClassVar[int]
    MAX_WORKERS_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_WORKERS_FIELD_NUMBER: _ClassVar[int]
    IDLE_WORKERS_FIELD_NUMBER: _ClassVar[int]
    RUNNING_TASKS_FIELD_NUMBER: _ClassVar[int]
    IS_RUNNING_FIELD_NUMBER: _ClassVar[int]
    TASK_NAMES_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    RSS_BYTES_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    PROCESSES_FIELD_NUMBER: _ClassVar[int]
    LAST_DISPATCH_AT_US_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    server_name: str
    max_workers: int
    active_workers: int
    idle_workers: int
    running_tasks: int
    is_running: bool
    task_names: _containers.RepeatedScalarFieldContainer[str]
    state: str
    rss_bytes: int
    capacity: int
    concurrency: int
    processes: _containers.RepeatedCompositeFieldContainer[_supervision_pb2.WorkerProcess]
    last_dispatch_at_us: int
    def __init__(self, pool_id: _Optional[str] = ..., server_name: _Optional[str] = ..., max_workers: _Optional[int] = ..., active_workers: _Optional[int] = ..., idle_workers: _Optional[int] = ..., running_tasks: _Optional[int] = ..., is_running: bool = ..., task_names: _Optional[_Iterable[str]] = ..., state: _Optional[str] = ..., rss_bytes: _Optional[int] = ..., capacity: _Optional[int] = ..., concurrency: _Optional[int] = ..., processes: _Optional[_Iterable[_Union[_supervision_pb2.WorkerProcess, _Mapping]]] = ..., last_dispatch_at_us: _Optional[int] = ...) -> None: ...

class HeartbeatReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class TaskNamesRequest(_message.Message):
    __slots__ = ("max_age_ms",)
    MAX_AGE_MS_FIELD_NUMBER: _ClassVar[int]
    max_age_ms: int
    def __init__(self, max_age_ms: _Optional[int] = ...) -> None: ...

class TaskNamesReply(_message.Message):
    __slots__ = ("names",)
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...
