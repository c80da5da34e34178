from taskyard.v1 import limit_pb2 as _limit_pb2
from taskyard.v1 import task_pb2 as _task_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TaskRecord(_message.Message):
    __slots__ = ("id", "name", "args_json", "kwargs_json", "priority", "queue", "timeout_ms", "max_retries", "request_id", "parent_id", "root_id", "labels", "state", "attempt", "result_json", "failure", "created_at_us", "started_at_us", "finished_at_us", "updated_at_us", "worker_id", "cancel_requested", "run_at_us", "trace_headers", "lease_token", "pool_id", "resume_requested", "depends_on", "idempotency_key", "context_json", "cancel_reason", "cancel_step", "rescues", "schedule_id", "idempotency_expires_at_us", "uncharged_attempts", "late_reports", "late_attempt", "hops", "flow", "dead_letter_reason", "redrive_id", "redriven_from_attempt", "tenant")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class TraceHeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGS_JSON_FIELD_NUMBER: _ClassVar[int]
    KWARGS_JSON_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_RETRIES_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    ROOT_ID_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_US_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_US_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_US_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_US_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    CANCEL_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    RUN_AT_US_FIELD_NUMBER: _ClassVar[int]
    TRACE_HEADERS_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    RESUME_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    DEPENDS_ON_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_JSON_FIELD_NUMBER: _ClassVar[int]
    CANCEL_REASON_FIELD_NUMBER: _ClassVar[int]
    CANCEL_STEP_FIELD_NUMBER: _ClassVar[int]
    RESCUES_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_EXPIRES_AT_US_FIELD_NUMBER: _ClassVar[int]
    UNCHARGED_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    LATE_REPORTS_FIELD_NUMBER: _ClassVar[int]
    LATE_ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    HOPS_FIELD_NUMBER: _ClassVar[int]
    FLOW_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTER_REASON_FIELD_NUMBER: _ClassVar[int]
    REDRIVE_ID_FIELD_NUMBER: _ClassVar[int]
    REDRIVEN_FROM_ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    args_json: bytes
    kwargs_json: bytes
    priority: _task_pb2.Priority
    queue: str
    timeout_ms: int
    max_retries: int
    request_id: str
    parent_id: str
    root_id: str
    labels: _containers.ScalarMap[str, str]
    state: _task_pb2.TaskState
    attempt: int
    result_json: bytes
    failure: _task_pb2.TaskFailure
    created_at_us: int
    started_at_us: int
    finished_at_us: int
    updated_at_us: int
    worker_id: str
    cancel_requested: bool
    run_at_us: int
    trace_headers: _containers.ScalarMap[str, str]
    lease_token: str
    pool_id: str
    resume_requested: bool
    depends_on: _containers.RepeatedScalarFieldContainer[str]
    idempotency_key: str
    context_json: bytes
    cancel_reason: str
    cancel_step: _task_pb2.CancelStep
    rescues: int
    schedule_id: str
    idempotency_expires_at_us: int
    uncharged_attempts: int
    late_reports: int
    late_attempt: int
    hops: _containers.RepeatedCompositeFieldContainer[HopStamp]
    flow: FlowControl
    dead_letter_reason: _task_pb2.DeadLetterReason
    redrive_id: str
    redriven_from_attempt: int
    tenant: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., args_json: _Optional[bytes] = ..., kwargs_json: _Optional[bytes] = ..., priority: _Optional[_Union[_task_pb2.Priority, str]] = ..., queue: _Optional[str] = ..., timeout_ms: _Optional[int] = ..., max_retries: _Optional[int] = ..., request_id: _Optional[str] = ..., parent_id: _Optional[str] = ..., root_id: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ..., state: _Optional[_Union[_task_pb2.TaskState, str]] = ..., attempt: _Optional[int] = ..., result_json: _Optional[bytes] = ..., failure: _Optional[_Union[_task_pb2.TaskFailure, _Mapping]] = ..., created_at_us: _Optional[int] = ..., started_at_us: _Optional[int] = ..., finished_at_us: _Optional[int] = ..., updated_at_us: _Optional[int] = ..., worker_id: _Optional[str] = ..., cancel_requested: bool = ..., run_at_us: _Optional[int] = ..., trace_headers: _Optional[_Mapping[str, str]] = ..., lease_token: _Optional[str] = ..., pool_id: _Optional[str] = ..., resume_requested: bool = ..., depends_on: _Optional[_Iterable[str]] = ..., idempotency_key: _Optional[str] = ..., context_json: _Optional[bytes] = ..., cancel_reason: _Optional[str] = ..., cancel_step: _Optional[_Union[_task_pb2.CancelStep, str]] = ..., rescues: _Optional[int] = ..., schedule_id: _Optional[str] = ..., idempotency_expires_at_us: _Optional[int] = ..., uncharged_attempts: _Optional[int] = ..., late_reports: _Optional[int] = ..., late_attempt: _Optional[int] = ..., hops: _Optional[_Iterable[_Union[HopStamp, _Mapping]]] = ..., flow: _Optional[_Union[FlowControl, _Mapping]] = ..., dead_letter_reason: _Optional[_Union[_task_pb2.DeadLetterReason, str]] = ..., redrive_id: _Optional[str] = ..., redriven_from_attempt: _Optional[int] = ..., tenant: _Optional[str] = ...) -> None: ...

class FlowControl(_message.Message):
    __slots__ = ("fairness_key", "uses", "declared")
    FAIRNESS_KEY_FIELD_NUMBER: _ClassVar[int]
    USES_FIELD_NUMBER: _ClassVar[int]
    DECLARED_FIELD_NUMBER: _ClassVar[int]
    fairness_key: str
    uses: _containers.RepeatedCompositeFieldContainer[_limit_pb2.LimitUse]
    declared: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, fairness_key: _Optional[str] = ..., uses: _Optional[_Iterable[_Union[_limit_pb2.LimitUse, _Mapping]]] = ..., declared: _Optional[_Iterable[str]] = ...) -> None: ...

class HopStamp(_message.Message):
    __slots__ = ("hop", "at_ns")
    HOP_FIELD_NUMBER: _ClassVar[int]
    AT_NS_FIELD_NUMBER: _ClassVar[int]
    hop: str
    at_ns: int
    def __init__(self, hop: _Optional[str] = ..., at_ns: _Optional[int] = ...) -> None: ...

class AttemptRef(_message.Message):
    __slots__ = ("task_id", "attempt", "lease_token", "at_us", "worker_id")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    AT_US_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    attempt: int
    lease_token: str
    at_us: int
    worker_id: str
    def __init__(self, task_id: _Optional[str] = ..., attempt: _Optional[int] = ..., lease_token: _Optional[str] = ..., at_us: _Optional[int] = ..., worker_id: _Optional[str] = ...) -> None: ...
