from taskyard.v1 import task_pb2 as _task_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

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

class GetFailuresRequest(_message.Message):
    __slots__ = ("task_ids",)
    TASK_IDS_FIELD_NUMBER: _ClassVar[int]
    task_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, task_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class TaskFailures(_message.Message):
    __slots__ = ("task_id", "failures")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    failures: _containers.RepeatedCompositeFieldContainer[_task_pb2.TaskFailure]
    def __init__(self, task_id: _Optional[str] = ..., failures: _Optional[_Iterable[_Union[_task_pb2.TaskFailure, _Mapping]]] = ...) -> None: ...

class GetFailuresReply(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[TaskFailures]
    def __init__(self, tasks: _Optional[_Iterable[_Union[TaskFailures, _Mapping]]] = ...) -> None: ...

class ExplainFactsRequest(_message.Message):
    __slots__ = ("task_id", "max_age_ms")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    MAX_AGE_MS_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    max_age_ms: int
    def __init__(self, task_id: _Optional[str] = ..., max_age_ms: _Optional[int] = ...) -> None: ...

class ExplainFactsReply(_message.Message):
    __slots__ = ("found", "queue_paused", "pools", "capacity", "running", "depth_ahead", "waiting_on")
    FOUND_FIELD_NUMBER: _ClassVar[int]
    QUEUE_PAUSED_FIELD_NUMBER: _ClassVar[int]
    POOLS_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    DEPTH_AHEAD_FIELD_NUMBER: _ClassVar[int]
    WAITING_ON_FIELD_NUMBER: _ClassVar[int]
    found: bool
    queue_paused: bool
    pools: int
    capacity: int
    running: int
    depth_ahead: int
    waiting_on: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, found: bool = ..., queue_paused: bool = ..., pools: _Optional[int] = ..., capacity: _Optional[int] = ..., running: _Optional[int] = ..., depth_ahead: _Optional[int] = ..., waiting_on: _Optional[_Iterable[str]] = ...) -> None: ...
