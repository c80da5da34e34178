from taskyard.bus.v1 import contract_pb2 as _contract_pb2
from taskyard.bus.v1 import task_record_pb2 as _task_record_pb2
from taskyard.bus.v1 import tasks_pb2 as _tasks_pb2
from taskyard.v1 import task_pb2 as _task_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TaskRecordHead(_message.Message):
    __slots__ = ("id", "name", "priority", "queue", "state", "attempt", "run_at_us", "trace_headers", "lease_token", "hops", "flow", "tenant")
    class TraceHeadersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    RUN_AT_US_FIELD_NUMBER: _ClassVar[int]
    TRACE_HEADERS_FIELD_NUMBER: _ClassVar[int]
    LEASE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    HOPS_FIELD_NUMBER: _ClassVar[int]
    FLOW_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    priority: _task_pb2.Priority
    queue: str
    state: _task_pb2.TaskState
    attempt: int
    run_at_us: int
    trace_headers: _containers.ScalarMap[str, str]
    lease_token: str
    hops: _containers.RepeatedCompositeFieldContainer[_task_record_pb2.HopStamp]
    flow: _task_record_pb2.FlowControl
    tenant: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., priority: _Optional[_Union[_task_pb2.Priority, str]] = ..., queue: _Optional[str] = ..., state: _Optional[_Union[_task_pb2.TaskState, str]] = ..., attempt: _Optional[int] = ..., run_at_us: _Optional[int] = ..., trace_headers: _Optional[_Mapping[str, str]] = ..., lease_token: _Optional[str] = ..., hops: _Optional[_Iterable[_Union[_task_record_pb2.HopStamp, _Mapping]]] = ..., flow: _Optional[_Union[_task_record_pb2.FlowControl, _Mapping]] = ..., tenant: _Optional[str] = ...) -> None: ...

class TaskRecordHeads(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[TaskRecordHead]
    def __init__(self, tasks: _Optional[_Iterable[_Union[TaskRecordHead, _Mapping]]] = ...) -> None: ...

class InsertTasksReplyView(_message.Message):
    __slots__ = ("tasks", "leased")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    LEASED_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_tasks_pb2.InsertedTask]
    leased: _containers.RepeatedCompositeFieldContainer[TaskRecordHead]
    def __init__(self, tasks: _Optional[_Iterable[_Union[_tasks_pb2.InsertedTask, _Mapping]]] = ..., leased: _Optional[_Iterable[_Union[TaskRecordHead, _Mapping]]] = ...) -> None: ...
