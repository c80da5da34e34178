from google.protobuf import empty_pb2 as _empty_pb2
from taskyard.bus.v1 import contract_pb2 as _contract_pb2
from taskyard.bus.v1 import lanes_pb2 as _lanes_pb2
from taskyard.bus.v1 import task_record_pb2 as _task_record_pb2
from taskyard.bus.v1 import tenants_pb2 as _tenants_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ResolveRequest(_message.Message):
    __slots__ = ("final_ids", "candidate_ids")
    FINAL_IDS_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_IDS_FIELD_NUMBER: _ClassVar[int]
    final_ids: _containers.RepeatedScalarFieldContainer[str]
    candidate_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, final_ids: _Optional[_Iterable[str]] = ..., candidate_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class ResolveReply(_message.Message):
    __slots__ = ("queued", "scheduled", "cancelled")
    QUEUED_FIELD_NUMBER: _ClassVar[int]
    SCHEDULED_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    queued: _containers.RepeatedCompositeFieldContainer[_lanes_pb2.QueuedRef]
    scheduled: _containers.RepeatedScalarFieldContainer[str]
    cancelled: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, queued: _Optional[_Iterable[_Union[_lanes_pb2.QueuedRef, _Mapping]]] = ..., scheduled: _Optional[_Iterable[str]] = ..., cancelled: _Optional[_Iterable[str]] = ...) -> None: ...

class ReleasedTasks(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_lanes_pb2.QueuedRef]
    def __init__(self, tasks: _Optional[_Iterable[_Union[_lanes_pb2.QueuedRef, _Mapping]]] = ...) -> None: ...

class TaskTreeRequest(_message.Message):
    __slots__ = ("id", "limit", "scope")
    ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    id: str
    limit: int
    scope: _tenants_pb2.TenantScope
    def __init__(self, id: _Optional[str] = ..., limit: _Optional[int] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class TaskTreeNode(_message.Message):
    __slots__ = ("task", "depth", "path")
    TASK_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    task: _task_record_pb2.TaskRecord
    depth: int
    path: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, task: _Optional[_Union[_task_record_pb2.TaskRecord, _Mapping]] = ..., depth: _Optional[int] = ..., path: _Optional[_Iterable[str]] = ...) -> None: ...

class TaskTreeReply(_message.Message):
    __slots__ = ("found", "root_id", "nodes", "truncated")
    FOUND_FIELD_NUMBER: _ClassVar[int]
    ROOT_ID_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    found: bool
    root_id: str
    nodes: _containers.RepeatedCompositeFieldContainer[TaskTreeNode]
    truncated: bool
    def __init__(self, found: bool = ..., root_id: _Optional[str] = ..., nodes: _Optional[_Iterable[_Union[TaskTreeNode, _Mapping]]] = ..., truncated: bool = ...) -> None: ...
