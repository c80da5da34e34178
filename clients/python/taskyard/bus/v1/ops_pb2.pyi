from taskyard.v1 import queue_service_pb2 as _queue_service_pb2
from taskyard.v1 import task_pb2 as _task_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class QueueOp(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    QUEUE_OP_UNSPECIFIED: _ClassVar[QueueOp]
    QUEUE_OP_PAUSE: _ClassVar[QueueOp]
    QUEUE_OP_RESUME: _ClassVar[QueueOp]
    QUEUE_OP_CLEAR: _ClassVar[QueueOp]
    QUEUE_OP_RETRY: _ClassVar[QueueOp]
    QUEUE_OP_PURGE: _ClassVar[QueueOp]
QUEUE_OP_UNSPECIFIED: QueueOp
QUEUE_OP_PAUSE: QueueOp
QUEUE_OP_RESUME: QueueOp
QUEUE_OP_CLEAR: QueueOp
QUEUE_OP_RETRY: QueueOp
QUEUE_OP_PURGE: QueueOp

class LogLine(_message.Message):
    __slots__ = ("task_id", "attempt", "at_us", "type", "message")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    AT_US_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    attempt: int
    at_us: int
    type: str
    message: str
    def __init__(self, task_id: _Optional[str] = ..., attempt: _Optional[int] = ..., at_us: _Optional[int] = ..., type: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class ContextUpdate(_message.Message):
    __slots__ = ("task_id", "attempt", "patch_json")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    PATCH_JSON_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    attempt: int
    patch_json: bytes
    def __init__(self, task_id: _Optional[str] = ..., attempt: _Optional[int] = ..., patch_json: _Optional[bytes] = ...) -> None: ...

class DroppedLines(_message.Message):
    __slots__ = ("task_id", "attempt", "count")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    attempt: int
    count: int
    def __init__(self, task_id: _Optional[str] = ..., attempt: _Optional[int] = ..., count: _Optional[int] = ...) -> None: ...

class LogBatch(_message.Message):
    __slots__ = ("lines", "context", "dropped")
    LINES_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    lines: _containers.RepeatedCompositeFieldContainer[LogLine]
    context: _containers.RepeatedCompositeFieldContainer[ContextUpdate]
    dropped: _containers.RepeatedCompositeFieldContainer[DroppedLines]
    def __init__(self, lines: _Optional[_Iterable[_Union[LogLine, _Mapping]]] = ..., context: _Optional[_Iterable[_Union[ContextUpdate, _Mapping]]] = ..., dropped: _Optional[_Iterable[_Union[DroppedLines, _Mapping]]] = ...) -> None: ...

class LogBatchReply(_message.Message):
    __slots__ = ("stored", "dropped")
    STORED_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    stored: int
    dropped: int
    def __init__(self, stored: _Optional[int] = ..., dropped: _Optional[int] = ...) -> None: ...

class GetLogsRequest(_message.Message):
    __slots__ = ("task_id", "from_offset", "limit")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_OFFSET_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    from_offset: int
    limit: int
    def __init__(self, task_id: _Optional[str] = ..., from_offset: _Optional[int] = ..., limit: _Optional[int] = ...) -> None: ...

class GetLogsReply(_message.Message):
    __slots__ = ("found", "logs", "next_offset", "final", "log_seq")
    FOUND_FIELD_NUMBER: _ClassVar[int]
    LOGS_FIELD_NUMBER: _ClassVar[int]
    NEXT_OFFSET_FIELD_NUMBER: _ClassVar[int]
    FINAL_FIELD_NUMBER: _ClassVar[int]
    LOG_SEQ_FIELD_NUMBER: _ClassVar[int]
    found: bool
    logs: _containers.RepeatedCompositeFieldContainer[_task_pb2.TaskLog]
    next_offset: int
    final: bool
    log_seq: int
    def __init__(self, found: bool = ..., logs: _Optional[_Iterable[_Union[_task_pb2.TaskLog, _Mapping]]] = ..., next_offset: _Optional[int] = ..., final: bool = ..., log_seq: _Optional[int] = ...) -> None: ...

class QueueOpRequest(_message.Message):
    __slots__ = ("op", "queue", "name", "ids", "limit", "older_than_us")
    OP_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    IDS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    OLDER_THAN_US_FIELD_NUMBER: _ClassVar[int]
    op: QueueOp
    queue: str
    name: str
    ids: _containers.RepeatedScalarFieldContainer[str]
    limit: int
    older_than_us: int
    def __init__(self, op: _Optional[_Union[QueueOp, str]] = ..., queue: _Optional[str] = ..., name: _Optional[str] = ..., ids: _Optional[_Iterable[str]] = ..., limit: _Optional[int] = ..., older_than_us: _Optional[int] = ...) -> None: ...

class QueueOpReply(_message.Message):
    __slots__ = ("count", "ids", "queue")
    COUNT_FIELD_NUMBER: _ClassVar[int]
    IDS_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    count: int
    ids: _containers.RepeatedScalarFieldContainer[str]
    queue: _queue_service_pb2.QueueInfo
    def __init__(self, count: _Optional[int] = ..., ids: _Optional[_Iterable[str]] = ..., queue: _Optional[_Union[_queue_service_pb2.QueueInfo, _Mapping]] = ...) -> None: ...

class QueueStatusRequest(_message.Message):
    __slots__ = ("queue", "paused_only")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    PAUSED_ONLY_FIELD_NUMBER: _ClassVar[int]
    queue: str
    paused_only: bool
    def __init__(self, queue: _Optional[str] = ..., paused_only: bool = ...) -> None: ...

class QueueStatusReply(_message.Message):
    __slots__ = ("queues", "servers", "capacity", "running_tasks", "late_completions", "paused")
    QUEUES_FIELD_NUMBER: _ClassVar[int]
    SERVERS_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    RUNNING_TASKS_FIELD_NUMBER: _ClassVar[int]
    LATE_COMPLETIONS_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    queues: _containers.RepeatedCompositeFieldContainer[_queue_service_pb2.QueueInfo]
    servers: int
    capacity: int
    running_tasks: int
    late_completions: int
    paused: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, queues: _Optional[_Iterable[_Union[_queue_service_pb2.QueueInfo, _Mapping]]] = ..., servers: _Optional[int] = ..., capacity: _Optional[int] = ..., running_tasks: _Optional[int] = ..., late_completions: _Optional[int] = ..., paused: _Optional[_Iterable[str]] = ...) -> None: ...

class ServersRequest(_message.Message):
    __slots__ = ("max_age_ms",)
    MAX_AGE_MS_FIELD_NUMBER: _ClassVar[int]
    max_age_ms: int
    def __init__(self, max_age_ms: _Optional[int] = ...) -> None: ...

class ServersReply(_message.Message):
    __slots__ = ("servers",)
    SERVERS_FIELD_NUMBER: _ClassVar[int]
    servers: _containers.RepeatedCompositeFieldContainer[_queue_service_pb2.Server]
    def __init__(self, servers: _Optional[_Iterable[_Union[_queue_service_pb2.Server, _Mapping]]] = ...) -> None: ...
