import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from taskyard.v1 import limit_pb2 as _limit_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TaskState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TASK_STATE_UNSPECIFIED: _ClassVar[TaskState]
    TASK_STATE_PENDING: _ClassVar[TaskState]
    TASK_STATE_QUEUED: _ClassVar[TaskState]
    TASK_STATE_SCHEDULED: _ClassVar[TaskState]
    TASK_STATE_ASSIGNED: _ClassVar[TaskState]
    TASK_STATE_RUNNING: _ClassVar[TaskState]
    TASK_STATE_SUCCESS: _ClassVar[TaskState]
    TASK_STATE_FAILURE: _ClassVar[TaskState]
    TASK_STATE_RETRYING: _ClassVar[TaskState]
    TASK_STATE_CANCELLED: _ClassVar[TaskState]

class Priority(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PRIORITY_UNSPECIFIED: _ClassVar[Priority]
    PRIORITY_CRITICAL: _ClassVar[Priority]
    PRIORITY_HIGH: _ClassVar[Priority]
    PRIORITY_NORMAL: _ClassVar[Priority]
    PRIORITY_LOW: _ClassVar[Priority]

class DeadLetterReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DEAD_LETTER_REASON_UNSPECIFIED: _ClassVar[DeadLetterReason]
    DEAD_LETTER_REASON_RETRIES_EXHAUSTED: _ClassVar[DeadLetterReason]
    DEAD_LETTER_REASON_QUARANTINED: _ClassVar[DeadLetterReason]
    DEAD_LETTER_REASON_NOT_RETRYABLE: _ClassVar[DeadLetterReason]

class CancelStep(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CANCEL_STEP_UNSPECIFIED: _ClassVar[CancelStep]
    CANCEL_STEP_NOT_STARTED: _ClassVar[CancelStep]
    CANCEL_STEP_FLAG: _ClassVar[CancelStep]
    CANCEL_STEP_ASYNCIO: _ClassVar[CancelStep]
    CANCEL_STEP_KILL: _ClassVar[CancelStep]
TASK_STATE_UNSPECIFIED: TaskState
TASK_STATE_PENDING: TaskState
TASK_STATE_QUEUED: TaskState
TASK_STATE_SCHEDULED: TaskState
TASK_STATE_ASSIGNED: TaskState
TASK_STATE_RUNNING: TaskState
TASK_STATE_SUCCESS: TaskState
TASK_STATE_FAILURE: TaskState
TASK_STATE_RETRYING: TaskState
TASK_STATE_CANCELLED: TaskState
PRIORITY_UNSPECIFIED: Priority
PRIORITY_CRITICAL: Priority
PRIORITY_HIGH: Priority
PRIORITY_NORMAL: Priority
PRIORITY_LOW: Priority
DEAD_LETTER_REASON_UNSPECIFIED: DeadLetterReason
DEAD_LETTER_REASON_RETRIES_EXHAUSTED: DeadLetterReason
DEAD_LETTER_REASON_QUARANTINED: DeadLetterReason
DEAD_LETTER_REASON_NOT_RETRYABLE: DeadLetterReason
CANCEL_STEP_UNSPECIFIED: CancelStep
CANCEL_STEP_NOT_STARTED: CancelStep
CANCEL_STEP_FLAG: CancelStep
CANCEL_STEP_ASYNCIO: CancelStep
CANCEL_STEP_KILL: CancelStep

class TaskSpec(_message.Message):
    __slots__ = ("name", "args", "kwargs", "priority", "queue", "timeout", "max_retries", "request_id", "parent_id", "labels", "eta", "countdown", "depends_on", "idempotency_key", "idempotency_window", "limits", "fairness_key")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    KWARGS_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    MAX_RETRIES_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    ETA_FIELD_NUMBER: _ClassVar[int]
    COUNTDOWN_FIELD_NUMBER: _ClassVar[int]
    DEPENDS_ON_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_WINDOW_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    FAIRNESS_KEY_FIELD_NUMBER: _ClassVar[int]
    name: str
    args: _struct_pb2.ListValue
    kwargs: _struct_pb2.Struct
    priority: Priority
    queue: str
    timeout: _duration_pb2.Duration
    max_retries: int
    request_id: str
    parent_id: str
    labels: _containers.ScalarMap[str, str]
    eta: _timestamp_pb2.Timestamp
    countdown: _duration_pb2.Duration
    depends_on: _containers.RepeatedScalarFieldContainer[str]
    idempotency_key: str
    idempotency_window: _duration_pb2.Duration
    limits: _containers.RepeatedCompositeFieldContainer[_limit_pb2.LimitUse]
    fairness_key: str
    def __init__(self, name: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.ListValue, _Mapping]] = ..., kwargs: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., priority: _Optional[_Union[Priority, str]] = ..., queue: _Optional[str] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., max_retries: _Optional[int] = ..., request_id: _Optional[str] = ..., parent_id: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ..., eta: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., countdown: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., depends_on: _Optional[_Iterable[str]] = ..., idempotency_key: _Optional[str] = ..., idempotency_window: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., limits: _Optional[_Iterable[_Union[_limit_pb2.LimitUse, _Mapping]]] = ..., fairness_key: _Optional[str] = ...) -> None: ...

