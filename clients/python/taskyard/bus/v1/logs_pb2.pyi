from taskyard.bus.v1 import contract_pb2 as _contract_pb2
from taskyard.bus.v1 import tenants_pb2 as _tenants_pb2
from taskyard.v1 import task_pb2 as _task_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

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
    __slots__ = ("task_id", "from_offset", "limit", "scope")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_OFFSET_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    from_offset: int
    limit: int
    scope: _tenants_pb2.TenantScope
    def __init__(self, task_id: _Optional[str] = ..., from_offset: _Optional[int] = ..., limit: _Optional[int] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

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
