import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from taskyard.v1 import limit_pb2 as _limit_pb2
from taskyard.v1 import task_pb2 as _task_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class WaitReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WAIT_REASON_UNSPECIFIED: _ClassVar[WaitReason]
    WAIT_REASON_RUNNING: _ClassVar[WaitReason]
    WAIT_REASON_FINAL: _ClassVar[WaitReason]
    WAIT_REASON_ETA: _ClassVar[WaitReason]
    WAIT_REASON_DEPENDENCY: _ClassVar[WaitReason]
    WAIT_REASON_RETRY_DELAY: _ClassVar[WaitReason]
    WAIT_REASON_QUEUE_PAUSED: _ClassVar[WaitReason]
    WAIT_REASON_NO_POOL: _ClassVar[WaitReason]
    WAIT_REASON_SLOTS_BUSY: _ClassVar[WaitReason]
    WAIT_REASON_DISPATCHING: _ClassVar[WaitReason]
    WAIT_REASON_RATE_LIMITED: _ClassVar[WaitReason]
    WAIT_REASON_CONCURRENCY_FULL: _ClassVar[WaitReason]
    WAIT_REASON_FAIR_SHARE: _ClassVar[WaitReason]
    WAIT_REASON_BREAKER_OPEN: _ClassVar[WaitReason]
    WAIT_REASON_TENANT_SUSPENDED: _ClassVar[WaitReason]
    WAIT_REASON_TENANT_QUOTA: _ClassVar[WaitReason]
WAIT_REASON_UNSPECIFIED: WaitReason
WAIT_REASON_RUNNING: WaitReason
WAIT_REASON_FINAL: WaitReason
WAIT_REASON_ETA: WaitReason
WAIT_REASON_DEPENDENCY: WaitReason
WAIT_REASON_RETRY_DELAY: WaitReason
WAIT_REASON_QUEUE_PAUSED: WaitReason
WAIT_REASON_NO_POOL: WaitReason
WAIT_REASON_SLOTS_BUSY: WaitReason
WAIT_REASON_DISPATCHING: WaitReason
WAIT_REASON_RATE_LIMITED: WaitReason
WAIT_REASON_CONCURRENCY_FULL: WaitReason
WAIT_REASON_FAIR_SHARE: WaitReason
WAIT_REASON_BREAKER_OPEN: WaitReason
WAIT_REASON_TENANT_SUSPENDED: WaitReason
WAIT_REASON_TENANT_QUOTA: WaitReason

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

class RunTaskRequest(_message.Message):
    __slots__ = ("task", "timeout")
    TASK_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    task: _task_pb2.TaskSpec
    timeout: _duration_pb2.Duration
    def __init__(self, task: _Optional[_Union[_task_pb2.TaskSpec, _Mapping]] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class RunTaskResponse(_message.Message):
    __slots__ = ("task", "created", "final")
    TASK_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    FINAL_FIELD_NUMBER: _ClassVar[int]
    task: _task_pb2.Task
    created: bool
    final: bool
    def __init__(self, task: _Optional[_Union[_task_pb2.Task, _Mapping]] = ..., created: bool = ..., final: bool = ...) -> None: ...

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
    __slots__ = ("id", "reason", "wait")
    ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    id: str
    reason: str
    wait: _duration_pb2.Duration
    def __init__(self, id: _Optional[str] = ..., reason: _Optional[str] = ..., wait: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class CancelTaskResponse(_message.Message):
    __slots__ = ("task", "cancelled", "step", "cancelled_children")
    TASK_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_CHILDREN_FIELD_NUMBER: _ClassVar[int]
    task: _task_pb2.Task
    cancelled: bool
    step: _task_pb2.CancelStep
    cancelled_children: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, task: _Optional[_Union[_task_pb2.Task, _Mapping]] = ..., cancelled: bool = ..., step: _Optional[_Union[_task_pb2.CancelStep, str]] = ..., cancelled_children: _Optional[_Iterable[str]] = ...) -> None: ...

class GetTaskTreeRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class TaskTreeNode(_message.Message):
    __slots__ = ("task", "depth", "path")
    TASK_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    task: _task_pb2.Task
    depth: int
    path: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, task: _Optional[_Union[_task_pb2.Task, _Mapping]] = ..., depth: _Optional[int] = ..., path: _Optional[_Iterable[str]] = ...) -> None: ...

class GetTaskTreeResponse(_message.Message):
    __slots__ = ("nodes", "root_id", "truncated")
    NODES_FIELD_NUMBER: _ClassVar[int]
    ROOT_ID_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[TaskTreeNode]
    root_id: str
    truncated: bool
    def __init__(self, nodes: _Optional[_Iterable[_Union[TaskTreeNode, _Mapping]]] = ..., root_id: _Optional[str] = ..., truncated: bool = ...) -> None: ...

class ExplainTaskRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class ExplainTaskResponse(_message.Message):
    __slots__ = ("task", "reason", "message", "until", "waiting_on", "lane_depth_ahead", "gate")
    TASK_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    WAITING_ON_FIELD_NUMBER: _ClassVar[int]
    LANE_DEPTH_AHEAD_FIELD_NUMBER: _ClassVar[int]
    GATE_FIELD_NUMBER: _ClassVar[int]
    task: _task_pb2.Task
    reason: WaitReason
    message: str
    until: _timestamp_pb2.Timestamp
    waiting_on: _containers.RepeatedScalarFieldContainer[str]
    lane_depth_ahead: int
    gate: _limit_pb2.FlowGate
    def __init__(self, task: _Optional[_Union[_task_pb2.Task, _Mapping]] = ..., reason: _Optional[_Union[WaitReason, str]] = ..., message: _Optional[str] = ..., until: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., waiting_on: _Optional[_Iterable[str]] = ..., lane_depth_ahead: _Optional[int] = ..., gate: _Optional[_Union[_limit_pb2.FlowGate, _Mapping]] = ...) -> None: ...

class GetTaskLogsRequest(_message.Message):
    __slots__ = ("id", "from_offset", "page_size")
    ID_FIELD_NUMBER: _ClassVar[int]
    FROM_OFFSET_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    id: str
    from_offset: int
    page_size: int
    def __init__(self, id: _Optional[str] = ..., from_offset: _Optional[int] = ..., page_size: _Optional[int] = ...) -> None: ...

class GetTaskLogsResponse(_message.Message):
    __slots__ = ("logs", "next_offset", "complete")
    LOGS_FIELD_NUMBER: _ClassVar[int]
    NEXT_OFFSET_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    logs: _containers.RepeatedCompositeFieldContainer[_task_pb2.TaskLog]
    next_offset: int
    complete: bool
    def __init__(self, logs: _Optional[_Iterable[_Union[_task_pb2.TaskLog, _Mapping]]] = ..., next_offset: _Optional[int] = ..., complete: bool = ...) -> None: ...

class StreamTaskLogsRequest(_message.Message):
    __slots__ = ("id", "from_offset")
    ID_FIELD_NUMBER: _ClassVar[int]
    FROM_OFFSET_FIELD_NUMBER: _ClassVar[int]
    id: str
    from_offset: int
    def __init__(self, id: _Optional[str] = ..., from_offset: _Optional[int] = ...) -> None: ...

class StreamTaskLogsResponse(_message.Message):
    __slots__ = ("logs",)
    LOGS_FIELD_NUMBER: _ClassVar[int]
    logs: _containers.RepeatedCompositeFieldContainer[_task_pb2.TaskLog]
    def __init__(self, logs: _Optional[_Iterable[_Union[_task_pb2.TaskLog, _Mapping]]] = ...) -> None: ...