class TaskFailure(_message.Message):
    __slots__ = ("type", "message", "traceback", "attempt", "failed_at", "retry_at", "group_id", "redrive_id", "throttled", "retry_after", "refunded")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TRACEBACK_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    FAILED_AT_FIELD_NUMBER: _ClassVar[int]
    RETRY_AT_FIELD_NUMBER: _ClassVar[int]
    GROUP_ID_FIELD_NUMBER: _ClassVar[int]
    REDRIVE_ID_FIELD_NUMBER: _ClassVar[int]
    THROTTLED_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_FIELD_NUMBER: _ClassVar[int]
    REFUNDED_FIELD_NUMBER: _ClassVar[int]
    type: str
    message: str
    traceback: str
    attempt: int
    failed_at: _timestamp_pb2.Timestamp
    retry_at: _timestamp_pb2.Timestamp
    group_id: str
    redrive_id: str
    throttled: bool
    retry_after: _duration_pb2.Duration
    refunded: bool
    def __init__(self, type: _Optional[str] = ..., message: _Optional[str] = ..., traceback: _Optional[str] = ..., attempt: _Optional[int] = ..., failed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., retry_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., group_id: _Optional[str] = ..., redrive_id: _Optional[str] = ..., throttled: bool = ..., retry_after: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., refunded: bool = ...) -> None: ...

