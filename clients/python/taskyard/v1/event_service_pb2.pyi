import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from taskyard.v1 import task_pb2 as _task_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class WatchStart(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WATCH_START_UNSPECIFIED: _ClassVar[WatchStart]
    WATCH_START_NOW: _ClassVar[WatchStart]
    WATCH_START_OLDEST: _ClassVar[WatchStart]

class EventKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVENT_KIND_UNSPECIFIED: _ClassVar[EventKind]
    EVENT_KIND_TASK: _ClassVar[EventKind]
    EVENT_KIND_WORKER: _ClassVar[EventKind]
    EVENT_KIND_POOL: _ClassVar[EventKind]
    EVENT_KIND_QUEUE: _ClassVar[EventKind]
    EVENT_KIND_SCHEDULE: _ClassVar[EventKind]
    EVENT_KIND_LIMIT: _ClassVar[EventKind]
    EVENT_KIND_BREAKER: _ClassVar[EventKind]
    EVENT_KIND_TENANT: _ClassVar[EventKind]
WATCH_START_UNSPECIFIED: WatchStart
WATCH_START_NOW: WatchStart
WATCH_START_OLDEST: WatchStart
EVENT_KIND_UNSPECIFIED: EventKind
EVENT_KIND_TASK: EventKind
EVENT_KIND_WORKER: EventKind
EVENT_KIND_POOL: EventKind
EVENT_KIND_QUEUE: EventKind
EVENT_KIND_SCHEDULE: EventKind
EVENT_KIND_LIMIT: EventKind
EVENT_KIND_BREAKER: EventKind
EVENT_KIND_TENANT: EventKind

class WatchEventsRequest(_message.Message):
    __slots__ = ("after", "start", "kinds", "queues", "task_names", "states", "task_ids", "root_ids")
    AFTER_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    QUEUES_FIELD_NUMBER: _ClassVar[int]
    TASK_NAMES_FIELD_NUMBER: _ClassVar[int]
    STATES_FIELD_NUMBER: _ClassVar[int]
    TASK_IDS_FIELD_NUMBER: _ClassVar[int]
    ROOT_IDS_FIELD_NUMBER: _ClassVar[int]
    after: str
    start: WatchStart
    kinds: _containers.RepeatedScalarFieldContainer[EventKind]
    queues: _containers.RepeatedScalarFieldContainer[str]
    task_names: _containers.RepeatedScalarFieldContainer[str]
    states: _containers.RepeatedScalarFieldContainer[_task_pb2.TaskState]
    task_ids: _containers.RepeatedScalarFieldContainer[str]
    root_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, after: _Optional[str] = ..., start: _Optional[_Union[WatchStart, str]] = ..., kinds: _Optional[_Iterable[_Union[EventKind, str]]] = ..., queues: _Optional[_Iterable[str]] = ..., task_names: _Optional[_Iterable[str]] = ..., states: _Optional[_Iterable[_Union[_task_pb2.TaskState, str]]] = ..., task_ids: _Optional[_Iterable[str]] = ..., root_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("cursor", "kind", "type", "time", "task_id", "task_name", "queue", "state", "attempt", "root_id", "priority", "worker_id", "pool_id", "schedule_id", "schedule_name", "attributes", "tenant")
    class AttributesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_NAME_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    ROOT_ID_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_ID_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_NAME_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    kind: EventKind
    type: str
    time: _timestamp_pb2.Timestamp
    task_id: str
    task_name: str
    queue: str
    state: _task_pb2.TaskState
    attempt: int
    root_id: str
    priority: _task_pb2.Priority
    worker_id: str
    pool_id: str
    schedule_id: str
    schedule_name: str
    attributes: _containers.ScalarMap[str, str]
    tenant: str
    def __init__(self, cursor: _Optional[str] = ..., kind: _Optional[_Union[EventKind, str]] = ..., type: _Optional[str] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., task_id: _Optional[str] = ..., task_name: _Optional[str] = ..., queue: _Optional[str] = ..., state: _Optional[_Union[_task_pb2.TaskState, str]] = ..., attempt: _Optional[int] = ..., root_id: _Optional[str] = ..., priority: _Optional[_Union[_task_pb2.Priority, str]] = ..., worker_id: _Optional[str] = ..., pool_id: _Optional[str] = ..., schedule_id: _Optional[str] = ..., schedule_name: _Optional[str] = ..., attributes: _Optional[_Mapping[str, str]] = ..., tenant: _Optional[str] = ...) -> None: ...

class WatchEventsResponse(_message.Message):
    __slots__ = ("events", "cursor")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[Event]
    cursor: str
    def __init__(self, events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., cursor: _Optional[str] = ...) -> None: ...
