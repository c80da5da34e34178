import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from taskyard.v1 import task_pb2 as _task_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class WorkRequest(_message.Message):
    __slots__ = ("hello", "started", "heartbeat", "outcome", "logs", "progress", "drain", "reports")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    LOGS_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    DRAIN_FIELD_NUMBER: _ClassVar[int]
    REPORTS_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    started: Started
    heartbeat: Heartbeat
    outcome: Outcome
    logs: LogLines
    progress: Progress
    drain: Drain
    reports: Reports
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., started: _Optional[_Union[Started, _Mapping]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ..., outcome: _Optional[_Union[Outcome, _Mapping]] = ..., logs: _Optional[_Union[LogLines, _Mapping]] = ..., progress: _Optional[_Union[Progress, _Mapping]] = ..., drain: _Optional[_Union[Drain, _Mapping]] = ..., reports: _Optional[_Union[Reports, _Mapping]] = ...) -> None: ...

class WorkResponse(_message.Message):
    __slots__ = ("welcome", "attempts", "cancel", "revoke", "refused")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    CANCEL_FIELD_NUMBER: _ClassVar[int]
    REVOKE_FIELD_NUMBER: _ClassVar[int]
    REFUSED_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    attempts: Attempts
    cancel: Cancel
    revoke: Revoke
    refused: Refused
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., attempts: _Optional[_Union[Attempts, _Mapping]] = ..., cancel: _Optional[_Union[Cancel, _Mapping]] = ..., revoke: _Optional[_Union[Revoke, _Mapping]] = ..., refused: _Optional[_Union[Refused, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("worker_name", "slots", "tasks", "sdk")
    WORKER_NAME_FIELD_NUMBER: _ClassVar[int]
    SLOTS_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    SDK_FIELD_NUMBER: _ClassVar[int]
    worker_name: str
    slots: int
    tasks: _containers.RepeatedCompositeFieldContainer[TaskDeclaration]
    sdk: str
    def __init__(self, worker_name: _Optional[str] = ..., slots: _Optional[int] = ..., tasks: _Optional[_Iterable[_Union[TaskDeclaration, _Mapping]]] = ..., sdk: _Optional[str] = ...) -> None: ...

class TaskDeclaration(_message.Message):
    __slots__ = ("name", "timeout", "max_retries", "rate_limit", "concurrency", "limit_key")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    MAX_RETRIES_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_KEY_FIELD_NUMBER: _ClassVar[int]
    name: str
    timeout: _duration_pb2.Duration
    max_retries: int
    rate_limit: str
    concurrency: int
    limit_key: str
    def __init__(self, name: _Optional[str] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., max_retries: _Optional[int] = ..., rate_limit: _Optional[str] = ..., concurrency: _Optional[int] = ..., limit_key: _Optional[str] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("worker_id", "heartbeat_interval", "max_message_bytes", "max_result_bytes")
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    MAX_MESSAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_RESULT_BYTES_FIELD_NUMBER: _ClassVar[int]
    worker_id: str
    heartbeat_interval: _duration_pb2.Duration
    max_message_bytes: int
    max_result_bytes: int
    def __init__(self, worker_id: _Optional[str] = ..., heartbeat_interval: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., max_message_bytes: _Optional[int] = ..., max_result_bytes: _Optional[int] = ...) -> None: ...

class Attempts(_message.Message):
    __slots__ = ("attempts",)
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    attempts: _containers.RepeatedCompositeFieldContainer[Attempt]
    def __init__(self, attempts: _Optional[_Iterable[_Union[Attempt, _Mapping]]] = ...) -> None: ...

class Attempt(_message.Message):
    __slots__ = ("task_id", "name", "args", "kwargs", "attempt", "lease_token", "deadline", "trace_headers", "priority", "queue", "labels", "parent_id", "root_id", "tenant", "retries_left")
    class TraceHeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    KWARGS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    TRACE_HEADERS_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    ROOT_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    RETRIES_LEFT_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    name: str
    args: _struct_pb2.ListValue
    kwargs: _struct_pb2.Struct
    attempt: int
    lease_token: str
    deadline: _timestamp_pb2.Timestamp
    trace_headers: _containers.ScalarMap[str, str]
    priority: _task_pb2.Priority
    queue: str
    labels: _containers.ScalarMap[str, str]
    parent_id: str
    root_id: str
    tenant: str
    retries_left: int
    def __init__(self, task_id: _Optional[str] = ..., name: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.ListValue, _Mapping]] = ..., kwargs: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., attempt: _Optional[int] = ..., lease_token: _Optional[str] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., trace_headers: _Optional[_Mapping[str, str]] = ..., priority: _Optional[_Union[_task_pb2.Priority, str]] = ..., queue: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ..., parent_id: _Optional[str] = ..., root_id: _Optional[str] = ..., tenant: _Optional[str] = ..., retries_left: _Optional[int] = ...) -> None: ...

class AttemptRef(_message.Message):
    __slots__ = ("task_id", "attempt", "lease_token")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    attempt: int
    lease_token: str
    def __init__(self, task_id: _Optional[str] = ..., attempt: _Optional[int] = ..., lease_token: _Optional[str] = ...) -> None: ...

class Started(_message.Message):
    __slots__ = ("ref",)
    REF_FIELD_NUMBER: _ClassVar[int]
    ref: AttemptRef
    def __init__(self, ref: _Optional[_Union[AttemptRef, _Mapping]] = ...) -> None: ...

class Heartbeat(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Outcome(_message.Message):
    __slots__ = ("ref", "result", "failure", "cancelled")
    REF_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    ref: AttemptRef
    result: _struct_pb2.Value
    failure: Failure
    cancelled: bool
    def __init__(self, ref: _Optional[_Union[AttemptRef, _Mapping]] = ..., result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., failure: _Optional[_Union[Failure, _Mapping]] = ..., cancelled: bool = ...) -> None: ...

class Reports(_message.Message):
    __slots__ = ("started", "outcomes")
    STARTED_FIELD_NUMBER: _ClassVar[int]
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    started: _containers.RepeatedCompositeFieldContainer[Started]
    outcomes: _containers.RepeatedCompositeFieldContainer[Outcome]
    def __init__(self, started: _Optional[_Iterable[_Union[Started, _Mapping]]] = ..., outcomes: _Optional[_Iterable[_Union[Outcome, _Mapping]]] = ...) -> None: ...

class Failure(_message.Message):
    __slots__ = ("type", "message", "traceback", "retryable", "retry_delay")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TRACEBACK_FIELD_NUMBER: _ClassVar[int]
    RETRYABLE_FIELD_NUMBER: _ClassVar[int]
    RETRY_DELAY_FIELD_NUMBER: _ClassVar[int]
    type: str
    message: str
    traceback: str
    retryable: bool
    retry_delay: _duration_pb2.Duration
    def __init__(self, type: _Optional[str] = ..., message: _Optional[str] = ..., traceback: _Optional[str] = ..., retryable: bool = ..., retry_delay: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class LogLines(_message.Message):
    __slots__ = ("ref", "lines")
    REF_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    ref: AttemptRef
    lines: _containers.RepeatedCompositeFieldContainer[LogLine]
    def __init__(self, ref: _Optional[_Union[AttemptRef, _Mapping]] = ..., lines: _Optional[_Iterable[_Union[LogLine, _Mapping]]] = ...) -> None: ...

class LogLine(_message.Message):
    __slots__ = ("time", "level", "message")
    TIME_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    time: _timestamp_pb2.Timestamp
    level: str
    message: str
    def __init__(self, time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., level: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class Progress(_message.Message):
    __slots__ = ("ref", "fraction", "message")
    REF_FIELD_NUMBER: _ClassVar[int]
    FRACTION_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    ref: AttemptRef
    fraction: float
    message: str
    def __init__(self, ref: _Optional[_Union[AttemptRef, _Mapping]] = ..., fraction: _Optional[float] = ..., message: _Optional[str] = ...) -> None: ...

class Drain(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Cancel(_message.Message):
    __slots__ = ("ref", "reason", "grace")
    REF_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    GRACE_FIELD_NUMBER: _ClassVar[int]
    ref: AttemptRef
    reason: str
    grace: _duration_pb2.Duration
    def __init__(self, ref: _Optional[_Union[AttemptRef, _Mapping]] = ..., reason: _Optional[str] = ..., grace: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class Revoke(_message.Message):
    __slots__ = ("ref", "reason")
    REF_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ref: AttemptRef
    reason: str
    def __init__(self, ref: _Optional[_Union[AttemptRef, _Mapping]] = ..., reason: _Optional[str] = ...) -> None: ...

class Refused(_message.Message):
    __slots__ = ("ref", "reason")
    REF_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ref: AttemptRef
    reason: str
    def __init__(self, ref: _Optional[_Union[AttemptRef, _Mapping]] = ..., reason: _Optional[str] = ...) -> None: ...