class Task(_message.Message):
    __slots__ = ("id", "name", "args", "kwargs", "priority", "queue", "timeout", "max_retries", "request_id", "parent_id", "root_id", "labels", "state", "attempt", "result", "failure", "created_at", "started_at", "finished_at", "updated_at", "worker_id", "cancel_requested", "run_at", "depends_on", "idempotency_key", "context", "cancel_reason", "cancel_step", "resume_requested", "failures", "schedule_id", "rescues", "uncharged_attempts", "late_reports", "late_attempt", "omitted", "trace_id", "limits", "fairness_key", "dead_letter_reason", "redrive_id", "redriven_from_attempt", "tenant", "earlier_failures")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class OmittedEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    KWARGS_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    MAX_RETRIES_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    ROOT_ID_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    CANCEL_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    RUN_AT_FIELD_NUMBER: _ClassVar[int]
    DEPENDS_ON_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    CANCEL_REASON_FIELD_NUMBER: _ClassVar[int]
    CANCEL_STEP_FIELD_NUMBER: _ClassVar[int]
    RESUME_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    RESCUES_FIELD_NUMBER: _ClassVar[int]
    UNCHARGED_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    LATE_REPORTS_FIELD_NUMBER: _ClassVar[int]
    LATE_ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    OMITTED_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    FAIRNESS_KEY_FIELD_NUMBER: _ClassVar[int]
    DEAD_LETTER_REASON_FIELD_NUMBER: _ClassVar[int]
    REDRIVE_ID_FIELD_NUMBER: _ClassVar[int]
    REDRIVEN_FROM_ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    EARLIER_FAILURES_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    args: _struct_pb2.ListValue
    kwargs: _struct_pb2.Struct
    priority: Priority
    queue: str
    timeout: _duration_pb2.Duration
    max_retries: int
    request_id: str
    parent_id: str
    root_id: str
    labels: _containers.ScalarMap[str, str]
    state: TaskState
    attempt: int
    result: _struct_pb2.Value
    failure: TaskFailure
    created_at: _timestamp_pb2.Timestamp
    started_at: _timestamp_pb2.Timestamp
    finished_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    worker_id: str
    cancel_requested: bool
    run_at: _timestamp_pb2.Timestamp
    depends_on: _containers.RepeatedScalarFieldContainer[str]
    idempotency_key: str
    context: _struct_pb2.Struct
    cancel_reason: str
    cancel_step: CancelStep
    resume_requested: bool
    failures: _containers.RepeatedCompositeFieldContainer[TaskFailure]
    schedule_id: str
    rescues: int
    uncharged_attempts: int
    late_reports: int
    late_attempt: int
    omitted: _containers.ScalarMap[str, str]
    trace_id: str
    limits: _containers.RepeatedCompositeFieldContainer[_limit_pb2.LimitUse]
    fairness_key: str
    dead_letter_reason: DeadLetterReason
    redrive_id: str
    redriven_from_attempt: int
    tenant: str
    earlier_failures: int
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.ListValue, _Mapping]] = ..., kwargs: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., priority: _Optional[_Union[Priority, str]] = ..., queue: _Optional[str] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., max_retries: _Optional[int] = ..., request_id: _Optional[str] = ..., parent_id: _Optional[str] = ..., root_id: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ..., state: _Optional[_Union[TaskState, str]] = ..., attempt: _Optional[int] = ..., result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., failure: _Optional[_Union[TaskFailure, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., worker_id: _Optional[str] = ..., cancel_requested: bool = ..., run_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., depends_on: _Optional[_Iterable[str]] = ..., idempotency_key: _Optional[str] = ..., context: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., cancel_reason: _Optional[str] = ..., cancel_step: _Optional[_Union[CancelStep, str]] = ..., resume_requested: bool = ..., failures: _Optional[_Iterable[_Union[TaskFailure, _Mapping]]] = ..., schedule_id: _Optional[str] = ..., rescues: _Optional[int] = ..., uncharged_attempts: _Optional[int] = ..., late_reports: _Optional[int] = ..., late_attempt: _Optional[int] = ..., omitted: _Optional[_Mapping[str, str]] = ..., trace_id: _Optional[str] = ..., limits: _Optional[_Iterable[_Union[_limit_pb2.LimitUse, _Mapping]]] = ..., fairness_key: _Optional[str] = ..., dead_letter_reason: _Optional[_Union[DeadLetterReason, str]] = ..., redrive_id: _Optional[str] = ..., redriven_from_attempt: _Optional[int] = ..., tenant: _Optional[str] = ..., earlier_failures: _Optional[int] = ...) -> None: ...

class TaskLog(_message.Message):
    __slots__ = ("offset", "type", "message", "created_at", "attempt", "trace_id")
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    offset: int
    type: str
    message: str
    created_at: _timestamp_pb2.Timestamp
    attempt: int
    trace_id: str
    def __init__(self, offset: _Optional[int] = ..., type: _Optional[str] = ..., message: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., attempt: _Optional[int] = ..., trace_id: _Optional[str] = ...) -> None: ...
