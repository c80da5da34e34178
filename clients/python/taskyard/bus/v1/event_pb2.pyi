from google.protobuf import empty_pb2 as _empty_pb2
from taskyard.bus.v1 import contract_pb2 as _contract_pb2
from taskyard.bus.v1 import task_record_pb2 as _task_record_pb2
from taskyard.v1 import task_pb2 as _task_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EventBatch(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[Event]
    def __init__(self, events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("type", "task_id", "state", "attempt", "name", "at_us", "worker_id", "priority", "record", "log_seq", "run_at_us", "queue", "root_id", "attributes")
    class AttributesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TYPE_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    AT_US_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    LOG_SEQ_FIELD_NUMBER: _ClassVar[int]
    RUN_AT_US_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    ROOT_ID_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    type: str
    task_id: str
    state: _task_pb2.TaskState
    attempt: int
    name: str
    at_us: int
    worker_id: str
    priority: _task_pb2.Priority
    record: _task_record_pb2.TaskRecord
    log_seq: int
    run_at_us: int
    queue: str
    root_id: str
    attributes: _containers.ScalarMap[str, str]
    def __init__(self, type: _Optional[str] = ..., task_id: _Optional[str] = ..., state: _Optional[_Union[_task_pb2.TaskState, str]] = ..., attempt: _Optional[int] = ..., name: _Optional[str] = ..., at_us: _Optional[int] = ..., worker_id: _Optional[str] = ..., priority: _Optional[_Union[_task_pb2.Priority, str]] = ..., record: _Optional[_Union[_task_record_pb2.TaskRecord, _Mapping]] = ..., log_seq: _Optional[int] = ..., run_at_us: _Optional[int] = ..., queue: _Optional[str] = ..., root_id: _Optional[str] = ..., attributes: _Optional[_Mapping[str, str]] = ...) -> None: ...
