from taskyard.bus.v1 import contract_pb2 as _contract_pb2
from taskyard.bus.v1 import task_record_pb2 as _task_record_pb2
from taskyard.v1 import task_pb2 as _task_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LoadQueuedRequest(_message.Message):
    __slots__ = ("limit", "cursor")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    limit: int
    cursor: str
    def __init__(self, limit: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class QueuedRef(_message.Message):
    __slots__ = ("id", "name", "priority", "queue", "created_at_us", "flow", "tenant")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_US_FIELD_NUMBER: _ClassVar[int]
    FLOW_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    priority: _task_pb2.Priority
    queue: str
    created_at_us: int
    flow: _task_record_pb2.FlowControl
    tenant: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., priority: _Optional[_Union[_task_pb2.Priority, str]] = ..., queue: _Optional[str] = ..., created_at_us: _Optional[int] = ..., flow: _Optional[_Union[_task_record_pb2.FlowControl, _Mapping]] = ..., tenant: _Optional[str] = ...) -> None: ...

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

class LoadDueRequest(_message.Message):
    __slots__ = ("window_ms", "limit")
    WINDOW_MS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    window_ms: int
    limit: int
    def __init__(self, window_ms: _Optional[int] = ..., limit: _Optional[int] = ...) -> None: ...

class DueRef(_message.Message):
    __slots__ = ("id", "run_at_us")
    ID_FIELD_NUMBER: _ClassVar[int]
    RUN_AT_US_FIELD_NUMBER: _ClassVar[int]
    id: str
    run_at_us: int
    def __init__(self, id: _Optional[str] = ..., run_at_us: _Optional[int] = ...) -> None: ...

class LoadDueReply(_message.Message):
    __slots__ = ("tasks", "now_us", "truncated")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    NOW_US_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[DueRef]
    now_us: int
    truncated: bool
    def __init__(self, tasks: _Optional[_Iterable[_Union[DueRef, _Mapping]]] = ..., now_us: _Optional[int] = ..., truncated: bool = ...) -> None: ...
