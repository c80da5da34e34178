from taskyard.bus.v1 import contract_pb2 as _contract_pb2
from taskyard.bus.v1 import tenants_pb2 as _tenants_pb2
from taskyard.v1 import event_service_pb2 as _event_service_pb2
from taskyard.v1 import task_pb2 as _task_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ReadEventsRequest(_message.Message):
    __slots__ = ("after", "oldest", "limit")
    AFTER_FIELD_NUMBER: _ClassVar[int]
    OLDEST_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    after: str
    oldest: bool
    limit: int
    def __init__(self, after: _Optional[str] = ..., oldest: bool = ..., limit: _Optional[int] = ...) -> None: ...

class ReadEventsReply(_message.Message):
    __slots__ = ("events", "cursor")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_event_service_pb2.Event]
    cursor: str
    def __init__(self, events: _Optional[_Iterable[_Union[_event_service_pb2.Event, _Mapping]]] = ..., cursor: _Optional[str] = ...) -> None: ...

class SummarizeEventsRequest(_message.Message):
    __slots__ = ("after", "limit", "max_task_ids", "max_entered", "scope")
    AFTER_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    MAX_TASK_IDS_FIELD_NUMBER: _ClassVar[int]
    MAX_ENTERED_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    after: str
    limit: int
    max_task_ids: int
    max_entered: int
    scope: _tenants_pb2.TenantScope
    def __init__(self, after: _Optional[str] = ..., limit: _Optional[int] = ..., max_task_ids: _Optional[int] = ..., max_entered: _Optional[int] = ..., scope: _Optional[_Union[_tenants_pb2.TenantScope, _Mapping]] = ...) -> None: ...

class EnteredState(_message.Message):
    __slots__ = ("queue", "task_name", "state")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    queue: str
    task_name: str
    state: _task_pb2.TaskState
    def __init__(self, queue: _Optional[str] = ..., task_name: _Optional[str] = ..., state: _Optional[_Union[_task_pb2.TaskState, str]] = ...) -> None: ...

class SummarizeEventsReply(_message.Message):
    __slots__ = ("cursor", "caught_up", "events", "task_ids", "entered", "more", "kinds", "schedule_made_task", "finished_states", "finished_at_us", "latency_us")
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    CAUGHT_UP_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    TASK_IDS_FIELD_NUMBER: _ClassVar[int]
    ENTERED_FIELD_NUMBER: _ClassVar[int]
    MORE_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_MADE_TASK_FIELD_NUMBER: _ClassVar[int]
    FINISHED_STATES_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_US_FIELD_NUMBER: _ClassVar[int]
    LATENCY_US_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    caught_up: bool
    events: int
    task_ids: _containers.RepeatedScalarFieldContainer[str]
    entered: _containers.RepeatedCompositeFieldContainer[EnteredState]
    more: bool
    kinds: _containers.RepeatedScalarFieldContainer[_event_service_pb2.EventKind]
    schedule_made_task: bool
    finished_states: _containers.RepeatedScalarFieldContainer[_task_pb2.TaskState]
    finished_at_us: _containers.RepeatedScalarFieldContainer[int]
    latency_us: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, cursor: _Optional[str] = ..., caught_up: bool = ..., events: _Optional[int] = ..., task_ids: _Optional[_Iterable[str]] = ..., entered: _Optional[_Iterable[_Union[EnteredState, _Mapping]]] = ..., more: bool = ..., kinds: _Optional[_Iterable[_Union[_event_service_pb2.EventKind, str]]] = ..., schedule_made_task: bool = ..., finished_states: _Optional[_Iterable[_Union[_task_pb2.TaskState, str]]] = ..., finished_at_us: _Optional[_Iterable[int]] = ..., latency_us: _Optional[_Iterable[int]] = ...) -> None: ...
