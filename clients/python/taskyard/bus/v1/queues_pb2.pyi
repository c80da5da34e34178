from taskyard.bus.v1 import contract_pb2 as _contract_pb2
from taskyard.bus.v1 import tenants_pb2 as _tenants_pb2
from taskyard.v1 import queue_service_pb2 as _queue_service_pb2
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

class QueueOpRequest(_message.Message):
    __slots__ = ("op", "queue", "name", "ids", "limit", "older_than_us", "scope")
    OP_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    IDS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    OLDER_THAN_US_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    op: QueueOp
    queue: str
    name: str
    ids: _containers.RepeatedScalarFieldContainer[str]
    limit: int
    older_than_us: int
    scope: _tenants_pb2.TenantScope
    def __init__(self, op: _Optional[_Union[QueueOp, str]] = ..., queue: _Optional[str] = ..., name: _Optional[str] = ..., ids: _Optional[_Iterable[str]] = ..., limit: _Optional[int] = ..., older_than_us: _Optional[int] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

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
    __slots__ = ("queue", "paused_only", "scope")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    PAUSED_ONLY_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    queue: str
    paused_only: bool
    scope: _tenants_pb2.TenantScope
    def __init__(self, queue: _Optional[str] = ..., paused_only: bool = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

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
