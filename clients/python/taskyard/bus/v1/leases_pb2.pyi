from taskyard.bus.v1 import contract_pb2 as _contract_pb2
from taskyard.bus.v1 import lanes_pb2 as _lanes_pb2
from taskyard.bus.v1 import task_record_pb2 as _task_record_pb2
from taskyard.v1 import task_pb2 as _task_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LeaseTasksRequest(_message.Message):
    __slots__ = ("pool_id", "lease_ms", "leases", "term")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_MS_FIELD_NUMBER: _ClassVar[int]
    LEASES_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    lease_ms: int
    leases: _containers.RepeatedCompositeFieldContainer[Lease]
    term: int
    def __init__(self, pool_id: _Optional[str] = ..., lease_ms: _Optional[int] = ..., leases: _Optional[_Iterable[_Union[Lease, _Mapping]]] = ..., term: _Optional[int] = ...) -> None: ...

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
    __slots__ = ("ref", "success", "result_json", "failure", "retryable", "retry_delay_ms", "started_at_us", "max_retries", "cancel_step", "hops", "revoked")
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
    REVOKED_FIELD_NUMBER: _ClassVar[int]
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
    revoked: bool
    def __init__(self, ref: _Optional[_Union[_task_record_pb2.AttemptRef, _Mapping]] = ..., success: bool = ..., result_json: _Optional[bytes] = ..., failure: _Optional[_Union[_task_pb2.TaskFailure, _Mapping]] = ..., retryable: bool = ..., retry_delay_ms: _Optional[int] = ..., started_at_us: _Optional[int] = ..., max_retries: _Optional[int] = ..., cancel_step: _Optional[_Union[_task_pb2.CancelStep, str]] = ..., hops: _Optional[_Iterable[_Union[_task_record_pb2.HopStamp, _Mapping]]] = ..., revoked: bool = ...) -> None: ...

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

class ReconcileRequest(_message.Message):
    __slots__ = ("pool_ids", "held_tokens", "issued_before_ms_ago", "limit", "own_token_prefix", "term")
    POOL_IDS_FIELD_NUMBER: _ClassVar[int]
    HELD_TOKENS_FIELD_NUMBER: _ClassVar[int]
    ISSUED_BEFORE_MS_AGO_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    OWN_TOKEN_PREFIX_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    pool_ids: _containers.RepeatedScalarFieldContainer[str]
    held_tokens: _containers.RepeatedScalarFieldContainer[str]
    issued_before_ms_ago: int
    limit: int
    own_token_prefix: str
    term: int
    def __init__(self, pool_ids: _Optional[_Iterable[str]] = ..., held_tokens: _Optional[_Iterable[str]] = ..., issued_before_ms_ago: _Optional[int] = ..., limit: _Optional[int] = ..., own_token_prefix: _Optional[str] = ..., term: _Optional[int] = ...) -> None: ...

class ReconcileReply(_message.Message):
    __slots__ = ("released",)
    RELEASED_FIELD_NUMBER: _ClassVar[int]
    released: _containers.RepeatedCompositeFieldContainer[_lanes_pb2.QueuedRef]
    def __init__(self, released: _Optional[_Iterable[_Union[_lanes_pb2.QueuedRef, _Mapping]]] = ...) -> None: ...
