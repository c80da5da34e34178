import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from taskyard.v1 import task_pb2 as _task_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SubmitTaskRequest(_message.Message):
    __slots__ = ("task",)
    TASK_FIELD_NUMBER: _ClassVar[int]
    task: _task_pb2.TaskSpec
    def __init__(self, task: _Optional[_Union[_task_pb2.TaskSpec, _Mapping]] = ...) -> None: ...

class SubmitTaskResponse(_message.Message):
    __slots__ = ("task", "created")
    TASK_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    task: _task_pb2.Task
    created: bool
    def __init__(self, task: _Optional[_Union[_task_pb2.Task, _Mapping]] = ..., created: bool = ...) -> None: ...

class BatchSubmitTasksRequest(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_task_pb2.TaskSpec]
    def __init__(self, tasks: _Optional[_Iterable[_Union[_task_pb2.TaskSpec, _Mapping]]] = ...) -> None: ...

class SubmittedTask(_message.Message):
    __slots__ = ("id", "state", "created")
    ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    id: str
    state: _task_pb2.TaskState
    created: bool
    def __init__(self, id: _Optional[str] = ..., state: _Optional[_Union[_task_pb2.TaskState, str]] = ..., created: bool = ...) -> None: ...

class BatchSubmitTasksResponse(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[SubmittedTask]
    def __init__(self, tasks: _Optional[_Iterable[_Union[SubmittedTask, _Mapping]]] = ...) -> None: ...

class GetTaskRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class GetTaskResponse(_message.Message):
    __slots__ = ("task",)
    TASK_FIELD_NUMBER: _ClassVar[int]
    task: _task_pb2.Task
    def __init__(self, task: _Optional[_Union[_task_pb2.Task, _Mapping]] = ...) -> None: ...

class WaitTaskRequest(_message.Message):
    __slots__ = ("id", "timeout")
    ID_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    id: str
    timeout: _duration_pb2.Duration
    def __init__(self, id: _Optional[str] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class WaitTaskResponse(_message.Message):
    __slots__ = ("task", "timed_out")
    TASK_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    task: _task_pb2.Task
    timed_out: bool
    def __init__(self, task: _Optional[_Union[_task_pb2.Task, _Mapping]] = ..., timed_out: bool = ...) -> None: ...

class ListTasksRequest(_message.Message):
    __slots__ = ("states", "name", "queue", "priority", "page_size", "page_token")
    STATES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    states: _containers.RepeatedScalarFieldContainer[_task_pb2.TaskState]
    name: str
    queue: str
    priority: _task_pb2.Priority
    page_size: int
    page_token: str
    def __init__(self, states: _Optional[_Iterable[_Union[_task_pb2.TaskState, str]]] = ..., name: _Optional[str] = ..., queue: _Optional[str] = ..., priority: _Optional[_Union[_task_pb2.Priority, str]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListTasksResponse(_message.Message):
    __slots__ = ("tasks", "next_page_token")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_task_pb2.Task]
    next_page_token: str
    def __init__(self, tasks: _Optional[_Iterable[_Union[_task_pb2.Task, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class CancelTaskRequest(_message.Message):
    __slots__ = ("id", "reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    reason: str
    def __init__(self, id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CancelTaskResponse(_message.Message):
    __slots__ = ("task", "cancelled")
    TASK_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    task: _task_pb2.Task
    cancelled: bool
    def __init__(self, task: _Optional[_Union[_task_pb2.Task, _Mapping]] = ..., cancelled: bool = ...) -> None: ...
